"""The ASGI router itself: lifespan states, and MCP without a lifespan is a clear 503."""

import json

import pytest
from asgiref.testing import ApplicationCommunicator

from mcpsite.routing import Application

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def test_lifespan_starts_and_stops_the_session_manager():
    app = Application()
    lifespan = ApplicationCommunicator(app, {"type": "lifespan"})
    await lifespan.send_input({"type": "lifespan.startup"})
    assert (await lifespan.receive_output(5))["type"] == "lifespan.startup.complete"
    assert app.mcp.running
    await lifespan.send_input({"type": "lifespan.shutdown"})
    assert (await lifespan.receive_output(5))["type"] == "lifespan.shutdown.complete"
    assert not app.mcp.running


async def test_mcp_request_without_lifespan_is_a_clear_503():
    app = Application()
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [], "query_string": b""}
    http = ApplicationCommunicator(app, scope)
    await http.send_input({"type": "http.request", "body": b"{}", "more_body": False})
    start = await http.receive_output(5)
    body = json.loads((await http.receive_output(5))["body"])
    assert start["status"] == 503
    assert "lifespan" in body["error"]["data"]


async def _get(app, path: str) -> dict:
    scope = {"type": "http", "method": "GET", "path": path, "headers": [(b"host", b"testserver")],
             "query_string": b"", "server": ("testserver", 80), "scheme": "http"}  # fmt: skip
    http = ApplicationCommunicator(app, scope)
    await http.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await http.receive_output(10)
    await http.receive_output(10)  # the body
    await http.wait(10)  # the request's handling has ended
    return start


@pytest.mark.django_db
async def test_django_requests_reuse_their_threads(monkeypatch):
    """Django's pages run on a bounded pool of request threads: the threads started do not grow with the requests."""
    import threading

    from mcpsite.django_asgi import DjangoASGI

    app = DjangoASGI(threads=2)
    started = []
    real_start = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda thread: (started.append(thread.name), real_start(thread)))
    for _ in range(10):
        assert (await _get(app, "/admin/login/"))["status"] == 200
    assert 1 <= len(started) <= 2


@pytest.mark.django_db
async def test_django_pages_run_the_middleware_chain_with_all_its_effects():
    """Django's part runs through its WSGI handler (mcpsite/django_asgi.py): every middleware still applies, so the
    admin's login page keeps the security, clickjacking, CSP, language and CSRF effects."""
    start = await _get(Application(), "/admin/login/")
    headers = {name.decode().lower(): value.decode() for name, value in start["headers"]}
    assert start["status"] == 200
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" in headers
    assert headers["content-language"]
    assert "csrftoken=" in headers["set-cookie"]


async def _startup(app) -> dict:
    lifespan = ApplicationCommunicator(app, {"type": "lifespan"})
    await lifespan.send_input({"type": "lifespan.startup"})
    answer = await lifespan.receive_output(5)
    if answer["type"] == "lifespan.startup.complete":
        await lifespan.send_input({"type": "lifespan.shutdown"})
        await lifespan.receive_output(5)
    return answer


async def test_startup_fails_on_a_settings_error_naming_it(settings):
    """Issue #24: the server started with GALUCHAT_MAPSET_ESTAT=ma10000 (every geo call INTERNAL). The startup
    runs the settings checks and fails with their message (geo/tests/test_checks.py starts uvicorn so)."""
    settings.GALUCHAT_MAPSET_ESTAT = "ma10000"
    app = Application()
    answer = await _startup(app)
    assert answer["type"] == "lifespan.startup.failed"
    assert "(geo.E005) GALUCHAT_MAPSET_ESTAT='ma10000' is an AACODE mapset" in answer["message"]
    assert not app.mcp.running


async def test_a_settings_warning_is_logged_and_the_site_starts(settings, caplog):
    settings.GALUCHAT_MAPSET_JARL = "sc1000"
    assert (await _startup(Application()))["type"] == "lifespan.startup.complete"
    assert "geo.W001" in caplog.text


def test_every_check_of_the_project_runs_at_startup_or_needs_the_database():
    """The startup runs the checks tagged SETTINGS (model checks need a database connection); a project check
    without the tag would be run by `manage.py check` only."""
    import inspect
    from pathlib import Path

    from django.core.checks import Tags
    from django.core.checks.registry import registry

    from mcpsite.core.problems import SETTINGS

    root = Path(__file__).resolve().parents[2]
    ours = [c for c in registry.get_checks() if Path(inspect.getsourcefile(c) or "").is_relative_to(root)]
    ours = [c for c in ours if ".venv" not in Path(inspect.getsourcefile(c) or "").parts]
    assert len(ours) >= 6
    assert [c.__qualname__ for c in ours if not {SETTINGS, Tags.database} & set(c.tags)] == []


HOSTILE_HOSTS = [
    b"127.0.0.1:18100@evil.com",
    b"evil.com",
    b"127.0.0.1:80/x",
    b"127.0.0.1:1 evil.com",
    b"localhost.evil.com",
]


@pytest.fixture
async def running_application():
    """The site's ASGI application (guard included) with its lifespan started, so /mcp answers."""
    from mcpsite.guard import RequestGuard

    application = RequestGuard(Application())  # a session manager runs once: a new one per test
    lifespan = ApplicationCommunicator(application, {"type": "lifespan"})
    await lifespan.send_input({"type": "lifespan.startup"})
    assert (await lifespan.receive_output(5))["type"] == "lifespan.startup.complete"
    yield application
    await lifespan.send_input({"type": "lifespan.shutdown"})
    await lifespan.receive_output(5)


async def _request(app, path: str, host: bytes, method: str = "POST") -> tuple[dict, bytes]:
    scope = {"type": "http", "method": method, "path": path, "headers": [(b"host", host)], "query_string": b"",
             "server": ("127.0.0.1", 18100), "scheme": "http"}  # fmt: skip
    http = ApplicationCommunicator(app, scope)
    await http.send_input({"type": "http.request", "body": b"{}", "more_body": False})
    start = await http.receive_output(10)
    body = (await http.receive_output(10))["body"]
    return start, body


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("host", HOSTILE_HOSTS)
@pytest.mark.parametrize("path", ["/mcp", "/mcp/cinema", "/rpc", "/mcp/tools/list_movies", "/admin/login/", "/healthz"])
async def test_a_host_outside_allowed_hosts_is_refused_on_every_path_before_anything_echoes_it(
    running_application, path, host
):
    start, body = await _request(running_application, path, host)
    assert start["status"] == 400
    assert json.loads(body)["error"]["data"] == "Invalid Host header"
    assert b"evil" not in b"".join(value for _name, value in start["headers"]) + body


@pytest.mark.django_db(transaction=True)
async def test_an_allowed_host_with_any_port_still_reaches_mcp(running_application):
    start, _body = await _request(running_application, "/mcp", b"127.0.0.1:18100")
    assert start["status"] == 401  # no credential: the MCP endpoint answered
    challenge = dict(start["headers"])[b"www-authenticate"]
    assert b"127.0.0.1:18100" in challenge


@pytest.mark.django_db(transaction=True)
async def test_a_websocket_with_a_host_outside_allowed_hosts_is_refused():
    from mcpsite.routing import application

    scope = {"type": "websocket", "path": "/ws", "headers": [(b"host", b"127.0.0.1:1@evil.com")], "query_string": b"",
             "subprotocols": []}  # fmt: skip
    ws = ApplicationCommunicator(application, scope)
    await ws.send_input({"type": "websocket.connect"})
    assert (await ws.receive_output(5))["type"] == "websocket.close"
