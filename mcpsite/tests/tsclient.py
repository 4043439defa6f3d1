"""The official TypeScript SDK v2 client (`@modelcontextprotocol/client`, pinned in scripts/node-tools, installed
from npm into .tools/ on first use) driven by `ts/client.mjs`, for live interop tests.

`ts_client(case, url, key, **arguments)` runs one case of client.mjs to its end and returns its result;
`TsClient` starts one and lets the test read its events while it runs (a listen stream, a call to abort).
"""

from __future__ import annotations

import functools
import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from .live import ROOT

SCRIPT = Path(__file__).parent / "ts" / "client.mjs"
# The TypeScript SDK v1 client (`@modelcontextprotocol/sdk` 1.x: protocol 2025-11-25, sessions), same protocol.
SCRIPT_V1 = Path(__file__).parent / "ts" / "client_v1.mjs"


@functools.cache
def node_bin() -> Path:
    """The directory of Node 22, with the pinned client installed beside it (scripts/node-tools)."""
    done = subprocess.run([str(ROOT / "scripts" / "node-tools")], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.fail(f"scripts/node-tools could not install Node 22 and the TypeScript client:\n{done.stderr}")
    return Path(done.stdout.strip())


def _command(
    case: str, url: str, key: str, arguments: dict[str, Any], script: Path = SCRIPT
) -> tuple[list[str], dict[str, str]]:
    bin_dir = node_bin()
    env = {**os.environ, "NODE_TOOLS": str(bin_dir.parents[2]), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return [str(bin_dir / "node"), str(script), case, url, key, json.dumps(arguments)], env


class TsClientError(Exception):
    """The case failed in the client: `error` is what it reported (name, message, code, data)."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error


def _outcome(line: dict[str, Any]) -> Any:
    if "error" in line:
        raise TsClientError(line["error"])
    return line["done"]


def ts_client(case: str, url: str, key: str, timeout: float = 60, script: Path = SCRIPT, **arguments: Any) -> Any:
    """Run `case` of client.mjs (or `script`) against `url` with `key`; its result (TsClientError if it failed)."""
    command, env = _command(case, url, key, arguments, script)
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines or not ({"done", "error"} & set(lines[-1])):
        raise AssertionError(f"client.mjs {case} ended without a result:\n{done.stdout}\n{done.stderr}")
    return _outcome(lines[-1])


class TsClient:
    """One case of client.mjs running in the background: `event()` reads its next event line, `tell(line)` writes
    one to the case (an order such as "abort"), `result()` waits for its end."""

    def __init__(self, case: str, url: str, key: str, script: Path = SCRIPT, **arguments: Any) -> None:
        command, env = _command(case, url, key, arguments, script)
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        # Lines are read by a thread into a queue: two lines arriving in one read (an event and the result) must not
        # be left in a file object's buffer where neither select() nor communicate() sees them.
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)  # the end of the output

    def tell(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def _stderr(self) -> str:
        return self.process.stderr.read() if self.process.stderr and self.process.poll() is not None else ""

    def event(self, timeout: float = 30) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout)  # a guard against hanging
        except queue.Empty:
            raise AssertionError(f"client.mjs sent no event within {timeout} s") from None
        if line is None:
            raise AssertionError(f"client.mjs ended early: {self._stderr()}")
        message = json.loads(line)
        if "event" not in message:
            _outcome(message)
            raise AssertionError(f"client.mjs finished while an event was expected: {message}")
        return message

    def result(self, timeout: float = 60) -> Any:
        self.process.wait(timeout=timeout)
        lines = []
        while (line := self.lines.get(timeout=timeout)) is not None:
            if line.startswith("{"):
                lines.append(json.loads(line))
        if not lines:
            raise AssertionError(f"client.mjs ended without a result: {self._stderr()}")
        return _outcome(lines[-1])

    def __enter__(self) -> TsClient:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
