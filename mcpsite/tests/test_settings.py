"""Settings from the environment: secrets in URLs never become visible settings."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_passwords_in_environment_urls_are_masked_on_error_pages():
    code = (
        "import django; django.setup();"
        "from django.conf import settings;"
        "from django.views.debug import SafeExceptionReporterFilter as F;"
        "print(repr(F().get_safe_settings()))"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "mcpsite.settings",
        "EMAIL_URL": "smtp://mailer:hunter2-smtp@mail.example:587?tls=1",
        "REDIS_URL": "redis://:hunter2-redis@127.0.0.1:6379/0",
    }
    shown = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert "hunter2" not in shown.stdout
    assert "mail.example" in shown.stdout  # the rest of the mail settings are still there


def test_redis_password_moves_to_options():
    from mcpsite.settings import _redis_cache

    cache = _redis_cache("redis://user:p%40ss@redis.internal:6380/2", KEY_PREFIX="geo")
    assert cache["LOCATION"] == "redis://user@redis.internal:6380/2"
    assert cache["OPTIONS"]["PASSWORD"] == "p@ss" and cache["KEY_PREFIX"] == "geo"
    assert _redis_cache("redis://127.0.0.1:6379/0")["LOCATION"] == "redis://127.0.0.1:6379/0"


def _settings_with(database_url: str) -> subprocess.CompletedProcess:
    code = (
        "import django; django.setup(); from django.conf import settings; d = settings.DATABASES['default'];"
        "print(d['ENGINE'], d['NAME'])"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "mcpsite.settings", "DATABASE_URL": database_url}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)


def test_the_merchant_seeds_sqlalchemy_database_url_is_sqlite(tmp_path):
    shown = _settings_with(f"sqlite+aiosqlite:///{tmp_path}/merchant_agent.db")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == ["django.db.backends.sqlite3", f"{tmp_path}/merchant_agent.db"]


def test_an_unknown_database_url_is_refused_with_the_accepted_forms():
    shown = _settings_with("mongodb://db.internal/app")
    assert shown.returncode != 0
    last = shown.stderr.strip().splitlines()[-1]
    assert last.startswith("django.core.exceptions.ImproperlyConfigured: DATABASE_URL scheme 'mongodb'")
    assert "sqlite:///path" in last and "postgres://" in last


def test_commands_print_only_their_own_output():
    """A management command writes what it reports and nothing else: no start-up banner from an app (axes
    printed one INFO line per process), so scripts and cron mail see the command's output alone."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "mcpsite.settings", "LOG_LEVEL": "INFO"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "System check identified no issues (0 silenced)."
    assert result.stderr == ""
