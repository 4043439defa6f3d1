"""The production recipe for protocol 2025-11-25 clients on several processes (docs/production.md, "Sessions behind
HAProxy"): `scripts/serve-balanced` starts two `scripts/serve` processes on PostgreSQL with sessions on, behind
HAProxy (deploy/haproxy/mcpsite.cfg), whose stick table learns each session's process from its `Mcp-Session-Id`.
The TypeScript SDK v1 client (`@modelcontextprotocol/sdk` 1.x, pinned in scripts/node-tools; ts/client_v1.mjs) gets
every feature through it: confirmation, a subscription hearing of a seat sold on the other process, progress,
cancellation, the MCP Apps views; and a session whose process dies gets 404 and starts again. GaluchatAPI is faked on
loopback at the HTTP layer.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time

import httpx2
import pytest

from geo.resolve import UPSTREAM_CONCURRENCY

from .live import ROOT, free_port, live_site, loopback_upstream
from .test_modern_live import SEATS, _Galuchat
from .test_ts_client import CONTACT_SETUP, SERVER_ENV, SHOW_SETUP, TO, abort_resolve_points, sent
from .tsclient import SCRIPT_V1, TsClient, ts_client

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

HANDSHAKE = {"MCP-Protocol-Version": "2025-11-25", "Accept": "application/json, text/event-stream"}


class Balanced:
    """`scripts/serve-balanced` running: `url` (HAProxy's /mcp), `backends` (each process's URL -> pid)."""

    def __init__(self, env: dict, log_dir) -> None:
        port = free_port()
        self.log = log_dir / "serve-balanced.log"
        env = {**env, "PORT": str(port), "BACKEND_PORT": str(free_port()), "BACKENDS": "2"}
        with open(self.log, "w") as out:
            self.process = subprocess.Popen(
                [str(ROOT / "scripts" / "serve-balanced")], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 240
        while "serving on" not in self.log.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"scripts/serve-balanced did not start:\n{self.log.read_text()}")
            time.sleep(0.2)
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.backends = {
            url: int(pid) for url, pid in re.findall(r"^backend (\S+) pid (\d+)$", self.log.read_text(), re.M)
        }

    def holder(self, key: str, session_id: str) -> str:
        """The process that holds `session_id`: the one that answers a ping in it (the other answers 404)."""
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        headers = {**HANDSHAKE, "Authorization": f"Bearer {key}", "Mcp-Session-Id": session_id}
        answers = {url: httpx2.post(f"{url}/mcp", json=ping, headers=headers, timeout=30).status_code
                   for url in self.backends}  # fmt: skip
        assert sorted(answers.values()) == [200, 404], answers
        return next(url for url, status in answers.items() if status == 200)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)  # the script stops HAProxy and its processes
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            for pid in self.backends.values():
                _kill(pid)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _refused(url: str) -> None:
    """Wait until nothing accepts connections at `url`."""
    address = url.removeprefix("http://").rsplit(":", 1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection((address[0], int(address[1])), timeout=1).close()
        except ConnectionRefusedError:
            return
        time.sleep(0.05)
    raise AssertionError(f"{url} still accepts connections")


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    directory = tmp_path_factory.mktemp("balanced")
    with loopback_upstream(_Galuchat) as galuchat, live_site(live_template, directory) as site:
        site.shell(CONTACT_SETUP + SHOW_SETUP)
        balanced = Balanced({**site.env, "GALUCHAT_BASE_URL": galuchat, **SERVER_ENV}, directory)
        try:
            yield site, balanced
        finally:
            balanced.stop()


def _send(balanced: Balanced, key: str, answer: str) -> dict:
    """message.send through the balancer, the client answering its question with `answer`."""
    arguments = {"to": TO, "text": f"v1 {answer}"}
    return ts_client("call_answering", balanced.url, key, script=SCRIPT_V1, answer=answer, name="message.send",
                     arguments=arguments)  # fmt: skip


def test_2025_11_25_confirmation_decline_sends_nothing_and_accept_sends_once(site):
    site, balanced = site
    declined, accepted = (_send(balanced, site.key, answer) for answer in ("decline", "accept"))
    assert declined["protocolVersion"] == accepted["protocolVersion"] == "2025-11-25"
    assert len(declined["asked"]) == len(accepted["asked"]) == 1 and "v1 accept" in accepted["asked"][0]
    assert declined["result"]["structuredContent"]["status"] == "error"
    assert accepted["result"]["structuredContent"]["status"] == "ok"
    stored = sent(site)
    assert "v1 decline" not in stored
    assert stored["v1 accept"] == accepted["result"]["structuredContent"]["id"]


def test_a_seat_sold_through_rpc_on_the_other_process_reaches_the_subscription(site):
    site, balanced = site
    uri = SEATS.format("live0")
    with TsClient("subscribe", balanced.url, site.key, SCRIPT_V1, uri=uri) as subscriber:
        subscribed = subscriber.event()
        holder = balanced.holder(site.key, subscribed["sessionId"])
        other = next(url for url in balanced.backends if url != holder)
        body = {"jsonrpc": "2.0", "id": 1, "method": "reserve_seats",
                "params": {"schedule_id": "live0", "seats": ["A3"], "reservation_password": "secret12"}}  # fmt: skip
        sold = httpx2.post(f"{other}/rpc", json=body, headers={"Authorization": f"Bearer {site.key}"}, timeout=30)
        updated = subscriber.event()
        result = subscriber.result()
    assert sold.json()["result"]["reserved_seats"] == ["A3"]
    assert updated == {"event": "updated", "uri": uri}
    assert result == {"updates": 1}


def test_progress_arrives_during_a_call(site):
    site, balanced = site
    _Galuchat.open.set()
    points = [{"ref": f"p{i}", "lat": 35, "lon": 135 + i} for i in range(3)]
    try:
        answer = ts_client("progress", balanced.url, site.key, script=SCRIPT_V1,
                           name="resolve_points", arguments={"points": points})  # fmt: skip
    finally:
        while _Galuchat.held.acquire(blocking=False):
            pass
    assert len(answer["result"]["structuredContent"]["results"]) == 3
    assert answer["reports"] == [[1, 3], [2, 3], [3, 3]]


@pytest.mark.parametrize("abort", [True, False], ids=["aborted", "control"])
def test_a_cancelled_resolve_points_stops_its_upstream_requests(site, abort):
    """The client aborts (notifications/cancelled, a POST of its own that HAProxy sends to the session's process)
    once every upstream worker's request is held, so only those reach GaluchatAPI; the control sends all 12."""
    site, balanced = site
    in_flight, result = abort_resolve_points(site, balanced.url, abort, SCRIPT_V1)
    assert in_flight == UPSTREAM_CONCURRENCY < 12
    assert result["aborted"] is abort
    assert len(_Galuchat.received) == (in_flight if abort else 12)


@pytest.mark.parametrize("apps", [True, False], ids=["apps-host", "control"])
def test_a_host_declaring_mcp_apps_gets_the_views_on_tools_list(site, apps):
    site, balanced = site
    tools = ts_client("list_tools", balanced.url, site.key, script=SCRIPT_V1, apps=apps)["tools"]
    views = {name: meta["ui"]["resourceUri"] for name, meta in tools.items() if meta and "ui" in meta}
    if apps:
        assert views == {
            "get_seat_availability": "ui://cinema/seat-picker",
            "build_cart_mandates": "ui://merchant/cart-review",
            "message.send": "ui://reminders/message-card",
            "message.confirm_send": "ui://reminders/message-card",
        }
    else:
        assert views == {} and "message.confirm_send" not in tools


def test_sessionless_2026_07_28_clients_reach_either_process(site):
    site, balanced = site
    result = ts_client("list_and_call", balanced.url, site.key, name="get_movie_list", arguments={})
    assert result["protocolVersion"] == "2026-07-28"
    assert result["result"]["isError"] is False


def test_a_session_whose_process_dies_gets_404_and_the_client_starts_again(site):
    """Runs last in the module: it kills one of the two processes (SIGKILL, as a crash)."""
    site, balanced = site
    with TsClient("survive_a_lost_process", balanced.url, site.key, SCRIPT_V1) as client:
        ready = client.event()
        holder = balanced.holder(site.key, ready["sessionId"])
        _kill(balanced.backends[holder])
        _refused(holder)  # gone: a request sent while it dies may get 502 from HAProxy instead
        client.tell("next")
        result = client.result(timeout=120)
    assert result["lost"]["code"] == 404 and "Session not found" in json.dumps(result["lost"])
    assert result["after"] == result["before"] > 0
    assert result["sessionId"] and result["sessionId"] != result["firstSessionId"]
