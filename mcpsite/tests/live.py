"""A real server in a subprocess (uvicorn, migrated database, an API key) for interop tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import httpx2
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
# How long a server may take to answer /healthz (a loaded CI machine imports Django slowly in each worker).
STARTUP_SECONDS = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LoopbackUpstream(BaseHTTPRequestHandler):
    """A fake upstream (GaluchatAPI) on loopback: the live server is another process, so `responses` cannot reach
    it. Subclasses answer with `reply`."""

    def reply(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def loopback_upstream(handler: type[LoopbackUpstream]) -> Iterator[str]:
    """Serve `handler` on a free loopback port for the block; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


class AlternatingProxy:
    """An HTTP proxy on loopback that sends each request to the next backend in turn (as a load balancer without
    affinity does), and counts where each went. Answers are streamed as they come (SSE), and a client that goes
    away closes the backend connection, as a real balancer does."""

    def __init__(self, backends: list[str]):
        self.backends, self.sent = backends, [0] * len(backends)
        self.port = free_port()
        config = uvicorn.Config(
            self.app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off", interface="asgi3"
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    async def app(self, scope, receive, send):
        from mcpsite.mcp.http import buffer_body

        body, receive = await buffer_body(receive, 10_000_000)
        index = sum(self.sent) % len(self.backends)
        self.sent[index] += 1
        headers = [(k.decode(), v.decode()) for k, v in scope["headers"] if k not in (b"host", b"content-length")]
        timeout = httpx2.Timeout(30, read=None)  # a listen stream may be quiet for long
        url = self.backends[index] + scope["path"]
        async with anyio.create_task_group() as tg:

            async def client_gone() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()  # before or after the backend's headers: its connection is closed

            tg.start_soon(client_gone)
            async with (
                httpx2.AsyncClient(timeout=timeout) as client,
                client.stream(scope["method"], url, content=body, headers=headers) as answer,
            ):
                drop = {"transfer-encoding", "connection"}
                out = [(k.encode(), v.encode()) for k, v in answer.headers.multi_items() if k.lower() not in drop]
                await send({"type": "http.response.start", "status": answer.status_code, "headers": out})
                async for chunk in answer.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
            tg.cancel_scope.cancel()

    def __enter__(self):
        self.thread.start()
        while not self.server.started:
            self.thread.join(0.05)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


@dataclass
class LiveSite:
    env: dict
    key: str = ""
    processes: list = field(default_factory=list)
    urls: list = field(default_factory=list)

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [PYTHON, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=600
        )
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stderr}")
        return result.stdout

    def create_api_key(self, name: str, *args: str) -> tuple[str, int]:
        """A new key on this site: (raw key, pk)."""
        raw = self.manage("create_api_key", "--name", name, *args, "--quiet").strip()
        lookup = f"from mcpsite.models import ApiKey; print(ApiKey.objects.get(name={name!r}).pk)"
        return raw, int(self.manage("shell", "-v", "0", "-c", lookup))

    def start_server(self, workers: int = 1, *, access_log: bool = False, **env: str) -> str:
        """A uvicorn with `workers` processes (and `env` added to the site's environment); returns its URL."""
        port = free_port()
        log = open(Path(self.env["MCPSITE_VAR_DIR"]) / f"uvicorn-{port}.log", "w")  # noqa: SIM115
        proc = subprocess.Popen(
            [PYTHON, "-m", "uvicorn", "mcpsite.tests.asgi_with_test_tools:application", "--port", str(port),
             "--host", "127.0.0.1", "--lifespan", "on", "--access-log" if access_log else "--no-access-log",
             "--workers", str(workers)],
            cwd=ROOT, env={**self.env, **env}, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.processes.append(proc)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            try:
                if httpx2.get(f"{url}/healthz", timeout=1).status_code == 200:
                    self.urls.append(url)
                    return url
            except httpx2.HTTPError:
                time.sleep(0.2)
            if proc.poll() is not None:
                break
        raise RuntimeError(f"uvicorn did not start: {(Path(log.name)).read_text()}")

    def stop(self) -> None:
        for proc in self.processes:
            proc.terminate()
        for proc in self.processes:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextlib.contextmanager
def live_site(tmp_dir: Path) -> Iterator[LiveSite]:
    """A site with a migrated database of its own (a SQLite file, or a fresh PostgreSQL database in the PG pass);
    on exit its servers are stopped and its database dropped."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_ALLOW"))}
    env.update(MCPSITE_VAR_DIR=str(tmp_dir), PYTHONPATH=str(ROOT), LOG_LEVEL="WARNING")
    cleanup = lambda: None  # noqa: E731
    base_url = os.environ.get("DATABASE_URL", "")
    if base_url.startswith("postgres"):
        import psycopg

        name = f"live_{uuid.uuid4().hex[:10]}"
        admin_url = base_url.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        env["DATABASE_URL"] = base_url.rsplit("/", 1)[0] + "/" + name

        def cleanup():
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        env.pop("DATABASE_URL", None)
    site = LiveSite(env=env)
    try:
        site.manage("migrate", "--noinput", "-v", "0")
        site.manage("collectstatic", "--noinput", "-v", "0")
        site.key = site.manage(
            "create_api_key", "--name", "interop", "--scopes", "all", "--owner", "interop", "--quiet"
        ).strip()
        yield site
    finally:
        site.stop()
        cleanup()


async def mcp_session(url: str, key: str, fn):
    """Run `fn(session)` in an initialized official-client session over Streamable HTTP at `url` with `key`."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await fn(session)
