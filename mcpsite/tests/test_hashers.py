"""Reservation passwords are hashed on PASSWORD_HASH_THREADS threads (mcpsite/hashers.py), never more at once."""

from __future__ import annotations

import threading
import time

from django.contrib.auth.hashers import identify_hasher, make_password

from mcpsite import hashers
from mcpsite.tests.concurrency import run_together

CALLERS = 8


def _count_concurrent_hashes(monkeypatch, hash_one) -> int:
    """The most hashes running at once when CALLERS request threads, released together, each hash a password."""
    running, peak, lock = [0], [0], threading.Lock()

    def slow_make_password(password: str) -> str:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)  # a hash's duration, without its 19 MiB (8 at once on a shared machine)
        with lock:
            running[0] -= 1
        return "argon2$stand-in"

    monkeypatch.setattr(hashers, "make_password", slow_make_password)
    results, errors = run_together(lambda i: hash_one(f"password-{i}"), CALLERS)
    assert errors == [] and results == ["argon2$stand-in"] * CALLERS
    return peak[0]


def test_at_most_password_hash_threads_hashes_run_at_once(monkeypatch, settings):
    settings.PASSWORD_HASH_THREADS = 2
    assert _count_concurrent_hashes(monkeypatch, hashers.password_hash) == 2


def test_control_hashing_in_each_request_thread_runs_them_all_at_once(monkeypatch, settings):
    settings.PASSWORD_HASH_THREADS = 2
    assert _count_concurrent_hashes(monkeypatch, lambda password: hashers.make_password(password)) == CALLERS


def test_the_pooled_hash_is_the_configured_hasher_and_checks(settings):
    settings.PASSWORD_HASH_THREADS = 1
    encoded = hashers.password_hash("a-reservation-password")
    assert identify_hasher(encoded).algorithm == "argon2" and encoded.startswith("argon2$argon2id$")
    assert hashers.password_check("a-reservation-password", encoded)
    assert not hashers.password_check("another-password", encoded)
    assert hashers.password_check("older-hash", make_password("older-hash", hasher="pbkdf2_sha256"))
