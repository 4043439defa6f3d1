"""Ready-to-paste MCP client configurations (Claude Desktop, Cursor and other `mcpServers` clients)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings


def http_client_config(*, mcp_url: str, raw_key: str) -> dict:
    """Streamable HTTP at `mcp_url` with the key as a bearer token."""
    return {
        "mcpServers": {
            "mcpsite": {"type": "http", "url": mcp_url, "headers": {"Authorization": f"Bearer {raw_key}"}},
        }
    }


def stdio_client_config(*, group: str = "ledger") -> dict:
    """This checkout's `manage.py mcp_stdio --group <group>` (a local process: no key)."""
    root = Path(settings.BASE_DIR)
    return {
        "mcpServers": {
            f"mcpsite-{group}": {
                "command": str(root / ".venv" / "bin" / "python"),
                "args": [str(root / "manage.py"), "mcp_stdio", "--group", group],
            }
        }
    }
