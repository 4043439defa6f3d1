"""Instructions per seed JSON-RPC call (`POST /rpc`, `get_seat_availability` by name) by callgrind, and where they go.

The site runs in one process and is called through its ASGI application (no uvicorn), as
bench/callgrind_observability.py calls `/mcp`: 30 calls to warm up, then `--calls` calls counted. One request
thread, one tool thread, the audit rows written by count, the key cache never expiring and a fixed hash seed, so
instruction counts repeat from run to run whatever else the machine runs. `--profile` samples the same calls with
py-spy instead (no valgrind) and prints the inclusive share of each layer around the view: Django's handler and
middleware chain, DRF's APIView where the view is one, the view's own code.

    .venv/bin/python bench/callgrind_rpc.py [--calls 200] [--database sqlite|postgres] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_serving import prepare, site_env, start_postgres  # noqa: E402
from callgrind_observability import asgi_calls, control, instructions  # noqa: E402

CALL = {"jsonrpc": "2.0", "id": 1, "method": "get_seat_availability", "params": {"schedule_id": "s001"}}
# (label, qualified function): py-spy samples with the function in their stack, as a share of the request's samples
# (the event loop's and the request thread's).
REQUEST = ("RequestGuard.__call__", "DjangoASGI._respond")
LAYERS = [
    ("  the guard and the event loop's part", "RequestGuard.__call__"),
    ("  the request thread (DjangoASGI._respond)", "DjangoASGI._respond"),
    ("    Django's WSGIHandler", "WSGIHandler.__call__"),
    ("      the middleware chain, URL resolving and the view", "BaseHandler.get_response"),
    ("        the view (what as_view returns)", "View.as_view.<locals>.view"),
    ("          DRF's APIView.dispatch", "APIView.dispatch"),
    ("            initialize_request (DRF's Request)", "APIView.initialize_request"),
    ("            initial (negotiation, authentication, permissions, throttles)", "APIView.initial"),
    ("              perform_content_negotiation", "APIView.perform_content_negotiation"),
    ("              perform_authentication", "APIView.perform_authentication"),
    ("            finalize_response", "APIView.finalize_response"),
    ("          the view's post", "JsonRpcView.post"),
    ("            jsonrpc.handle_payload", "handle_payload"),
    ("              dispatch.call_tool", "call_tool"),
    ("      request_finished (close_old_connections ...)", "Signal.send"),
]


def inner(calls: int, key: str, profile: bool) -> None:
    """In the measured process: the site's ASGI application, called directly (counted by callgrind unless
    `profile`, where py-spy samples it from outside)."""
    body = json.dumps(CALL).encode()
    headers = [(b"host", b"127.0.0.1:8000"), (b"authorization", f"Bearer {key}".encode()),
               (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]  # fmt: skip
    if profile:
        asgi_calls("/rpc", headers, body, calls, lambda: None, lambda: None)
    else:
        asgi_calls("/rpc", headers, body, calls, lambda: control("-z"), lambda: control("-d"))


def shares(raw: str) -> None:
    """Each layer's share of the samples that served a request, from py-spy's collapsed stacks."""
    whole, counts = 0, dict.fromkeys(LAYERS, 0)
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        functions = {frame.partition(" (")[0] for frame in stack.split(";")}
        if functions.isdisjoint(REQUEST):
            continue  # start-up
        whole += int(count)
        for layer in LAYERS:
            counts[layer] += int(count) if layer[1] in functions else 0
    print(f"  {'samples':<74} {whole:6d}")
    for layer, count in counts.items():
        print(f"  {layer[0]:<74} {100 * count / (whole or 1):5.1f} %")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--profile", action="store_true", help="py-spy the layers instead of counting instructions")
    args = parser.parse_args()
    env = site_env(start_postgres() if args.database == "postgres" else None)
    key = prepare(env)
    # What runs by the clock or by hash order would make the count differ from run to run: the key cache's expiry
    # (under callgrind 5 s pass every few calls), the audit flush, dict and set order.
    env.update(MCP_TOOL_THREADS="1", DJANGO_REQUEST_THREADS="1", MCP_AUDIT_FLUSH_SECONDS="100000",
               MCP_AUDIT_BUFFER_ROWS="100", MCP_API_KEY_CACHE_SECONDS="100000", PYTHONHASHSEED="0")  # fmt: skip
    command = [sys.executable, __file__, "--inner", str(args.calls), key]
    if args.profile:
        raw = f"{tempfile.mkdtemp(prefix='py-spy-rpc-')}/rpc.txt"
        py_spy = Path(sys.executable).with_name("py-spy")
        subprocess.run([py_spy, "record", "--rate", "1000", "--format", "raw", "--output", raw, "--", *command,
                        "profile"], env=env, check=True, capture_output=True)  # fmt: skip
        shares(Path(raw).read_text())
        return
    out_file = f"{tempfile.mkdtemp(prefix='callgrind-rpc-')}/callgrind.rpc"
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", *command], env=env,
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    print(f"  POST /rpc get_seat_availability ({args.database}): "
          f"{instructions(out_file) / args.calls / 1e6:.2f} M instructions per call")  # fmt: skip
    print(f"callgrind files: {os.path.dirname(out_file)}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--inner":
        inner(int(sys.argv[2]), sys.argv[3], profile=sys.argv[4:] == ["profile"])
    else:
        main()
