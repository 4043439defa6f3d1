"""bench_fastmcp.py's peer: FastMCP serving `get_seat_availability` over Streamable HTTP at `/mcp`, stateless with
JSON answers, calling the site's tool function through the same worker-thread hop as serving_bare_asgi.py; no API
key, limits or audit. Run by the Python of FastMCP's own virtualenv (bench_fastmcp.fastmcp_python):

    uvicorn --app-dir bench serving_fastmcp:application
"""

from typing import Any

from fastmcp import FastMCP
from serving_bare_asgi import seat_availability_in_thread  # sets Django up

server = FastMCP("bench-fastmcp")


@server.tool
async def get_seat_availability(schedule_id: str) -> dict[str, Any]:
    """The seat map of one show (cinema's tool function)."""
    return await seat_availability_in_thread({"schedule_id": schedule_id})


application = server.http_app(path="/mcp", stateless_http=True, json_response=True)
