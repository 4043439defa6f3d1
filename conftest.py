"""Fixtures shared by every app's tests."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache, caches
from django.core.cache.backends.db import DatabaseCache
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from mcpsite.core.scopes import tool_groups
from mcpsite.mcp import dispatch, subscriptions, threads

# Property tests assert behaviour, not speed: on shared cores an example or its generation may take longer than
# Hypothesis's default 200 ms deadline and its too-slow check allow, by the machine's load alone.
hypothesis_settings.register_profile("mcpsite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("mcpsite")


def pytest_sessionstart(session):
    """The Japanese catalogue is compiled by `make` (compilemessages); a bare `pytest` after editing the .po
    compiles it too, so the tests never read a stale or missing django.mo."""
    from django.conf import settings
    from django.core.management import call_command
    from django.utils.translation.reloader import translation_file_changed

    for po in (path for locale_path in settings.LOCALE_PATHS for path in locale_path.glob("*/LC_MESSAGES/*.po")):
        mo = po.with_suffix(".mo")
        if not mo.exists() or mo.stat().st_mtime < po.stat().st_mtime:
            call_command("compilemessages", locale=[po.parent.parent.name], verbosity=0)
            translation_file_changed(sender=None, file_path=mo)  # drop catalogues loaded before it existed


def pytest_configure(config):
    """The run's live-site template (mcpsite/tests/live.py) is named here, in the process pytest-xdist's workers
    inherit their environment from, so that they share it; that process removes it at the end."""
    import os
    import tempfile
    import uuid

    if not hasattr(config, "workerinput") and "MCPSITE_LIVE_RUN" not in os.environ:
        os.environ["MCPSITE_LIVE_RUN"] = uuid.uuid4().hex[:10]
        os.environ["MCPSITE_LIVE_DIR"] = tempfile.mkdtemp(prefix="mcpsite-live-")
        config._mcpsite_owns_live_template = True
        if config.getoption("numprocesses", None):  # a whole run in workers: prepare while they start
            _start_live_template()


def pytest_unconfigure(config):
    import os
    import shutil

    if getattr(config, "_mcpsite_owns_live_template", False):
        from mcpsite.tests.live import drop_template

        if "thread" in _live_template:
            _live_template["thread"].join()

        drop_template(os.environ.pop("MCPSITE_LIVE_RUN"))
        shutil.rmtree(os.environ.pop("MCPSITE_LIVE_DIR"), ignore_errors=True)


_live_template: dict = {}


def _start_live_template() -> None:
    """Prepare the live-site template in a thread (a subprocess does the work) while the first tests run."""
    import os
    import threading
    from pathlib import Path

    from mcpsite.tests.live import prepare_template

    def prepare():
        try:
            _live_template["template"] = prepare_template(
                Path(os.environ["MCPSITE_LIVE_DIR"]), os.environ["MCPSITE_LIVE_RUN"]
            )
        except Exception as exc:  # raised by the fixture, in the first test that needs it
            _live_template["error"] = exc

    _live_template["thread"] = threading.Thread(target=prepare, daemon=True)
    _live_template["thread"].start()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup):
    """pytest-django's test databases; before they are dropped, async tests' `sync_to_async` thread (asgiref's one
    thread for sync code called from an event loop with no outer `async_to_sync`, the same one here) gives back its
    connection, which would otherwise keep PostgreSQL from dropping the database."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from asgiref.sync import sync_to_async
    from django.db import connections

    yield
    with ThreadPoolExecutor(1) as thread:  # a loop of its own: Playwright's may be running in this thread
        thread.submit(asyncio.run, sync_to_async(connections.close_all)()).result()


@pytest.fixture(scope="session")
def live_template():
    """The database, static files and key every `live_site` of this run copies (mcpsite/tests/live.py)."""
    if "thread" not in _live_template:
        _start_live_template()
    _live_template["thread"].join()
    if "error" in _live_template:
        raise _live_template["error"]
    return _live_template["template"]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """`@pytest.mark.postgres` tests run only in the PostgreSQL pass of `make test`; browser tests run last (one
    Chromium for all of them); the live-site template is started if a test needs it."""
    from django.conf import settings

    # Stable sorts (pytest-django's order otherwise): browser tests last; in xdist workers the live-server modules,
    # the longest, first, so that the quick tests fill in around them.
    items.sort(key=_uses_browser)
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: "live_template" not in item.fixturenames)
    wanted = not config.option.collectonly and any("live_template" in item.fixturenames for item in items)
    if wanted and "thread" not in _live_template:
        _start_live_template()
    if "postgresql" in settings.DATABASES["default"]["ENGINE"]:
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (runs in the PostgreSQL pass of make test)")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _clear_cache(request):
    """Rate-limit counters live in the cache; each test starts from zero. A database cache is left alone after a test
    without the database: clearing it would open the connection pool on the project's database name before
    pytest-django names the test database, and every later test of the worker would wait on that pool."""
    yield
    if isinstance(caches["default"], DatabaseCache) and "django_db_setup" not in request.fixturenames:
        return
    try:
        cache.clear()
    except Exception:  # the cache table may be gone after a transactional test's flush
        pass


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="agent-owner", email="owner@example.com", password="x" * 12)


@pytest.fixture
def make_api_key(user):
    """make_api_key(scopes=[...], rate="100/m", owner=user) -> (ApiKey, raw_key)."""
    from mcpsite.services import api_key_create

    def make(scopes=None, rate=None, owner=None, name="test key"):
        return api_key_create(
            name=name, owner=owner or user, scopes=list(tool_groups() if scopes is None else scopes), rate=rate
        )

    return make


@pytest.fixture
def api_key(make_api_key):
    return make_api_key()


@pytest.fixture
def http_post(client, api_key):
    """http_post(path, body, raw_key=<the api_key fixture's>) -> the response to a JSON POST through the Django
    test client, with `Authorization: Bearer <raw_key>` (none when raw_key is empty). str/bytes bodies go as sent."""
    _key, default_raw = api_key

    def send(path: str, body, raw_key: str | None = default_raw):
        data = body if isinstance(body, str | bytes) else json.dumps(body)
        headers = {"Authorization": f"Bearer {raw_key}"} if raw_key else {}
        return client.post(path, data=data, content_type="application/json", headers=headers)

    return send


_THE_API_KEY = object()  # "the api_key fixture's key"


class Rpc:
    """Seed JSON-RPC over `POST /rpc` through the Django test client, as the `api_key` fixture's key (`raw_key=`
    another, or None for no Authorization header)."""

    def __init__(self, http_post):
        self.http_post = http_post

    def post(self, body, raw_key=_THE_API_KEY):
        """The HTTP response to any body (a batch, bad JSON, ...)."""
        return self.http_post("/rpc", body) if raw_key is _THE_API_KEY else self.http_post("/rpc", body, raw_key)

    def send(self, message: dict, raw_key=_THE_API_KEY, status: int | None = 200) -> dict:
        """The JSON answer to `message`, whose HTTP status must be `status` (None: any)."""
        response = self.post(message, raw_key)
        if status is not None:
            assert response.status_code == status, response.content
        return response.json()

    def __call__(self, method: str, params: dict | None = None, id_=1, raw_key=_THE_API_KEY) -> dict:
        """The JSON answer to a call of `method` (any HTTP status)."""
        message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}
        return self.send(message, raw_key, status=None)


@pytest.fixture
def rpc(http_post):
    """rpc(method, params, id_=1) -> the JSON-RPC answer of POST /rpc; rpc.send(message) for a whole message,
    rpc.post(body) for the HTTP response (see Rpc)."""
    return Rpc(http_post)


@pytest.fixture
def tool_context(api_key):
    key, _raw = api_key
    return dispatch.call_context(transport="test", api_key=key)


@pytest.fixture
def call_tool(tool_context):
    """call_tool(name, arguments, ctx=None) -> the tool's result dict through the real dispatcher.

    ApplicationErrors propagate (assert with pytest.raises); in-band seed errors come back as the result.
    """

    def call(name, arguments=None, ctx=None):
        return dispatch.call_tool(ctx or tool_context, name, arguments or {}).data

    return call


@pytest.fixture
def mcp_client():
    """mcp_client(group, fn) -> `await fn(client)`, the official client connected in process to the real SDK server
    serving `group` (as a trusted caller, like stdio: no API key)."""
    import anyio
    from mcp import Client

    from mcpsite.mcp.server import build_server

    def run(group, fn):
        def context_for(_ctx):
            return dispatch.call_context(transport="test"), [group]

        async def connected():
            async with Client(build_server(context_for), mode="legacy") as client:
                return await fn(client)

        return anyio.run(connected)

    return run


@pytest.fixture
def mcp_run():
    """mcp_run(fn, groups=None, api_key=None, **client_options) -> `await fn(client)`: the official client in process
    against the real SDK server with sessions (as stdio serves it: elicitation, progress, subscriptions), calling as
    `api_key` (None: a trusted local caller). Use with `transactional_db`: the server reads in worker threads."""
    import anyio
    from mcp import Client

    from mcpsite.mcp.server import build_server

    def run(fn, groups=None, api_key=None, **client_options):
        def context_for(_ctx):
            return dispatch.call_context(transport="test", api_key=api_key), groups

        async def connected():
            server = build_server(context_for, subscriptions=True)
            async with Client(server, mode="legacy", cache=None, **client_options) as client:
                return await fn(client)

        return anyio.run(connected)

    return run


@pytest.fixture
def mcp_tools_list(mcp_client):
    """mcp_tools_list(group) -> the tools/list answer of the real SDK server, in process, via the official client."""

    async def listed(client):
        return (await client.list_tools()).tools

    return lambda group: mcp_client(group, listed)


class _Chromium:
    """One headless Debian Chromium (through Playwright) for consecutive browser tests: a new context per test.

    While Playwright runs, its event loop counts as running in this thread, so `anyio.run` and Django's async-safety
    guard would fail in a test without a browser: `pytest_runtest_setup` stops it before such a test, and
    `pytest_collection_modifyitems` runs the browser tests last so that it starts once per process.
    """

    CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip

    def __init__(self):
        self.playwright = self.browser = None

    def get(self):
        import os
        import shutil

        if self.browser is None:
            from playwright.sync_api import sync_playwright

            chromium = shutil.which("chromium") or "/usr/bin/chromium"
            if not os.path.exists(chromium):
                pytest.fail("Debian chromium is not installed (make test installs it: apt-get install chromium)")
            # Playwright's sync API runs an event loop in this thread; the ORM calls made by the test itself are
            # still synchronous, so Django's async-safety guard does not apply here.
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
            self.playwright = sync_playwright().start()
            self.browser = self.playwright.chromium.launch(
                executable_path=chromium, headless=True, args=self.CHROMIUM_ARGS
            )
        return self.browser

    def stop(self):
        import os

        if self.playwright is not None:
            self.browser.close()
            self.playwright.stop()
            self.playwright = self.browser = None
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


_chromium = _Chromium()


def _uses_browser(item) -> bool:
    return bool({"browser_page", "apps_browser"} & set(getattr(item, "fixturenames", ())))


def pytest_runtest_setup(item):
    if not _uses_browser(item):
        _chromium.stop()


@pytest.fixture(scope="session")
def chromium(live_server):
    """The run's Chromium (see _Chromium); stopped at the end of the session, before pytest-django's `live_server`
    (whose request threads share the in-memory SQLite test database) stops."""
    yield _chromium
    _chromium.stop()


@pytest.fixture(scope="session")
def apps_browser():
    """The run's Chromium (see _Chromium) for tests against a live site of their own (mcpsite/tests/live.py), which
    need no pytest-django `live_server`: the MCP Apps test host (mcpsite/tests/appshost.py). `.get()` the browser
    in each test (a test without a browser in between stops it)."""
    yield _chromium
    _chromium.stop()


@pytest.fixture
def browser_page(chromium):
    """A page in a fresh browser context (cookies, storage) of the session's headless Chromium, for staff-facing
    admin pages. Use with pytest-django's `live_server` (and `transactional_db`): log in through /admin/login/."""
    # Staff browsers ask for Japanese (the admin follows Accept-Language through LocaleMiddleware).
    context = chromium.get().new_context(locale="ja-JP")
    try:
        yield context.new_page()
    finally:
        context.close()
        # Connections opened while Playwright's loop ran are invisible to pytest-django's teardown; close them
        # (still inside the loop) so the PostgreSQL test database can be dropped.
        from django.db import connections

        connections.close_all()


@pytest.fixture
def admin_login(browser_page, live_server, django_user_model):
    """admin_login() -> a Playwright page logged into the admin as a superuser."""

    def login(username="staff", password="staff-password-123"):
        if not django_user_model.objects.filter(username=username).exists():
            django_user_model.objects.create_superuser(username=username, email="staff@example.com", password=password)
        browser_page.goto(f"{live_server.url}/admin/login/")
        browser_page.fill("#id_username", username)
        browser_page.fill("#id_password", password)
        browser_page.click("input[type=submit]")
        browser_page.wait_for_url(f"{live_server.url}/admin/")
        return browser_page

    return login


@pytest.fixture(autouse=True)
def _audit_in_the_call(settings):
    """Audit rows are written inside each call, so tests read them at once; the deferred writer (production's
    default) has its own tests in mcpsite/tests/test_serving.py."""
    settings.MCP_AUDIT_FLUSH_SECONDS = 0


@pytest.fixture(autouse=True)
def _fresh_worker_threads():
    """Tool worker threads keep their database connection (SQLite); one opened in a database test must not be
    used by a later test without database access."""
    yield
    threads.stop_worker_threads()
    subscriptions.listener.stop()  # its PostgreSQL connection would keep the test database from being dropped
