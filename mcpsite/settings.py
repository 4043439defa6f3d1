"""mcpsite settings: everything comes from the environment, with safe defaults for a laptop.

Values are read here once; `mcpsite/checks.py` and each app's `checks.py` validate them so a bad
configuration stops `manage.py check` with a clear message.
"""

import ipaddress
import os
from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("MCPSITE_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_raw(name: str, default):
    """The raw string when set, else the default; converted and validated by the system checks."""
    return os.environ.get(name, default)


DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    # A per-checkout key on first run; production sets DJANGO_SECRET_KEY.
    _key_file = VAR_DIR / "secret_key"
    if not _key_file.exists():
        import secrets

        _key_file.write_text(secrets.token_urlsafe(50))
        _key_file.chmod(0o600)
    SECRET_KEY = _key_file.read_text().strip()
# Rotation: the new key in DJANGO_SECRET_KEY, the old ones here (comma-separated) until what they signed or sealed
# has expired (sessions, MCP request states: docs/production.md).
SECRET_KEY_FALLBACKS = env_list("DJANGO_SECRET_KEY_FALLBACKS")

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")
# Web pages (`https://host[:port]`, comma-separated) whose scripts may call /mcp, the seed endpoints and the OAuth
# endpoints (mcpsite/cors.py); none by default. Also accepted as an MCP request's Origin (DNS-rebinding protection).
CORS_ALLOWED_ORIGINS = [origin.lower().rstrip("/") for origin in env_list("CORS_ALLOWED_ORIGINS")]

# --- security (docs/security.md): production defaults whenever DEBUG is off ---
# HSTS is sent only on HTTPS responses, so a laptop on http://127.0.0.1 is unaffected.
SECURE_HSTS_SECONDS = int(env_raw("DJANGO_SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
# Off unless set: TLS usually ends at a proxy, which redirects itself, and `make demo` serves plain HTTP.
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto (and strips it from clients).
if env_bool("DJANGO_SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Browsers keep Secure cookies on http://localhost too (tested), so the demo's admin still signs in.
SESSION_COOKIE_SECURE = env_bool("DJANGO_SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("DJANGO_CSRF_COOKIE_SECURE", not DEBUG)
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Django's CSP: scripts only from this site or with the page's nonce (the admin's templates carry it);
# inline styles are allowed for the admin pages' <style> blocks and style attributes (reports, seat maps).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "rest_framework",
    "mcpsite",  # before django_tasks_db: its db_worker command wraps the library's (mcpsite/management/commands)
    "mcpsite.apps.TasksDbConfig",  # django_tasks_db and axes under names the staff's language can translate
    "mcpsite.apps.AxesConfig",
    "cinema",
    "ledger",
    "geo",
    "merchant",
    "reminders",
    "oauth2_provider",
    "mcpsite_oauth",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Serves the admin's static files under uvicorn (collected into STATIC_ROOT by `make demo`).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The staff's language: the browser's Accept-Language among LANGUAGES, else LANGUAGE_CODE.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # A bad value in an admin page's address is a 400 that says so, not a 500 (mcpsite/admin_pages.py).
    "mcpsite.admin_pages.AdminAddressValueMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "axes.middleware.AxesMiddleware",  # last: answers a locked-out sign-in (see the login throttle below)
]

ROOT_URLCONF = "mcpsite.urls"
WSGI_APPLICATION = "mcpsite.wsgi.application"
ASGI_APPLICATION = "mcpsite.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
            ],
        },
    },
]

# Database: SQLite in var/ unless DATABASE_URL says otherwise (PostgreSQL in production).
# Connections are kept: a fresh one per tool call would cost the MCP path a connect and, on SQLite, a WAL
# checkpoint at every close.
DATABASE_URL_FORMS = "sqlite:///path, postgres://user:pass@host/db (postgresql://, or a SQLAlchemy +driver form)"


def _database(url: str) -> dict:
    """dj-database-url's settings for `url`; SQLAlchemy's `scheme+driver://` (the merchant seed's
    `sqlite+aiosqlite:///…`) names the same database, so the driver part is dropped."""
    scheme, sep, rest = url.partition("://")
    base = scheme.split("+", 1)[0].lower()
    if base in ("sqlite", "postgres", "postgresql"):
        url = f"{base}{sep}{rest}"
    try:
        return dict(dj_database_url.parse(url))
    except ValueError:  # dj_database_url.UnknownSchemeError included
        raise ImproperlyConfigured(
            f"DATABASE_URL scheme {scheme!r} is not supported; use {DATABASE_URL_FORMS}"
        ) from None


DATABASES = {"default": _database(env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'mcpsite.sqlite3'}"))}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's native pool (psycopg_pool): worker threads borrow a connection per call and give it back.
    # Sized above the tool thread pools (MCP_TOOL_THREADS + MCP_UPSTREAM_THREADS) so no call waits for one.
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps the connections (Django refuses both)
    DATABASES["default"]["OPTIONS"] = {
        "pool": {"min_size": 2, "max_size": int(env_raw("DATABASE_POOL_SIZE", 24)), "timeout": 10}
    }
    if env_bool("DATABASE_SERVER_SIDE_BINDING", True):
        # Values bound by the server, and a statement prepared on its connection from its second run (psycopg
        # keeps the last 100 per connection, and forgets them at a rollback): PostgreSQL parses and plans a hot
        # path's statements once per pooled connection instead of at every run (a large share of a booking's
        # CPU: README, Speed, cinema). Not from the first run: a string of several commands (a
        # migration's) cannot be prepared. Off behind a transaction-mode pooler that does not track prepared
        # statements (PgBouncer before 1.21, or with max_prepared_statements 0).
        DATABASES["default"]["OPTIONS"] |= {"server_side_binding": True, "prepare_threshold": 1}
# Bounded waits on PostgreSQL (docs/production.md, "Timeouts"): a statement runs at most DATABASE_STATEMENT_TIMEOUT
# seconds and waits at most DATABASE_LOCK_TIMEOUT for a lock (0: no limit), set on each connection by libpq's
# `options`. The lock timeout stays below the pool's wait (10 s): calls queued behind a table's lock give their
# connections back before calls that never touch that table give up waiting for one. A pooled connection is checked
# before it is lent (after a restart of PostgreSQL every idle one is dead; unchecked, each would fail one call).
DATABASE_STATEMENT_TIMEOUT = env_raw("DATABASE_STATEMENT_TIMEOUT", "30")
DATABASE_LOCK_TIMEOUT = env_raw("DATABASE_LOCK_TIMEOUT", "5")


def _milliseconds(raw: str) -> int | None:
    try:
        value = float(raw)
    except ValueError:
        return None  # the system check (mcpsite.E040) names it
    return round(value * 1000) if value >= 0 else None


if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    from psycopg_pool import ConnectionPool

    DATABASES["default"]["OPTIONS"]["pool"]["check"] = ConnectionPool.check_connection
    _waits = {"statement_timeout": DATABASE_STATEMENT_TIMEOUT, "lock_timeout": DATABASE_LOCK_TIMEOUT}
    DATABASES["default"]["OPTIONS"]["options"] = " ".join(
        f"-c {name}={ms}" for name, raw in _waits.items() if (ms := _milliseconds(str(raw))) is not None
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["CONN_MAX_AGE"] = None  # one connection per thread for the thread's life
    # IMMEDIATE takes the write lock at BEGIN, so concurrent writers queue instead of failing on
    # lock upgrade; WAL lets readers run beside the writer.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["TEST"] = {"NAME": env_str("SQLITE_TEST_NAME", "") or None}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Cache: shared between processes. The database cache by default, Redis when set (which then also counts the
# rate limits: mcpsite/core/limits.py).
# URLs that may carry passwords are read into lower-case names: Django exposes only upper-case
# settings (e.g. on DEBUG error pages), and the parsed forms below keep passwords under keys its
# exception reporter masks.
_redis_url = env_str("REDIS_URL") or env_str("CACHE_URL")


def _redis_cache(url: str, **extra) -> dict:
    """A django-redis cache; the password moves from the URL to OPTIONS, where error pages mask it."""
    parts = urlsplit(url)
    options = {"CLIENT_CLASS": "django_redis.client.DefaultClient"}
    if parts.password:
        options["PASSWORD"] = unquote(parts.password)
        host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname or ""
        netloc = (f"{parts.username}@" if parts.username else "") + host + (f":{parts.port}" if parts.port else "")
        url = parts._replace(netloc=netloc).geturl()
    return {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": url, "OPTIONS": options, **extra}


if _redis_url:
    CACHES = {
        "default": _redis_cache(_redis_url),
        # Resolved GaluchatAPI points, shared by every process.
        "geo": _redis_cache(_redis_url, KEY_PREFIX="geo"),
    }
else:
    CACHES = {
        # Rate limits count in tables of their own (mcpsite/core/limits.py), not in this cache.
        "default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "mcpsite_cache"},
        # Resolved points: up to 10,000 per call, too many for row-per-key database writes; kept per
        # process here, shared through Redis when REDIS_URL is set.
        "geo": {
            "BACKEND": "geo.pointcache.PointMemoryCache",  # an in-memory LRU with batched get_many/set_many
            "LOCATION": "geo-points",
            "OPTIONS": {"MAX_ENTRIES": 200_000},
        },
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Argon2id at the OWASP minimum first (see DESIGN.md: Django's defaults cap bookings at ~6/s here).
PASSWORD_HASHERS = [
    "mcpsite.hashers.OwaspArgon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
# Reservation passwords are hashed and checked on this many threads per process (mcpsite/hashers.py): one per core
# this process may run on, so the hashes never outnumber the cores that compute them.
PASSWORD_HASH_THREADS = int(env_raw("PASSWORD_HASH_THREADS", len(os.sched_getaffinity(0))))

LANGUAGE_CODE = env_str("DJANGO_LANGUAGE_CODE", "ja")
LANGUAGES = [("ja", "日本語"), ("en", "English")]
# The project's one catalogue (locale/ja/LC_MESSAGES/django.po; English is the source language).
LOCALE_PATHS = [BASE_DIR / "locale"]
# The staff's one date and time style per language (weekdays on days, no seconds): mcpsite/formats/.
FORMAT_MODULE_PATH = ["mcpsite.formats"]
TIME_ZONE = "Asia/Tokyo"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # WhiteNoise warns on every request until collectstatic has run
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Compressed copies served by WhiteNoise; no manifest, so templates render before collectstatic.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Mail: EMAIL_URL (smtp://user:pass@host:port?tls=1, console://, file:///path); the file backend by
# default so a first run can show what was sent.
_email_url = env_str("EMAIL_URL", f"file://{VAR_DIR / 'mail'}")


def _mailer(url: str) -> dict:
    """EMAIL_URL -> a Django 6.1 MAILERS entry."""
    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    backends = {
        "smtp": "django.core.mail.backends.smtp.EmailBackend",
        "submission": "django.core.mail.backends.smtp.EmailBackend",
        "console": "django.core.mail.backends.console.EmailBackend",
        "file": "django.core.mail.backends.filebased.EmailBackend",
        "locmem": "django.core.mail.backends.locmem.EmailBackend",
        "dummy": "django.core.mail.backends.dummy.EmailBackend",
    }
    options: dict = {}
    if parts.scheme == "file":
        options["file_path"] = unquote(parts.path)
    if parts.scheme in {"smtp", "submission"}:
        options = {
            "host": parts.hostname or "localhost",
            "port": parts.port or (587 if parts.scheme == "submission" else 25),
            "username": unquote(parts.username or ""),
            "password": unquote(parts.password or ""),
            "use_tls": query.get("tls", "0") in {"1", "true"} or parts.scheme == "submission",
            "use_ssl": query.get("ssl", "0") in {"1", "true"},
        }
    return {"BACKEND": backends.get(parts.scheme, parts.scheme), "OPTIONS": options}


MAILERS = {"default": _mailer(_email_url)}
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "mcpsite <noreply@localhost>")

# Tasks: the database backend and its db_worker deliver messages and reminders.
TASKS = {"default": {"BACKEND": env_str("TASKS_BACKEND", "django_tasks_db.DatabaseBackend")}}

# --- the MCP platform ---
MCP_SERVER_NAME = "mcpsite"
MCP_REQUIRE_API_KEY = env_bool("MCP_REQUIRE_API_KEY", True)
MCP_DEFAULT_RATE = env_str("MCP_DEFAULT_RATE", "100/m")
# A key authenticated by the HTTP and WebSocket transports is trusted for this many seconds without a query
# (mcpsite.mcp.auth.RecentKeys): the most a key revoked in another process keeps working. 0: look up every request.
MCP_API_KEY_CACHE_SECONDS = float(env_raw("MCP_API_KEY_CACHE_SECONDS", 5))
MCP_MAX_BODY_BYTES = int(env_raw("MCP_MAX_BODY_BYTES", 1_000_000))
MCP_MAX_BATCH = int(env_raw("MCP_MAX_BATCH", 50))
# Stateless Streamable HTTP by default: any process or host answers any request (docs/production.md).
MCP_STATELESS_HTTP = env_bool("MCP_STATELESS_HTTP", True)
# Answer a POST with one JSON body rather than an SSE stream, which costs a read-only call a share of its throughput
# (bench/bench_serving.py). MCP_JSON_RESPONSE=0 streams (progress notifications on the POST's stream).
MCP_JSON_RESPONSE = env_bool("MCP_JSON_RESPONSE", True)
# Protocol 2026-07-28 answers a POST as JSON until the handler notifies, then as SSE (progress on the call's own
# stream); MCP_MODERN_JSON_RESPONSE=1 answers JSON always (no progress). bench/bench_serving.py measures the two.
MCP_MODERN_JSON_RESPONSE = env_bool("MCP_MODERN_JSON_RESPONSE", False)
# subscriptions/listen (2026-07-28): open streams one API key may hold on one process (429 past it), on one process
# in all, resources per stream, events buffered for a slow reader (the stream ends past it), and the seconds a
# stream lives before it is closed gracefully (the client re-listens; SSE keep-alive pings every 15 s meanwhile).
MCP_LISTEN_MAX_PER_KEY = int(env_raw("MCP_LISTEN_MAX_PER_KEY", 4))
MCP_LISTEN_MAX_STREAMS = int(env_raw("MCP_LISTEN_MAX_STREAMS", 1000))
MCP_LISTEN_MAX_URIS = int(env_raw("MCP_LISTEN_MAX_URIS", 100))
MCP_LISTEN_MAX_BUFFERED_EVENTS = int(env_raw("MCP_LISTEN_MAX_BUFFERED_EVENTS", 256))
MCP_LISTEN_MAX_SECONDS = float(env_raw("MCP_LISTEN_MAX_SECONDS", 3600))
# Stateful mode only (MCP_STATELESS_HTTP=0): sessions live in one process's memory, so these bound them.
MCP_MAX_SESSIONS = int(env_raw("MCP_MAX_SESSIONS", 1000))
MCP_MAX_SESSIONS_PER_KEY = int(env_raw("MCP_MAX_SESSIONS_PER_KEY", 10))
MCP_SESSION_IDLE_TIMEOUT = int(env_raw("MCP_SESSION_IDLE_TIMEOUT", 300))
# Seconds a multi round-trip call's requestState stays valid (2026-07-28 confirmations: the time the user has to
# answer, and the most a retry after a lost reply may come later; docs/mcp-resources-prompts.md).
MCP_REQUEST_STATE_TTL = float(env_raw("MCP_REQUEST_STATE_TTL", 600))
# Seconds a writing tool's outcome is kept for a retry with the same idempotency key (docs/idempotency.md); older
# records are removed by `manage.py prune_idempotency_records` and a key past it is treated as new.
MCP_IDEMPOTENCY_RETENTION = float(env_raw("MCP_IDEMPOTENCY_RETENTION", 86_400))
# MCP Apps (io.modelcontextprotocol/ui, docs/mcp-apps.md): the seat picker, cart review and message card views,
# for clients that negotiate the extension. Off: neither advertised nor served, every client gets plain results.
MCP_APPS = env_bool("MCP_APPS", True)
# Entries per page of resources/list, resources/templates/list and prompts/list (docs/mcp-resources-prompts.md).
MCP_PAGE_SIZE = int(env_raw("MCP_PAGE_SIZE", 50))
# Worker threads for tool calls, per process: fast (database) tools and upstream-bound tools (resolve_points,
# which waits on GaluchatAPI) have separate pools, and one key holds at most MCP_KEY_CONCURRENCY of them at once,
# of which at most MCP_KEY_UPSTREAM_THREADS in the upstream pool (a quarter of it by default), so a slow upstream
# or a few busy keys cannot starve the others.
MCP_TOOL_THREADS = int(env_raw("MCP_TOOL_THREADS", 12))
MCP_UPSTREAM_THREADS = int(env_raw("MCP_UPSTREAM_THREADS", 8))
MCP_KEY_CONCURRENCY = int(env_raw("MCP_KEY_CONCURRENCY", 4))
MCP_KEY_UPSTREAM_THREADS = int(env_raw("MCP_KEY_UPSTREAM_THREADS", max(1, MCP_UPSTREAM_THREADS // 4)))
# Threads serving Django's pages (admin, /rpc, REST, feeds) in each process (mcpsite/django_asgi.py); requests past
# this many at once wait for a thread.
DJANGO_REQUEST_THREADS = int(env_raw("DJANGO_REQUEST_THREADS", 64))
# Audit rows are written in batches every MCP_AUDIT_FLUSH_SECONDS (0: one insert inside each call), at most
# MCP_AUDIT_BUFFER_ROWS waiting: the most a killed process can lose (mcpsite.mcp.audit.AuditBuffer).
MCP_AUDIT_FLUSH_SECONDS = float(env_raw("MCP_AUDIT_FLUSH_SECONDS", 1.0))
MCP_AUDIT_BUFFER_ROWS = int(env_raw("MCP_AUDIT_BUFFER_ROWS", 500))
# Rows kept for a later write while the database does not answer; the oldest past it are dropped (and counted).
MCP_AUDIT_RETAIN_ROWS = int(env_raw("MCP_AUDIT_RETAIN_ROWS", 20 * MCP_AUDIT_BUFFER_ROWS))
# Bearer tokens that are not API keys: dotted paths to `f(*, raw_token, url) -> principal | None` (mcpsite/mcp/auth.py).
MCP_TOKEN_AUTHENTICATORS = ["mcpsite_oauth.services.access_token_authenticate"]
# mcpsite.guard, in front of Django: the largest body of any other page (the admin's CSV uploads), and the
# seconds a whole body may take to arrive on any path.
HTTP_MAX_BODY_BYTES = int(env_raw("HTTP_MAX_BODY_BYTES", 10_000_000))
# The ingress bounds each endpoint's bodies (the seed endpoints take geo's 10,000 points, 8.6 MB); Django's own bound
# only backs it up, so it is the larger of the two page limits.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(HTTP_MAX_BODY_BYTES, MCP_MAX_BODY_BYTES)
HTTP_BODY_TIMEOUT_S = float(env_raw("HTTP_BODY_TIMEOUT_S", 30))
# Seconds a request's headers may take to arrive once its first byte has (or the connection is made): a connection
# still sending them is closed (mcpsite/serving.py, the protocol scripts/serve runs uvicorn with).
HTTP_HEADER_TIMEOUT_S = float(env_raw("HTTP_HEADER_TIMEOUT_S", 10))

# --- cinema ---
CINEMA_MAX_SEATS_PER_RESERVATION = int(env_raw("CINEMA_MAX_SEATS_PER_RESERVATION", 10))
CINEMA_PASSWORD_RATE = env_str("CINEMA_PASSWORD_RATE", "5/15m")

# --- geo (GaluchatAPI) ---
GALUCHAT_BASE_URL = env_str("GALUCHAT_BASE_URL", "https://galuchat.nyatla.jp")
GALUCHAT_TIMEOUT_MS = env_raw("GALUCHAT_TIMEOUT_MS", 10000)
GALUCHAT_UNIT = env_raw("GALUCHAT_UNIT", "0.001")
GALUCHAT_MAPSET_ADMIN = env_str("GALUCHAT_MAPSET_ADMIN", "ma10000")
GALUCHAT_MAPSET_ESTAT = env_str("GALUCHAT_MAPSET_ESTAT", "estatremap10000")
GALUCHAT_MAPSET_JARL = env_str("GALUCHAT_MAPSET_JARL", "ma10000")
GALUCHAT_CACHE_TTL = env_raw("GALUCHAT_CACHE_TTL", 86400)
GALUCHAT_MAX_POINTS_PER_REQUEST = env_raw("GALUCHAT_MAX_POINTS_PER_REQUEST", 1000)
GALUCHAT_REQUESTS_PER_SECOND = env_raw("GALUCHAT_REQUESTS_PER_SECOND", 10)
RESOLVE_POINTS_MAX_POINTS = env_raw("RESOLVE_POINTS_MAX_POINTS", 10000)

# --- merchant ---
MEILISEARCH_URL = env_str("MEILISEARCH_URL")
MEILISEARCH_MASTER_KEY = env_str("MEILISEARCH_MASTER_KEY")
MEILISEARCH_INDEX = env_str("MEILISEARCH_INDEX", "products")
MEILISEARCH_TIMEOUT_S = float(env_raw("MEILISEARCH_TIMEOUT_S", 2))
SHIPPING_FEE = Decimal(env_raw("SHIPPING_FEE", "500"))
FREE_SHIPPING_THRESHOLD = Decimal(env_raw("FREE_SHIPPING_THRESHOLD", "5000"))
TAX_RATE = Decimal(env_raw("TAX_RATE", "0.10"))
MERCHANT_ID = env_str("MERCHANT_ID", "did:ap2:merchant:mugibo_merchant")
MERCHANT_NAME = env_str("MERCHANT_NAME", "Demo Merchant")
MERCHANT_SIGNING_KEY = env_str("MERCHANT_SIGNING_KEY")
CART_EXPIRY_MINUTES = int(env_raw("CART_EXPIRY_MINUTES", 30))

# --- reminders ---
SMS_BACKEND = env_str("SMS_BACKEND", "")
REMINDERS_MAX_DURATION_MIN = int(env_raw("REMINDERS_MAX_DURATION_MIN", 10080))
# Webhooks reach public internet hosts only (reminders/webhooks.py); on for a local receiver in development.
REMINDERS_WEBHOOK_ALLOW_PRIVATE = env_bool("REMINDERS_WEBHOOK_ALLOW_PRIVATE", False)
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000")

# --- admin login throttle (django-axes) ---
# 5 wrong passwords for one username from one address lock that pair out for 15 minutes (429); a correct password
# during the lockout is refused too, and a success before it resets the count. Attempts live in the database, so
# every process sees them; staff with the axes permissions see and clear them in the admin.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = int(env_raw("AXES_FAILURE_LIMIT", 5))
AXES_COOLOFF_TIME = timedelta(minutes=int(env_raw("AXES_COOLOFF_MINUTES", 15)))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# Lockouts and failed logins are still logged (WARNING); not the INFO banner axes prints when every process starts.
AXES_VERBOSE = False
# The client address is REMOTE_ADDR: behind a proxy, uvicorn's --proxy-headers/--forwarded-allow-ips set it.

# --- Operations (docs/operations.md) ---
# /metrics answers a request bearing this token, or from these addresses (CIDR allowed); anyone else gets 403.
METRICS_TOKEN = env_str("METRICS_TOKEN")
METRICS_ALLOWED_IPS = env_list("METRICS_ALLOWED_IPS", "127.0.0.1/32,::1/128")
try:
    METRICS_ALLOWED_NETWORKS = [ipaddress.ip_network(entry, strict=False) for entry in METRICS_ALLOWED_IPS]
except ValueError as exc:
    raise ImproperlyConfigured(f"METRICS_ALLOWED_IPS: {exc} (addresses or networks, comma-separated)") from None
# "plain" (the default) or "json": one JSON object a line, with the request id, trace id, key, tool, outcome and
# duration of each tool call (logger mcpsite.calls, INFO).
LOG_FORMAT = env_str("LOG_FORMAT", "plain")
if LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be plain or json, not {LOG_FORMAT!r}")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "mcpsite.logjson.JsonFormatter"},
    },
    # Calendar feed tokens never reach a log line (mcpsite.logfilters; the access loggers get it in AppConfig.ready).
    "filters": {
        "redact_feed_tokens": {"()": "mcpsite.logfilters.RedactFeedTokens"},
        # A 403 is one line, without a traceback (mcpsite.logfilters).
        "no_traceback_for_refusals": {"()": "mcpsite.logfilters.NoTracebackForRefusals"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "stream": "ext://sys.stderr",
            "filters": ["redact_feed_tokens", "no_traceback_for_refusals"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # The pool logs every failed reconnect while the database is down; each process logs the outage once
        # (mcpsite.core.outage) instead.
        "psycopg.pool": {"level": "ERROR"},
        # A line per tool call: for log pipelines (json); the plain console stays quiet.
        "mcpsite.calls": {"level": "INFO" if LOG_FORMAT == "json" else "WARNING"},
    },
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["mcpsite.mcp.auth.IngressAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["mcpsite.core.jsonutil.CompactJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "UNAUTHENTICATED_USER": None,
}

# --- OAuth 2.1 for remote MCP clients (docs/oauth.md; django-oauth-toolkit does the protocol) ---
# The public origin clients reach (https://mcp.example.com). Empty: taken from each request (a laptop); set it in
# production, where the proxy's view of the scheme and host is not the client's.
OAUTH_ISSUER_URL = env_str("OAUTH_ISSUER_URL").rstrip("/")
# Every token of one user shares one allowance, so refreshing (a new token) or connecting a second client does not
# give more calls.
OAUTH_TOKEN_RATE = env_str("OAUTH_TOKEN_RATE", MCP_DEFAULT_RATE)
# Dynamic client registration (RFC 7591) is open: limited per client address (counted by the shared rate limiter, so
# across processes), and each registration is bounded.
OAUTH_REGISTRATION_RATE = env_str("OAUTH_REGISTRATION_RATE", "20/h")
OAUTH_REGISTRATION_MAX_BYTES = int(env_raw("OAUTH_REGISTRATION_MAX_BYTES", 16 * 1024))
OAUTH_REGISTRATION_MAX_REDIRECT_URIS = int(env_raw("OAUTH_REGISTRATION_MAX_REDIRECT_URIS", 10))
# `manage.py prune_oauth_clients` deletes registrations this old that never completed an authorization.
OAUTH_UNUSED_CLIENT_HOURS = int(env_raw("OAUTH_UNUSED_CLIENT_HOURS", 24))
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER = {
    # Each tool group bare (read and write), `<group>:read` and `<group>:write`, from the apps (mcpsite.core.scopes).
    "SCOPES_BACKEND_CLASS": "mcpsite_oauth.scopes.ToolScopes",
    "OAUTH2_VALIDATOR_CLASS": "mcpsite_oauth.validators.McpOAuth2Validator",
    "PKCE_REQUIRED": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(env_raw("OAUTH_ACCESS_TOKEN_SECONDS", 3600)),
    "REFRESH_TOKEN_EXPIRE_SECONDS": int(env_raw("OAUTH_REFRESH_TOKEN_SECONDS", 30 * 86400)),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "ROTATE_REFRESH_TOKEN": True,
    # A refresh token used twice revokes its whole family (a stolen copy is detected when either side uses it).
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REQUEST_APPROVAL_PROMPT": "force",
    "DCR_ENABLED": True,
    # Anyone may register a client (RFC 7591, as MCP clients do); a client gets nothing until a user consents.
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    # Client ID metadata documents are off (docs/oauth.md, "Client ID metadata documents"): the toolkit's fetch judges
    # addresses by its own rule, not the site's, and the clients it makes escape the registration limit and pruning.
    # MCP clients register instead (DCR), as they do when the metadata does not advertise CIMD.
    "CIMD_ENABLED": False,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none", "client_secret_basic", "client_secret_post"],
    "OIDC_ISS_ENDPOINT": OAUTH_ISSUER_URL,
    "OAUTH2_PROTECTED_RESOURCE_NAME": MCP_SERVER_NAME,
    # RFC 9700 (OAuth security BCP): no implicit or password grant, no "plain" PKCE, tokens stored as digests,
    # bearer tokens only in the header, `iss` on the authorization response.
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    # `http` stays for the loopback callbacks of native clients (RFC 8252 §7.3; the MCP desktop and IDE clients use
    # them); McpOAuth2Validator refuses an http redirect to any other host, so W008 is silenced below.
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_SCHEME": False,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
}
