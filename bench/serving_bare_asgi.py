"""The baseline of bench_serving.py: the same tool function behind a bare ASGI handler, no MCP, no auth, no limits,
no audit. It runs the function as the site does (a worker thread, the site's connection settings: SQLite kept per
thread, PostgreSQL through Django's pool), so the ratio measures what the MCP path adds.

    uvicorn --app-dir bench serving_bare_asgi:application
"""

import json
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
django.setup()

from asgiref.sync import sync_to_async  # noqa: E402
from django.db import close_old_connections  # noqa: E402

from cinema.tools import get_seat_availability  # noqa: E402
from mcpsite.mcp.http import buffer_body  # noqa: E402


def _call(arguments):
    close_old_connections()
    try:
        return get_seat_availability(arguments, None)
    finally:
        close_old_connections()


_call_in_thread = sync_to_async(_call, thread_sensitive=False)


async def application(scope, receive, send):
    if scope["type"] != "http":
        return
    body, _ = await buffer_body(receive, 10_000_000)
    if scope["path"] == "/noop":  # the load generator's own ceiling
        payload = b"{}"
    else:
        payload = json.dumps(await _call_in_thread(json.loads(body)), ensure_ascii=False).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
