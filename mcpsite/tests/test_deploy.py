"""The supervised recipe of docs/production.md as shipped: the systemd units run the documented commands with restart
on failure and stop timeouts beyond the graceful ones, the daily jobs run, and the alert rules of
docs/operations.md are valid and query only metrics the site exposes."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.management import get_commands

from .live import ROOT, live_site

UNITS = ROOT / "deploy" / "systemd"
LONG_RUNNING = ("mcpsite-web.service", "mcpsite-worker.service", "mcpsite-scheduler.service")


def unit(name: str) -> dict[str, list[str]]:
    """A unit file's `Key=value` lines (a key may repeat, as `Environment=` does)."""
    entries: dict[str, list[str]] = {}
    for line in (UNITS / name).read_text().splitlines():
        if "=" in line and not line.lstrip().startswith(("#", "[")):
            key, value = line.split("=", 1)
            entries.setdefault(key.strip(), []).append(value.strip())
    return entries


def environment(entries: dict[str, list[str]]) -> dict[str, str]:
    return dict(item.split("=", 1) for item in entries.get("Environment", []))


@pytest.mark.parametrize("name", LONG_RUNNING)
def test_each_process_is_restarted_on_failure_and_never_given_up_on(name):
    entries = unit(name)
    assert entries["Restart"] == ["on-failure"] and entries["StartLimitIntervalSec"] == ["0"]
    assert entries["EnvironmentFile"] == ["/etc/mcpsite/env"]
    assert "mcpsite.target" in entries["WantedBy"] and "mcpsite.target" in entries["PartOf"]


def test_the_units_run_the_documented_commands():
    production = (ROOT / "docs" / "production.md").read_text()
    commands = {name: unit(name)["ExecStart"][0] for name in (*LONG_RUNNING, "mcpsite-prune.service")}
    assert commands["mcpsite-web.service"] == "/srv/mcpsite/scripts/serve"
    assert commands["mcpsite-prune.service"] == "/srv/mcpsite/scripts/prune"
    for name in ("mcpsite-worker.service", "mcpsite-scheduler.service"):
        manage = commands[name].split("manage.py ", 1)[1]
        assert manage.split()[0] in get_commands()
        assert f"`manage.py {manage}`" in production, manage
    wanted = unit("mcpsite.target")["Wants"][0].split()
    assert sorted(wanted) == sorted([*LONG_RUNNING, "mcpsite-prune.timer"])


def test_the_web_stops_within_its_graceful_timeout_before_systemd_kills_it():
    web = unit("mcpsite-web.service")
    graceful = int(environment(web)["GRACEFUL_SHUTDOWN_SECONDS"])
    serve = (ROOT / "scripts" / "serve").read_text()
    assert "--timeout-graceful-shutdown" in serve and "GRACEFUL_SHUTDOWN_SECONDS" in serve
    assert int(web["TimeoutStopSec"][0]) > graceful


def test_web_and_worker_write_their_metrics_to_one_directory_that_outlives_their_restarts():
    web, worker = unit("mcpsite-web.service"), unit("mcpsite-worker.service")
    assert environment(web)["PROMETHEUS_MULTIPROC_DIR"] == environment(worker)["PROMETHEUS_MULTIPROC_DIR"]
    assert environment(web)["PROMETHEUS_MULTIPROC_DIR"].startswith("/run/mcpsite/")
    for entries in (web, worker):
        assert entries["RuntimeDirectory"] == ["mcpsite"] and entries["RuntimeDirectoryPreserve"] == ["yes"]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_accepts_the_units(tmp_path):
    result = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *sorted(str(p) for p in UNITS.iterdir())],
        capture_output=True,
        text=True,
        timeout=60,
    )
    unknown = [line for line in result.stderr.splitlines() if "Unknown" in line or "Invalid" in line]
    assert unknown == []


def alert_rules() -> str:
    text = (ROOT / "docs" / "operations.md").read_text()
    return re.search(r"```yaml\n(groups:.*?)```", text, re.S)[1]


def test_the_alert_rules_query_only_metrics_the_site_exposes(client, db):
    exposed = client.get("/metrics").content.decode()
    names = set(re.findall(r"\b(mcpsite_[a-z_]+)", alert_rules()))
    assert names
    families = set(re.findall(r"^# TYPE (\w+) ", exposed, re.M))
    missing = {name for name in names if not {name, re.sub(r"_(bucket|sum|count)$", "", name)} & families}
    assert missing == set()


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed (make system-deps)")
def test_promtool_accepts_the_alert_rules(tmp_path):
    rules = tmp_path / "rules.yml"
    rules.write_text(alert_rules())
    result = subprocess.run(["promtool", "check", "rules", str(rules)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    with live_site(live_template, tmp_path_factory.mktemp("deploy")) as site:
        yield site


def test_the_daily_jobs_run(site):
    result = subprocess.run(
        [ROOT / "scripts" / "prune"], cwd=ROOT, env=site.env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert Path(ROOT / "scripts" / "prune").stat().st_mode & 0o111
