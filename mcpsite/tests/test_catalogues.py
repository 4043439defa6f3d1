"""The site refuses to start without its compiled Japanese catalogue, and `check --deploy` reports one older than its
source (issue #37: deployed by the steps of docs/production.md without compilemessages, a Japanese user's sign-in and
consent pages were half English)."""

import os
import shutil
from pathlib import Path

import pytest
from django.core import checks
from django.core.management import call_command

from mcpsite.checks import startup_refusal

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def locale(settings, tmp_path):
    """A copy of the project's catalogue sources, uncompiled, as LOCALE_PATHS."""
    shutil.copytree(ROOT / "locale", tmp_path / "locale", ignore=shutil.ignore_patterns("*.mo"))
    settings.LOCALE_PATHS = [tmp_path / "locale"]
    return tmp_path / "locale" / "ja" / "LC_MESSAGES"


def _ids(deploy: bool) -> list[str]:
    return [
        m.id
        for m in checks.run_checks(tags=[checks.Tags.translation], include_deployment_checks=deploy)
        if m.id in ("mcpsite.E007", "mcpsite.E008")
    ]


def test_without_the_compiled_catalogue_the_site_refuses_to_start(locale):
    assert _ids(deploy=False) == ["mcpsite.E007", "mcpsite.E007"]  # django.po and djangojs.po
    refusal = startup_refusal()
    assert refusal is not None and "mcpsite.E007" in refusal and "django.po is not compiled" in refusal


def test_compiled_by_the_documented_step_the_checks_pass(locale):
    call_command("compilemessages", locale=["ja"], verbosity=0)
    assert _ids(deploy=True) == []
    assert startup_refusal() is None


def test_check_deploy_reports_a_catalogue_older_than_its_source(locale):
    call_command("compilemessages", locale=["ja"], verbosity=0)
    source = locale / "django.po"
    later = (locale / "django.mo").stat().st_mtime + 60
    os.utime(source, (later, later))  # the source changed (an upgrade) after the last compile
    assert _ids(deploy=False) == []  # still serves: its Japanese is only behind
    assert _ids(deploy=True) == ["mcpsite.E008"]
