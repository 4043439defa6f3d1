"""The server protocol scripts/serve runs: a request whose headers trickle in is cut off (HTTP_HEADER_TIMEOUT_S),
while whole requests are served as uvicorn serves them. Control: uvicorn's own protocol keeps the trickle open."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from mcpsite.serving import HeaderTimeoutProtocol

from .live import free_port


async def hello(scope, receive, send):
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@contextlib.contextmanager
def serving(protocol):
    port = free_port()
    config = uvicorn.Config(hello, host="127.0.0.1", port=port, http=protocol, lifespan="off", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)


def trickle_is_closed(port: int, seconds: float) -> bool:
    """Send half a request's headers and wait: whether the server closed the connection meanwhile."""
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        client.settimeout(seconds)
        try:
            return client.recv(100) == b""
        except TimeoutError:
            return False


@pytest.mark.parametrize(("protocol", "closed"), [(HeaderTimeoutProtocol, True), (HttpToolsProtocol, False)])
def test_headers_that_trickle_in_are_cut_off(settings, protocol, closed):
    settings.HTTP_HEADER_TIMEOUT_S = 0.5
    with serving(protocol) as port:
        assert trickle_is_closed(port, 3) is closed


def test_whole_requests_on_a_kept_alive_connection_are_served(settings):
    settings.HTTP_HEADER_TIMEOUT_S = 0.5
    with serving(HeaderTimeoutProtocol) as port, socket.create_connection(("127.0.0.1", port)) as client:
        client.settimeout(5)
        for _ in range(2):
            client.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = b""
            while not answer.endswith(b"ok"):
                part = client.recv(1000)
                assert part, answer  # not closed
                answer += part
            time.sleep(1)  # longer than the header bound, shorter than uvicorn's keep-alive: still served
