"""docs/production.md followed literally, as far as a test machine can: its provisioning SQL makes a role and a
database (a UTF-8 ctype, owned by the role, which creates pg_trgm itself), its first-run commands prepare the site
and give the first key, and its backup and restore commands bring the site back (PostgreSQL pass)."""

from __future__ import annotations

import re
import secrets
import shlex
import subprocess

import psycopg
import pytest

from .live import PYTHON, ROOT, _admin_sql, _base_env, _database_url

pytestmark = pytest.mark.postgres

GUIDE = (ROOT / "docs" / "production.md").read_text()


def section(title: str) -> str:
    return re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", GUIDE, re.S | re.M)[1]


def bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, re.S)


def psql_statements(text: str) -> list[str]:
    return re.findall(r'psql -c "([^"]+)"', text)


def commands(block: str, prefix: str) -> list[list[str]]:
    """The block's commands that start with `prefix` (after it), comments dropped."""
    return [shlex.split(line[len(prefix) :], comments=True) for line in block.splitlines() if line.startswith(prefix)]


@pytest.fixture
def provisioned():
    """The guide's CREATE ROLE and CREATE DATABASE, under names of the test's own."""
    suffix = secrets.token_hex(4)
    role, database = f"mcpsite_doc_{suffix}", f"mcpsite_doc_{suffix}"
    create_role, create_database = psql_statements(section("1. Provisioning"))
    _admin_sql(create_role.replace("ROLE mcpsite", f"ROLE {role}").replace("'PASSWORD'", "'doc-password'"))
    _admin_sql(create_database.replace("DATABASE mcpsite OWNER mcpsite", f"DATABASE {database} OWNER {role}"))
    url = _database_url(database).replace("://postgres@", f"://{role}:doc-password@")
    try:
        yield url, create_database, role, suffix
    finally:
        for name in (database, f"{database}_restored"):
            _admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        _admin_sql(f'DROP ROLE IF EXISTS "{role}"')


def run(argv: list[str], env: dict) -> str:
    result = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{shlex.join(argv)}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_the_guide_from_an_empty_database_to_a_restored_backup(provisioned, tmp_path):
    url, create_database, role, suffix = provisioned
    # The guide's /etc/mcpsite/env, but this database, a real secret and no Redis (none runs here)
    documented = dict(
        shlex.split(line, comments=True)[0].split("=", 1)
        for block in bash_blocks(section("1. Provisioning"))
        for line in block.splitlines()
        if re.match(r"[A-Z_]+=", line)
    )
    assert {"DATABASE_URL", "DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS", "EMAIL_URL", "LOG_FORMAT"} <= set(documented)
    documented.pop("REDIS_URL")
    env = {
        **_base_env(),
        **documented,
        "MCPSITE_VAR_DIR": str(tmp_path),
        "DATABASE_URL": url,
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_SUPERUSER_PASSWORD": secrets.token_urlsafe(16),
    }
    with psycopg.connect(url) as conn:
        assert conn.execute("SHOW lc_ctype").fetchone()[0] == "C.UTF-8"

    # First run: every `manage.py` line of the guide's block, as written (createsuperuser without its prompts)
    first_run = commands(bash_blocks(section("2. First run"))[0], "sudo -E -u mcpsite ")
    assert [argv[2] for argv in first_run] == [
        "compilemessages",
        "migrate",
        "collectstatic",
        "check",
        "createsuperuser",
        "create_api_key",
    ]
    outputs = {}
    for argv in first_run:
        if argv[2] == "createsuperuser":
            argv = [*argv, "--noinput", "--username", "admin", "--email", "admin@example.com"]
        outputs[argv[2]] = run([PYTHON if argv[0].endswith("python") else argv[0], *argv[1:]], env)
    assert re.search(r"\bmcp_\w+", outputs["create_api_key"])
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'").fetchone() == (1,)

    # Backup, then restore into a new database made by the guide's own statement
    backup = section("8. Backups and restore")
    (dump,) = commands(bash_blocks(backup)[0], "pg_dump")
    dump_file = tmp_path / "mcpsite.dump"
    options = [a for a in dump if a.startswith("--") and not a.startswith("--file=")]  # the file: the test's own
    run(["pg_dump", *options, f"--file={dump_file}", url], env)
    restore_block = bash_blocks(backup)[1]
    (recreate,) = psql_statements(restore_block)
    assert recreate == create_database
    restored = f"mcpsite_doc_{suffix}_restored"
    _admin_sql(recreate.replace("DATABASE mcpsite OWNER mcpsite", f"DATABASE {restored} OWNER {role}"))
    restored_url = url.rsplit("/", 1)[0] + "/" + restored
    (restore,) = commands(restore_block, "pg_restore")
    options = [
        a.replace("--role=mcpsite", f"--role={role}") for a in restore if a.startswith("--") and "dbname" not in a
    ]
    run(["pg_restore", *options, f"--dbname={restored_url}", str(dump_file)], env)
    (migrate,) = commands(restore_block, "sudo -E -u mcpsite ")
    run([PYTHON, *migrate[1:]], {**env, "DATABASE_URL": restored_url})
    with psycopg.connect(restored_url) as conn:
        assert conn.execute("SELECT count(*) FROM mcpsite_apikey").fetchone() == (1,)
        assert conn.execute("SELECT count(*) FROM auth_user WHERE is_superuser").fetchone() == (1,)
