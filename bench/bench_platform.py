"""Platform benchmark: result encoding size and dispatcher overhead.

1. Bytes on the wire for a 100-row Japanese tool result: mcpsite's compact UTF-8 text copy against
   the SDK's default text copy (indented, \\u-escaped JSON), side by side.
2. The full dispatcher path (scope, rate limit in the database cache, schema validation, audit row)
   against calling the same tool function directly, in the same process.

    .venv/bin/python bench/bench_platform.py [--repeat 300]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot, report, timings  # noqa: E402

boot("platform")

from mcpsite.core.jsonutil import dumps  # noqa: E402
from mcpsite.mcp import dispatch  # noqa: E402
from mcpsite.mcp.registry import CallContext, ToolSpec, register  # noqa: E402
from mcpsite.services import api_key_create  # noqa: E402

ROWS = [
    {"movie_id": f"m{i:03d}", "title": f"スタームービー{i}", "genre": "SF", "duration": 120, "rating": 4.5,
     "description": "宇宙冒険ストーリー", "release_date": "2026-02-01", "recommended": i % 2 == 0}
    for i in range(100)
]  # fmt: skip


def list_movies(args, ctx):
    return {"movies": ROWS[: args.get("limit", 100)]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=300)
    repeat = parser.parse_args().repeat

    compact = len(dumps({"movies": ROWS}).encode())
    sdk_default = len(json.dumps({"movies": ROWS}, indent=2).encode())  # what the SDK's text copy looks like
    print(f"100-row result: compact UTF-8 {compact} bytes | SDK default {sdk_default} bytes | "
          f"ratio {compact / sdk_default:.2f}x")  # fmt: skip

    schema = {"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1}}}
    register(ToolSpec("bench_list_movies", "cinema", "bench", schema, list_movies))
    from django.contrib.auth import get_user_model

    owner = get_user_model().objects.create(username="bench")
    key, _raw = api_key_create(name="bench", owner=owner, scopes=["cinema"], rate="1000000/m")
    ctx = CallContext(transport="bench", request_id="bench", api_key=key, owner=owner)
    print(f"timing {repeat} calls each…", flush=True)
    direct = timings(lambda: dumps(list_movies({"limit": 100}, ctx)), repeat=repeat)
    full = timings(lambda: dumps(dispatch.call_tool(ctx, "bench_list_movies", {"limit": 100}).data), repeat=repeat)
    report("dispatcher (auth scope, rate, validate, audit)", full, direct, "direct call")


if __name__ == "__main__":
    main()
