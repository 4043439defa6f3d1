"""Talk to the real ASGI application over `/ws` in process.

channels.testing's WebsocketCommunicator imports daphne (not installed); this is the same ASGI
conversation it holds, spelled out.
"""

from __future__ import annotations

import json

from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator


def exchange(raw_key: str, messages: list[dict], path: str = "/ws") -> tuple[list[dict], dict | None]:
    """Send each message on `path`, collect each answer; the second value is the server's close, if it closed."""
    return exchange_raw(raw_key, [json.dumps(message, ensure_ascii=False) for message in messages], path)


def handshake(raw_key: str | None, path: str = "/ws") -> list[dict]:
    """The server's answer to a handshake it refuses: the messages it sends (a denial response, or a close)."""
    from mcpsite.routing import application

    async def run():
        headers = [(b"authorization", f"Bearer {raw_key}".encode())] if raw_key else []
        scope = {"type": "websocket", "path": path, "raw_path": path.encode(), "query_string": b"",
                 "headers": headers, "subprotocols": [], "extensions": {"websocket.http.response": {}}}  # fmt: skip
        communicator = ApplicationCommunicator(application, scope)
        await communicator.send_input({"type": "websocket.connect"})
        sent = [await communicator.receive_output(timeout=10)]
        if sent[0]["type"] == "websocket.http.response.start":
            sent.append(await communicator.receive_output(timeout=10))
        await communicator.wait(timeout=5)
        return sent

    return async_to_sync(run)()


def exchange_raw(raw_key: str, texts: list[str], path: str = "/ws") -> tuple[list[dict], dict | None]:
    """exchange() with each text frame as given (malformed JSON too)."""
    from mcpsite.routing import application

    async def run():
        scope = {
            "type": "websocket",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "headers": [(b"authorization", f"Bearer {raw_key}".encode())],
            "subprotocols": [],
        }
        communicator = ApplicationCommunicator(application, scope)
        await communicator.send_input({"type": "websocket.connect"})
        assert (await communicator.receive_output(timeout=10))["type"] == "websocket.accept"
        answers = []
        for text in texts:
            await communicator.send_input({"type": "websocket.receive", "text": text})
            answers.append(json.loads((await communicator.receive_output(timeout=10))["text"]))
        closed = None
        if not await communicator.receive_nothing(timeout=0.2):
            closed = await communicator.receive_output(timeout=1)
        await communicator.send_input({"type": "websocket.disconnect", "code": 1000})
        await communicator.wait(timeout=5)
        return answers, closed

    return async_to_sync(run)()
