"""The site's settings with Django's native PostgreSQL connection pool on (bench_cinema_booking.py's second server).

`OPTIONS["pool"]` needs psycopg_pool and CONN_MAX_AGE 0 (the site's default)."""

from mcpsite.settings import *  # noqa: F403
from mcpsite.settings import DATABASES

DATABASES["default"].setdefault("OPTIONS", {})["pool"] = True
