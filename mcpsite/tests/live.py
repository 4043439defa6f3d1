"""Real servers in subprocesses (uvicorn over a database of their own, an API key) for interop tests.

A test run migrates once: `prepare_template` makes the database, static files and key every `live_site` copies
(the `live_template` fixture in the root conftest.py starts it in the background as soon as a collected test needs
it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
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


# Run once per test run in a subprocess: the database every live site starts from, its collected static files and
# the `interop` key (all scopes), printed last.
PREPARE = """
import io
import django
django.setup()
from django.core.management import call_command
from django.db import connections
call_command("migrate", interactive=False, verbosity=0)
call_command("collectstatic", interactive=False, verbosity=0)
out = io.StringIO()
call_command("create_api_key", "--name", "interop", "--scopes", "all", "--owner", "interop", "--quiet", stdout=out)
connections.close_all()
print(out.getvalue().strip())
"""
SQLITE_FILE = "mcpsite.sqlite3"


def _base_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_ALLOW", "MCPSITE_LIVE"))}
    env.update(PYTHONPATH=str(ROOT), LOG_LEVEL="WARNING", DJANGO_SETTINGS_MODULE="mcpsite.settings")
    return env


def _postgres_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    return url if url.startswith("postgres") else ""


def _database_url(name: str) -> str:
    return _postgres_url().rsplit("/", 1)[0] + "/" + name


def _admin_sql(statement: str) -> None:
    import psycopg

    with psycopg.connect(_database_url("postgres"), autocommit=True) as conn:
        conn.execute(statement)


@dataclass(frozen=True)
class Template:
    """What every live site of this test run is copied from: `directory` (static files, secret key and, on SQLite,
    the migrated database file) and, on PostgreSQL, the migrated `database` (a template database)."""

    directory: Path
    key: str
    database: str = ""


def template_database_name(run: str) -> str:
    return f"live_template_{run}"


def prepare_template(directory: Path, run: str) -> Template:
    """The run's template, made by the first process to ask (migrate, collectstatic, the key); pytest-xdist workers
    share it through `directory` under a file lock."""
    import fcntl
    import json

    directory.mkdir(parents=True, exist_ok=True)
    ready = directory / "ready.json"
    with open(directory / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ready.exists():
            env = {**_base_env(), "MCPSITE_VAR_DIR": str(directory)}
            database = ""
            if _postgres_url():
                database = template_database_name(run)
                _admin_sql(f'DROP DATABASE IF EXISTS "{database}"')
                _admin_sql(f'CREATE DATABASE "{database}"')
                env["DATABASE_URL"] = _database_url(database)
            else:
                env.pop("DATABASE_URL", None)
            result = subprocess.run(
                [PYTHON, "-c", PREPARE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
            )
            if result.returncode != 0:
                raise RuntimeError(f"preparing the live-site template failed:\n{result.stderr}")
            key = result.stdout.strip().splitlines()[-1]
            ready.write_text(json.dumps({"key": key, "database": database}))
        made = json.loads(ready.read_text())
    return Template(directory=directory, key=made["key"], database=made["database"])


def drop_template(run: str) -> None:
    if _postgres_url():
        _admin_sql(f'DROP DATABASE IF EXISTS "{template_database_name(run)}" WITH (FORCE)')


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

    def shell(self, code: str) -> str:
        """What `code` prints, run by `manage.py shell` on this site's database."""
        return self.manage("shell", "-v", "0", "-c", code).strip()

    def count(self, table: str, **equal: object) -> int:
        """The rows of `table` whose columns equal these values, read straight from the site's database (no Django
        start-up, so a test can poll for what a server writes)."""
        url = self.env.get("DATABASE_URL")
        mark = "%s" if url else "?"
        where = " AND ".join(f"{column} = {mark}" for column in equal) or "1 = 1"
        sql = f"SELECT COUNT(*) FROM {table} WHERE {where}"
        if url:
            import psycopg

            with psycopg.connect(url) as conn:
                return conn.execute(sql, list(equal.values())).fetchone()[0]
        import sqlite3

        conn = sqlite3.connect(Path(self.env["MCPSITE_VAR_DIR"]) / SQLITE_FILE, timeout=30)
        try:
            return conn.execute(sql, list(equal.values())).fetchone()[0]
        finally:
            conn.close()

    def create_api_key(self, name: str, *args: str) -> tuple[str, int]:
        """A new key on this site: (raw key, pk)."""
        options = ["--name", name, *args, "--quiet"]
        raw, pk = self.shell(
            "import io; from django.core.management import call_command; from mcpsite.models import ApiKey; "
            f"out = io.StringIO(); call_command('create_api_key', *{options!r}, stdout=out); "
            f"print(out.getvalue().strip(), ApiKey.objects.get(name={name!r}).pk)"
        ).split()
        return raw, int(pk)

    def start_server(self, workers: int = 1, *, access_log: bool = False, **env: str) -> str:
        """A uvicorn with `workers` processes (and `env` added to the site's environment); returns its URL."""
        return self.start_servers({"workers": workers, "access_log": access_log, **env})[0]

    def start_servers(self, *configs: dict) -> list[str]:
        """Several uvicorns started together (each config: `workers`, `access_log` and environment variables);
        returns their URLs once every one answers /healthz."""
        launched = [self._launch(**config) for config in configs]
        deadline = time.monotonic() + STARTUP_SECONDS
        for proc, url, log in launched:
            while True:
                try:
                    if httpx2.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx2.HTTPError:
                    time.sleep(0.1)
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"uvicorn did not start: {log.read_text()}")
            self.urls.append(url)
        return [url for _proc, url, _log in launched]

    def _launch(self, workers: int = 1, access_log: bool = False, **env: str) -> tuple[subprocess.Popen, str, Path]:
        port = free_port()
        log = Path(self.env["MCPSITE_VAR_DIR"]) / f"uvicorn-{port}.log"
        with open(log, "w") as out:
            proc = subprocess.Popen(
                [PYTHON, "-m", "uvicorn", "mcpsite.tests.asgi_with_test_tools:application", "--port", str(port),
                 "--host", "127.0.0.1", "--lifespan", "on", "--access-log" if access_log else "--no-access-log",
                 "--workers", str(workers)],
                cwd=ROOT, env={**self.env, **{k: str(v) for k, v in env.items()}}, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        self.processes.append(proc)
        return proc, f"http://127.0.0.1:{port}", log

    def stop(self) -> None:
        for proc in self.processes:
            proc.terminate()
        for proc in self.processes:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


@contextlib.contextmanager
def live_site(template: Template, tmp_dir: Path) -> Iterator[LiveSite]:
    """A site with a database of its own copied from the run's template (a SQLite file, or a PostgreSQL database
    made with CREATE DATABASE ... TEMPLATE), its static files and the `interop` key (`site.key`); on exit its servers
    are stopped and its database dropped."""
    tmp_dir.mkdir(parents=True, exist_ok=True)
    (tmp_dir / "static").symlink_to(template.directory / "static")
    shutil.copy2(template.directory / "secret_key", tmp_dir / "secret_key")
    env = {**_base_env(), "MCPSITE_VAR_DIR": str(tmp_dir)}
    cleanup = lambda: None  # noqa: E731
    if template.database:
        name = f"live_{uuid.uuid4().hex[:10]}"
        _admin_sql(f'CREATE DATABASE "{name}" TEMPLATE "{template.database}"')
        env["DATABASE_URL"] = _database_url(name)

        def cleanup():
            _admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        env.pop("DATABASE_URL", None)
        for suffix in ("", "-wal"):
            if (template.directory / (SQLITE_FILE + suffix)).exists():
                shutil.copy2(template.directory / (SQLITE_FILE + suffix), tmp_dir / (SQLITE_FILE + suffix))
    site = LiveSite(env=env, key=template.key)
    try:
        yield site
    finally:
        site.stop()
        cleanup()


async def mcp_session(url: str, key: str, fn, **session_options):
    """Run `fn(session)` in an initialized official-client session over Streamable HTTP at `url` with `key`
    (`session_options`: ClientSession's, such as elicitation_callback)."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, **session_options) as session:
                await session.initialize()
                return await fn(session)
