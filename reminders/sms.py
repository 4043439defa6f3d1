"""Pluggable SMS delivery, chosen by the `SMS_BACKEND` setting (a dotted class path).

No provider ships with the project: an empty setting means SMS is not configured, and every SMS
fails with a reason that says so (recorded on the message, visible in the admin). A provider is a
class with `send(*, to: str, text: str) -> None` that raises `SmsError` on failure.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

from django.conf import settings
from django.utils import timezone
from django.utils.module_loading import import_string

logger = logging.getLogger("reminders.sms")


class SmsError(Exception):
    """A delivery failure whose message is safe to show staff."""


class SmsNotConfigured(SmsError):
    def __init__(self) -> None:
        super().__init__("No SMS provider is configured (set SMS_BACKEND to a provider class)")


class BaseSmsBackend:
    def send(self, *, to: str, text: str) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class LocmemSmsBackend(BaseSmsBackend):
    """Keeps messages in `LocmemSmsBackend.outbox` (tests and demos), like Django's locmem mail backend."""

    outbox: list[dict] = []
    _lock = threading.Lock()

    def send(self, *, to: str, text: str) -> None:
        with self._lock:
            type(self).outbox.append({"to": to, "text": text})


class FileSmsBackend(BaseSmsBackend):
    """Appends each SMS as a JSON line to VAR_DIR/sms.jsonl, so a first run can show what was sent."""

    def send(self, *, to: str, text: str) -> None:
        path = Path(settings.VAR_DIR) / "sms.jsonl"
        line = json.dumps({"at": timezone.now().isoformat(), "to": to, "text": text}, ensure_ascii=False)
        with path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")


def is_configured() -> bool:
    return bool(settings.SMS_BACKEND)


def get_backend() -> BaseSmsBackend:
    if not settings.SMS_BACKEND:
        raise SmsNotConfigured()
    return import_string(settings.SMS_BACKEND)()


def send_sms(*, to: str, text: str) -> None:
    get_backend().send(to=to, text=text)
