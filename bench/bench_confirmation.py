"""Benchmark: a confirmed `message.send` on MCP 2026-07-28 (two rounds: the question, then the retry with the answer
and the sealed requestState) ÷ an unconfirmed one (a client without elicitation: one call, the seed's behaviour).

Through the site's real ASGI application in process (API key, rate limit, the SDK's 2026-07-28 transport, the
request-state boundary, the dispatcher, audit), raw JSON-RPC over an in-process HTTP client, the two kinds
interleaved so that noise hits both alike. Mail and delivery tasks go nowhere: the send is the stored message.
One child process per database; PostgreSQL is a fresh database on `scripts/testpg`'s cluster ($TESTPG_PORT).

    .venv/bin/python bench/bench_confirmation.py [--sends 200] [--database sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import boot, parse_per_database, report  # noqa: E402

VERSION = "2026-07-28"
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": VERSION,
    "Mcp-Method": "tools/call",
    "Mcp-Name": "message.send",
}


def call(capabilities: dict, number: int, **retry) -> dict:
    """A 2026-07-28 tools/call of message.send (a new text each time: each is a message of its own)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    params = {"name": "message.send", "arguments": {"to": "山田花子", "text": f"bench {number}"}, "_meta": meta}
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": {**params, **retry}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sends", type=int, default=200)
    args = parse_per_database(parser, __file__)
    if args is None:
        return
    os.environ.setdefault("EMAIL_URL", "locmem://")
    os.environ.setdefault("TASKS_BACKEND", "django.tasks.backends.dummy.DummyBackend")
    os.environ["MCP_AUDIT_FLUSH_SECONDS"] = "1"  # production's batching
    boot("confirmation", postgres=args.database == "postgres")

    import anyio
    import httpx2
    from asgiref.testing import ApplicationCommunicator
    from django.contrib.auth import get_user_model

    from mcpsite.guard import RequestGuard
    from mcpsite.routing import Application
    from mcpsite.services import api_key_create
    from reminders.models import Contact, Message

    owner = get_user_model().objects.create(username="bench")
    Contact.objects.create(owner=owner, name="山田花子", email="hanako@example.com")
    _key, raw = api_key_create(name="bench", owner=owner, scopes=["reminders"], rate="1000000/m")

    async def measure() -> tuple[list[float], list[float]]:
        app = Application()
        lifespan = ApplicationCommunicator(app, {"type": "lifespan"})
        await lifespan.send_input({"type": "lifespan.startup"})
        assert (await lifespan.receive_output(30))["type"] == "lifespan.startup.complete"
        transport = httpx2.ASGITransport(app=RequestGuard(app))
        headers = {**HEADERS, "Authorization": f"Bearer {raw}"}
        confirmed, unconfirmed = [], []
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000", headers=headers) as http:

            async def post(body: dict) -> dict:
                answer = (await http.post("/mcp", json=body)).json()
                assert "result" in answer, answer
                return answer["result"]

            async def send_unconfirmed(number: int) -> None:
                assert (await post(call({}, number)))["structuredContent"]["status"] == "ok"

            async def send_confirmed(number: int) -> None:
                asking = {"elicitation": {"form": {}}}
                question = await post(call(asking, number))
                assert question["resultType"] == "input_required", question
                answer = {"confirm": {"action": "accept", "content": {"confirm": True}}}
                sent = await post(call(asking, number, inputResponses=answer, requestState=question["requestState"]))
                assert sent["structuredContent"]["status"] == "ok", sent

            for number in range(10):  # warm-up
                await send_unconfirmed(number)
                await send_confirmed(number)
            print(f"timing {args.sends} sends of each kind, interleaved …", flush=True)
            for number in range(args.sends):
                for kind, samples in ((send_confirmed, confirmed), (send_unconfirmed, unconfirmed)):
                    started = time.perf_counter()
                    await kind(number)
                    samples.append(time.perf_counter() - started)
        await lifespan.send_input({"type": "lifespan.shutdown"})
        await lifespan.receive_output(30)
        return confirmed, unconfirmed

    confirmed, unconfirmed = anyio.run(measure)
    assert Message.objects.filter(confirmation_key__isnull=False).count() == args.sends + 10
    report("confirmed message.send (2 rounds)", confirmed, unconfirmed, "unconfirmed (1 call)")


if __name__ == "__main__":
    main()
