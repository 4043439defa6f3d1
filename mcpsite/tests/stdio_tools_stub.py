"""A stdio MCP server that only lists the tools in a JSON file (`python stdio_tools_stub.py TOOLS.json`): a client
nobody here wrote can be shown a tool list the site never serves (the Inspector's portability control in
test_interop_features.py). Standalone: no Django, no SDK."""

from __future__ import annotations

import json
import sys


def answer(message: dict, tools: list) -> dict | None:
    """The reply to one JSON-RPC message (None for a notification)."""
    if "id" not in message:
        return None
    method = message.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tools-stub", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": tools}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"No {method}"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        tools = json.load(f)
    for line in sys.stdin:
        if line.strip() and (reply := answer(json.loads(line), tools)) is not None:
            sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
