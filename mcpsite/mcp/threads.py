"""The worker threads tools and other ORM work run in, off the event loop: a pool for database work and one for
tools that wait on another service (docs/decisions/0014-owned-serving-pieces.md)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import close_old_connections

from mcpsite.core import metrics

_executors: dict[str, ThreadPoolExecutor] = {}
_executors_lock = threading.Lock()


def _executor(kind: str) -> ThreadPoolExecutor:
    """The process's worker threads for `kind`: "tool" (database work) or "upstream" (tools that wait on another
    service). Separate pools, so calls stuck on a dead upstream cannot take the threads every other call needs."""
    if (executor := _executors.get(kind)) is not None:
        return executor
    with _executors_lock:
        if kind not in _executors:
            size = settings.MCP_UPSTREAM_THREADS if kind == "upstream" else settings.MCP_TOOL_THREADS
            _executors[kind] = ThreadPoolExecutor(max_workers=size, thread_name_prefix=f"mcp-{kind}")
        return _executors[kind]


def in_worker_thread(func, kind: str = "tool"):
    busy = metrics.WORKER_THREADS_BUSY.labels(kind)

    def run(*args, **kwargs):
        busy.inc()
        close_old_connections()
        try:
            return func(*args, **kwargs)
        finally:
            close_old_connections()
            busy.dec()

    async def call(*args, **kwargs):
        # Calls from different clients run in parallel worker threads, with the caller's context variables, as
        # asgiref's sync_to_async(thread_sensitive=False) would run them without its per-call set-up on the loop.
        context = contextvars.copy_context()
        job = functools.partial(context.run, run, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(_executor(kind), job)

    return call


def stop_worker_threads() -> None:
    """End this process's worker threads (and the database connections they keep); new ones start on demand.
    For tests, where a thread's connection must not outlive the test that opened it."""
    with _executors_lock:
        executors = list(_executors.values())
        _executors.clear()
    for executor in executors:
        executor.shutdown(wait=True)
