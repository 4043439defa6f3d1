"""Shared bootstrapping for the standalone benchmarks: a throwaway SQLite database and timing helpers.

Every benchmark prints ratios against a baseline run side by side in the same process, because
these machines are noisy: absolute times mean little, ratios are what count.
"""

from __future__ import annotations

import atexit
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path


def boot(name: str) -> str:
    """Set up Django on a fresh, migrated SQLite database in a temporary MCPSITE_VAR_DIR (never the user's data),
    removed when the process exits; returns that directory."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    var_dir = tempfile.mkdtemp(prefix=f"bench-{name}-")
    atexit.register(_remove, var_dir)
    os.environ["MCPSITE_VAR_DIR"] = var_dir
    os.environ.pop("DATABASE_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    print(f"[{name}] migrating a fresh SQLite database in {var_dir}", flush=True)
    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    return var_dir


def _remove(var_dir: str) -> None:
    from django.db import connections

    connections.close_all()
    shutil.rmtree(var_dir, ignore_errors=True)


def timings(fn: Callable[[], object], *, repeat: int, warmup: int = 1) -> list[float]:
    """Wall-clock seconds of `repeat` calls of fn, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return samples


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def p95(samples: list[float]) -> float:
    return percentile(samples, 95)


def report(label: str, ours: list[float], baseline: list[float], baseline_label: str) -> float:
    """Print medians, p95s and the ratio ours/baseline (lower is better); returns the median ratio."""
    ratio = statistics.median(ours) / statistics.median(baseline)
    print(
        f"{label:<44} median {statistics.median(ours) * 1000:9.3f} ms  p95 {p95(ours) * 1000:9.3f} ms | "
        f"{baseline_label}: median {statistics.median(baseline) * 1000:9.3f} ms | ratio {ratio:6.2f}x",
        flush=True,
    )
    return ratio
