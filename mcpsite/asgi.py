import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
django.setup(set_prefix=False)  # before the router imports models; the router builds Django's ASGI handler

from mcpsite.routing import application  # noqa: E402,F401
