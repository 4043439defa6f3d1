"""The GALUCHAT_* / RESOLVE_POINTS_* settings are validated by a system check at startup."""

import os
import subprocess
from decimal import Decimal

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from geo.checks import check_galuchat_settings
from geo.conf import galuchat_config
from mcpsite.tests.live import PYTHON, ROOT, free_port


def ids(messages):
    return sorted(m.id for m in messages)


def test_defaults_are_valid_and_converted():
    assert check_galuchat_settings(None) == []
    config = galuchat_config()
    assert config.unit == Decimal("0.001")
    assert config.timeout_s == 10.0
    assert config.mapsets == {"admin": "ma10000", "estat": "estatremap10000", "jarl": "ma10000"}
    assert (config.max_points, config.max_points_per_request, config.requests_per_second) == (10000, 1000, 10.0)


def test_environment_strings_are_converted(settings):
    settings.GALUCHAT_TIMEOUT_MS = "2500"
    settings.GALUCHAT_UNIT = "0.0001"
    settings.GALUCHAT_CACHE_TTL = "0"
    settings.GALUCHAT_BASE_URL = "https://galuchat.nyatla.jp/"
    config = galuchat_config()
    assert (config.timeout_s, config.unit, config.cache_ttl) == (2.5, Decimal("0.0001"), 0)
    assert config.endpoint_url("estat") == "https://galuchat.nyatla.jp/resareas"


def test_missing_key(settings):
    del settings.GALUCHAT_UNIT
    messages = check_galuchat_settings(None)
    assert ids(messages) == ["geo.E001"]
    assert "GALUCHAT_UNIT is missing" in messages[0].msg


@pytest.mark.parametrize(
    ("name", "value", "error_id"),
    [
        ("GALUCHAT_TIMEOUT_MS", "ten", "geo.E003"),
        ("GALUCHAT_TIMEOUT_MS", True, "geo.E003"),
        ("GALUCHAT_TIMEOUT_MS", 0, "geo.E003"),
        ("GALUCHAT_CACHE_TTL", -1, "geo.E003"),
        ("GALUCHAT_MAX_POINTS_PER_REQUEST", 1001, "geo.E003"),
        ("GALUCHAT_REQUESTS_PER_SECOND", "fast", "geo.E003"),
        ("RESOLVE_POINTS_MAX_POINTS", 2.5, "geo.E003"),
        ("GALUCHAT_UNIT", "abc", "geo.E004"),
        ("GALUCHAT_UNIT", "0", "geo.E004"),
        ("GALUCHAT_UNIT", "NaN", "geo.E004"),
        ("GALUCHAT_BASE_URL", "galuchat.nyatla.jp", "geo.E002"),
        ("GALUCHAT_BASE_URL", "https://galuchat.nyatla.jp/?x=1", "geo.E002"),
        ("GALUCHAT_MAPSET_ADMIN", 10000, "geo.E005"),
    ],
)
def test_wrong_types_and_ranges(settings, name, value, error_id):
    setattr(settings, name, value)
    messages = check_galuchat_settings(None)
    assert ids(messages) == [error_id]
    assert name in messages[0].msg
    with pytest.raises(ImproperlyConfigured, match=name):
        galuchat_config()


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("GALUCHAT_MAPSET_ESTAT", "ma10000", "an AACODE mapset, but estat needs an ESCODE one"),
        ("GALUCHAT_MAPSET_ADMIN", "estatremap10000", "an ESCODE mapset, but admin needs an AACODE one"),
        ("GALUCHAT_MAPSET_JARL", "estatremap10000", "an ESCODE mapset, but jarl needs an AACODE one"),
        ("GALUCHAT_MAPSET_ADMIN", "ma5", "unknown"),
    ],
)
def test_mapset_of_the_wrong_family(settings, name, value, words):
    setattr(settings, name, value)
    (message,) = check_galuchat_settings(None)
    assert message.id == "geo.E005" and words in message.msg


def test_development_mapset_is_a_warning(settings):
    settings.GALUCHAT_MAPSET_JARL = "sc1000"
    (message,) = check_galuchat_settings(None)
    assert message.id == "geo.W001" and not message.is_serious()
    assert galuchat_config().mapsets["jarl"] == "sc1000"


@pytest.mark.django_db
def test_manage_py_check_stops_on_a_bad_configuration(settings):
    settings.GALUCHAT_MAPSET_ESTAT = "ma10000"
    with pytest.raises(SystemCheckError, match=r"geo\.E005.*GALUCHAT_MAPSET_ESTAT"):
        call_command("check")


def _uvicorn(tmp_path, workers: int, **env: str) -> subprocess.CompletedProcess:
    """`uvicorn mcpsite.asgi:application` as production runs it (lifespan on, `workers` processes), with `env`."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_ALLOW"))}
    environment.update(MCPSITE_VAR_DIR=str(tmp_path), PYTHONPATH=str(ROOT), **env)
    return subprocess.run(
        [PYTHON, "-m", "uvicorn", "mcpsite.asgi:application", "--host", "127.0.0.1", "--port", str(free_port()),
         "--lifespan", "on", "--workers", str(workers)],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("workers", [1, 2])
def test_the_server_refuses_to_start_on_a_bad_configuration(tmp_path, workers):
    """Issue #24: uvicorn started and served with a mapset of the wrong family, and every call answered INTERNAL.
    The application's startup runs the system checks and refuses: uvicorn exits, naming the problem. With
    workers its supervisor stops instead of restarting them (and exits 0: uvicorn's choice, docs/production.md)."""
    result = _uvicorn(tmp_path, workers, GALUCHAT_MAPSET_ESTAT="ma10000")
    assert "GALUCHAT_MAPSET_ESTAT='ma10000' is an AACODE mapset, but estat needs an ESCODE one" in result.stderr
    assert "geo.E005" in result.stderr and "HINT: estat calls /resareas" in result.stderr
    assert "Traceback" not in result.stderr and "Application startup complete" not in result.stderr
    if workers == 1:
        assert result.returncode == 3  # uvicorn's STARTUP_FAILURE
    else:
        assert result.stderr.count("failed to start, stopping the parent process") >= 1
