import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_asgi_app = get_asgi_application()

from mcpsite.routing import application  # noqa: E402,F401
