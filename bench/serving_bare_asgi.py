"""The baseline of bench_serving.py: the same tool function behind a bare ASGI handler, no MCP, no auth, no limits,
no audit. It runs the function as the site does (the site's worker threads and thread hop, the site's connection
settings: SQLite kept per thread, PostgreSQL through Django's pool), so the ratio measures what the MCP path adds.

    uvicorn --app-dir bench serving_bare_asgi:application
"""

import json
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
django.setup()

from cinema.tools import get_seat_availability  # noqa: E402
from mcpsite.mcp.http import buffer_body  # noqa: E402
from mcpsite.mcp.threads import in_worker_thread  # noqa: E402

# The MCP path's own hop (connections checked before and after the call, as there); serving_fastmcp.py's tool too.
seat_availability_in_thread = in_worker_thread(lambda arguments: get_seat_availability(arguments, None))


async def application(scope, receive, send):
    if scope["type"] != "http":
        return
    body, _ = await buffer_body(receive, 10_000_000)
    if scope["path"] == "/noop":  # the load generator's own ceiling
        payload = b"{}"
    else:
        payload = json.dumps(await seat_availability_in_thread(json.loads(body)), ensure_ascii=False).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
