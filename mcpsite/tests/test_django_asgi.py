"""Django's pages under ASGI through its WSGI handler (mcpsite/django_asgi.py): the environ a view sees, whole and
streaming responses, and a client that leaves in the middle of a stream."""

from __future__ import annotations

import threading

import pytest
from asgiref.testing import ApplicationCommunicator

from mcpsite.django_asgi import DjangoASGI, wsgi_environ

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def scope(**extra):
    return {
        "type": "http", "method": "GET", "path": "/", "query_string": b"", "headers": [(b"host", b"testserver")],
        "server": ("testserver", 80), "client": ("10.0.0.7", 5151), "scheme": "https", **extra,
    }  # fmt: skip


def test_the_environ_of_a_scope():
    environ = wsgi_environ(
        scope(
            method="POST",
            path="/admin/映画/",
            root_path="/site",
            query_string=b"q=%E6%98%A0&x=1",
            headers=[
                (b"host", b"example.jp"),
                (b"content-type", b"application/json"),
                (b"content-length", b"2"),
                (b"cookie", b"a=1"),
                (b"cookie", b"b=2"),
                (b"accept", b"text/html"),
                (b"accept", b"application/json"),
            ],
        ),
        b"{}",
    )
    assert environ["REQUEST_METHOD"] == "POST"
    assert environ["PATH_INFO"].encode("latin-1").decode("utf-8") == "/admin/映画/"  # PEP 3333: bytes as latin-1
    assert environ["SCRIPT_NAME"] == "/site"
    assert environ["QUERY_STRING"] == "q=%E6%98%A0&x=1"
    assert (environ["CONTENT_TYPE"], environ["CONTENT_LENGTH"]) == ("application/json", "2")
    assert environ["HTTP_COOKIE"] == "a=1; b=2"
    assert environ["HTTP_ACCEPT"] == "text/html,application/json"
    assert (environ["REMOTE_ADDR"], environ["wsgi.url_scheme"], environ["HTTP_HOST"]) == (
        "10.0.0.7",
        "https",
        "example.jp",
    )
    assert environ["wsgi.input"].read() == b"{}"


class Streaming:
    """A streaming WSGI response (as Django's StreamingHttpResponse): records its thread, its chunks and its close."""

    streaming = True

    def __init__(self, chunks: int) -> None:
        self.chunks, self.sent, self.closed_in = chunks, 0, None
        self.release = threading.Event()

    def __iter__(self):
        for n in range(self.chunks):
            if n == 2:
                self.release.wait(5)
            self.sent += 1
            yield f"chunk {n}\n".encode()

    def close(self):
        self.closed_in = threading.current_thread().name


async def request(app, **extra):
    http = ApplicationCommunicator(app, scope(**extra))
    await http.send_input({"type": "http.request", "body": b"", "more_body": False})
    return http


async def test_a_streaming_response_is_sent_as_it_comes_and_closed_in_its_thread():
    app, response, threads = DjangoASGI(threads=2), Streaming(5), []

    def handler(environ, start_response):
        threads.append(threading.current_thread().name)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return response

    app.handler = handler
    response.release.set()
    http = await request(app)
    assert (await http.receive_output(5))["status"] == 200
    body = b""
    while True:
        message = await http.receive_output(5)
        body += message["body"]
        if not message.get("more_body"):
            break
    await http.wait(5)
    assert body == b"".join(f"chunk {n}\n".encode() for n in range(5))
    assert response.closed_in == threads[0]  # request_finished runs where the request ran


async def test_a_client_leaving_mid_stream_stops_the_response():
    app, response = DjangoASGI(threads=2), Streaming(1000)

    def handler(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return response

    app.handler = handler
    http = await request(app)
    assert (await http.receive_output(5))["status"] == 200
    assert (await http.receive_output(5))["body"] == b"chunk 0\n"
    await http.send_input({"type": "http.disconnect"})
    response.release.set()
    await http.wait(5)
    assert response.closed_in is not None
    assert response.sent < 20  # the rest of the thousand chunks were never produced
