"""What every long-running background process of the site shares (the task worker, the reminder scheduler): its
heartbeat, beaten from a thread of its own so a long task does not look like a dead worker."""

from __future__ import annotations

import logging
import threading
from types import TracebackType

from django.db import connections
from django.utils import timezone

from .core.outage import DEPENDENCY_ERRORS, drop_connections
from .services import HEARTBEAT_SECONDS, heartbeat_beat, heartbeat_end

logger = logging.getLogger("mcpsite")


class HeartbeatThread:
    """`with HeartbeatThread(name=…, kind=…):` beats every HEARTBEAT_SECONDS until the block ends, then removes the
    process's heartbeat. A beat that fails (the database is down) is skipped: the process's own loop reports the
    outage."""

    def __init__(self, *, name: str, kind: str, interval: float = HEARTBEAT_SECONDS) -> None:
        self.name = name
        self.kind = kind
        self.interval = interval
        self.started_at = timezone.now()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, name=f"heartbeat-{name}", daemon=True)

    def beat(self) -> None:
        try:
            heartbeat_beat(name=self.name, kind=self.kind, started_at=self.started_at)
        except DEPENDENCY_ERRORS:
            drop_connections()

    def run(self) -> None:
        try:
            while not self.stop.wait(self.interval):
                self.beat()
        finally:
            connections.close_all()

    def __enter__(self) -> HeartbeatThread:
        self.beat()
        self.thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop.set()
        self.thread.join(timeout=self.interval + 5)
        try:
            heartbeat_end(name=self.name)
        except DEPENDENCY_ERRORS:
            logger.info("Could not remove the heartbeat of %s (the database is unavailable)", self.name)
