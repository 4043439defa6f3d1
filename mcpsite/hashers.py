"""Argon2id at the OWASP minimum (m=19 MiB, t=2, p=1), computed on a pool of one thread per core.

Django's defaults (m=100 MiB, p=8) would cap bookings at a few a second on a 2-core machine and hand attackers a
cheap denial of service (docs/decisions/0006-reservation-passwords.md). Older hashes keep verifying and are upgraded
on the next successful check.

Request threads hashing on their own would run as many 19 MiB hashes at once as there are requests: the cores
time-slice them, and their memory no longer fits the shared cache, so each hash costs more CPU than the hasher's
rate promises. `password_hash` and `password_check` queue on PASSWORD_HASH_THREADS threads instead (one
per core by default), so at most that many run at once; argon2-cffi releases the GIL while it hashes.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.contrib.auth.hashers import Argon2PasswordHasher, check_password, make_password


class OwaspArgon2PasswordHasher(Argon2PasswordHasher):
    algorithm = "argon2"
    time_cost = 2
    memory_cost = 19 * 1024
    parallelism = 1


_pool: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()


def _hashing_pool() -> ThreadPoolExecutor:
    """The process's hashing threads, PASSWORD_HASH_THREADS of them (a changed setting starts a new pool)."""
    global _pool
    size = settings.PASSWORD_HASH_THREADS
    if _pool is None or _pool[0] != size:
        with _pool_lock:
            if _pool is None or _pool[0] != size:
                _pool = (size, ThreadPoolExecutor(size, thread_name_prefix="password-hash"))
    return _pool[1]


def password_hash(password: str) -> str:
    """`make_password(password)` with the configured hasher, on the hashing pool."""
    return _hashing_pool().submit(make_password, password).result()


def password_check(password: str, encoded: str) -> bool:
    """`check_password(password, encoded)` (constant time), on the hashing pool."""
    return _hashing_pool().submit(check_password, password, encoded).result()
