"""ASGI routing placeholder; replaced by the full router (MCP, WebSocket) below."""

from django.core.asgi import get_asgi_application

application = get_asgi_application()
