"""Forwarded headers are believed only from configured proxies: the server started as documented (scripts/serve,
what `make serve`, `make demo` and docs/production.md run) does not let a local caller choose its address."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from .live import ROOT, free_port, live_site


@pytest.fixture(scope="module")
def site(live_template, tmp_path_factory):
    with live_site(live_template, tmp_path_factory.mktemp("proxy")) as site:
        yield site


def serve(site, **env: str) -> str:
    port = free_port()
    log = open(Path(site.env["MCPSITE_VAR_DIR"]) / f"serve-{port}.log", "w")  # noqa: SIM115
    environment = {**site.env, "PORT": str(port), "HOST": "127.0.0.1", "DJANGO_CSRF_COOKIE_SECURE": "0"}
    environment.pop("TRUSTED_PROXY_IPS", None)
    environment.update(env)
    site.processes.append(
        subprocess.Popen([ROOT / "scripts/serve"], cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT)
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(150):
        try:
            if httpx2.get(f"{url}/healthz", timeout=1).status_code == 200:
                return url
        except httpx2.HTTPError:
            time.sleep(0.2)
    raise RuntimeError(Path(log.name).read_text())


def failed_logins_from_rotating_addresses(url: str, username: str, attempts: int) -> list[int]:
    """Wrong passwords for one username, each claiming another client address in X-Forwarded-For."""
    statuses = []
    with httpx2.Client(base_url=url, timeout=30) as client:
        for i in range(attempts):
            page = client.get("/admin/login/")
            token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
            response = client.post(
                "/admin/login/",
                data={"username": username, "password": f"wrong-{i}", "csrfmiddlewaretoken": token},
                headers={"X-Forwarded-For": f"203.0.113.{i + 1}", "Referer": f"{url}/admin/login/"},
            )
            statuses.append(response.status_code)
    return statuses


def test_a_local_caller_cannot_rotate_addresses_past_the_login_lockout(site, settings):
    statuses = failed_logins_from_rotating_addresses(serve(site), "staff-target", settings.AXES_FAILURE_LIMIT + 1)
    # Every attempt counts against 127.0.0.1: the attempt past the limit is locked out.
    assert statuses[-1] == 429, statuses


def test_control_forwarded_headers_believed_from_loopback_reset_the_lockout_per_address(site, settings):
    """uvicorn's default (believe 127.0.0.1), as the earlier command ran it: each attempt is a new address."""
    url = serve(site, TRUSTED_PROXY_IPS="127.0.0.1")
    statuses = failed_logins_from_rotating_addresses(url, "other-target", settings.AXES_FAILURE_LIMIT + 1)
    assert 429 not in statuses, statuses


def test_the_documented_commands_start_the_server_through_scripts_serve():
    production = (ROOT / "docs/production.md").read_text()
    makefile = (ROOT / "Makefile").read_text()
    assert "scripts/serve" in production and "TRUSTED_PROXY_IPS" in production
    assert makefile.count("scripts/serve") >= 2  # serve and demo
    assert "uvicorn mcpsite.asgi" not in makefile and "--proxy-headers" not in makefile
    assert os.access(ROOT / "scripts/serve", os.X_OK)
