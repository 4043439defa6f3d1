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
