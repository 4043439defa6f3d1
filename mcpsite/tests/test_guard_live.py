"""The guard and the log filter in a real uvicorn: oversized and slow bodies, feed tokens in the access log."""

import socket
import uuid
from pathlib import Path

import httpx2
import pytest

from .live import live_site

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    with live_site(live_template, tmp_path_factory.mktemp("guard")) as live:
        live.env["HTTP_BODY_TIMEOUT_S"] = "3"
        live.url = live.start_server(access_log=True)
        yield live


def _open(url: str, head: str, body: bytes = b"") -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.sendall(head.encode() + b"\r\n" + body)
    return sock


def _status(sock: socket.socket) -> int:
    answer = b""
    while b"\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            break
        answer += chunk
    sock.close()
    return int(answer.split(b" ", 2)[1])


def test_a_gibibyte_declared_without_a_key_is_refused_before_the_body(site):
    """Issue #17: this buffered 300 MB into a temporary file before answering 401."""
    head = "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n"
    sock = _open(site.url, head, b"[" * 1000)  # a start of the body, then nothing more
    assert _status(sock) == 413
    no_key = "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n"
    assert _status(_open(site.url, no_key, b"[" * 1000)) == 401


def test_slow_bodies_time_out_and_another_key_is_served_meanwhile(site):
    """Issue #17: 200 trickled bodies were still open after 65 s."""
    head = (
        f"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {site.key}\r\nContent-Length: {len(PING)}\r\n"
    )
    slow = [_open(site.url, head, PING[:5]) for _ in range(50)]
    other_key, _pk = site.create_api_key(f"other-{uuid.uuid4().hex[:6]}", "--scopes", "cinema")
    answer = httpx2.post(f"{site.url}/rpc", content=PING, headers={"Authorization": f"Bearer {other_key}"}, timeout=30)
    assert answer.status_code == 200 and answer.json()["result"] == {}
    assert [_status(sock) for sock in slow] == [408] * 50


def test_the_calendar_feed_token_stays_out_of_the_access_log(site):
    """Any path under /calendar/, the 404 variants too (no suffix, `.ICS`, a dot segment, an encoded slash)."""
    token = f"feedsecret{uuid.uuid4().hex}"
    variants = [f"/calendar/{token}.ics", f"/calendar/{token}", f"/calendar/{token}.ICS", f"/calendar/./{token}.ics",
                f"/calendar%2F{token}.ics", f"/CALENDAR/{token}.ics"]  # fmt: skip
    for variant in variants:
        response = httpx2.get(httpx2.URL(site.url).copy_with(raw_path=variant.encode()), timeout=30)
        assert response.status_code == 404
    httpx2.get(f"{site.url}/healthz", timeout=30)  # a later line, so the feed's lines have been written
    port = site.url.rsplit(":", 1)[1]
    log = (Path(site.env["MCPSITE_VAR_DIR"]) / f"uvicorn-{port}.log").read_text()
    assert "GET /calendar/[redacted]" in log  # the access log is on, and wrote the line
    assert token not in log
