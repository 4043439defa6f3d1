"""Demo data for every app, an admin user and a fresh demo API key, with client configs to paste."""

import json
import os
import secrets
import sys
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand
from django.utils.text import slugify

from mcpsite.client_config import http_client_config, stdio_client_config
from mcpsite.core.scopes import tool_groups
from mcpsite.models import ApiKey
from mcpsite.services import api_key_create
from mcpsite.staff_roles import staff_groups_ensure

DEMO_KEY_NAME = "demo key"


class Command(BaseCommand):
    help = "Seed demo data for all apps, create the admin and demo users, and print a fresh demo API key."

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1:8000", help="Where the site will be served.")

    def handle(self, *args, host, **options):
        users = get_user_model()
        admin_password = os.environ.get("DEMO_ADMIN_PASSWORD") or self._admin_password()
        admin, _ = users.objects.get_or_create(username="admin", defaults={"email": "admin@example.com"})
        admin.is_staff = admin.is_superuser = True
        admin.set_password(admin_password)
        admin.save()
        demo, _ = users.objects.get_or_create(username="demo", defaults={"email": "demo@example.com"})
        staff = self._staff_users(users, admin_password)

        available = get_commands()
        for command in (f"seed_{group}" for group in tool_groups()):
            if command in available:
                self.stdout.write(f"-- {command}")
                call_command(command, stdout=self.stdout, stderr=self.stderr)

        # A key is shown once, so each run replaces the previous demo key with a new one.
        ApiKey.objects.filter(owner=demo, name=DEMO_KEY_NAME).delete()
        _key, raw_key = api_key_create(name=DEMO_KEY_NAME, owner=demo, scopes=list(tool_groups()))
        self._print_connection(host, raw_key, admin_password, staff)

    def _staff_users(self, users, password: str) -> list[tuple[str, str]]:
        """The staff groups of docs/security.md and one demo member of each (the admin's password): (group, user)."""
        made = []
        for group in staff_groups_ensure():
            username = slugify(group.name)
            user, _ = users.objects.get_or_create(username=username, defaults={"email": f"{username}@example.com"})
            user.is_staff = True
            user.set_password(password)
            user.save()
            user.groups.set([group])
            made.append((group.name, username))
        return made

    def _admin_password(self) -> str:
        # Kept in var/ so repeated `make demo` runs keep the same login.
        path = Path(settings.VAR_DIR) / "demo_admin_password"
        if not path.exists():
            path.write_text(secrets.token_urlsafe(12))
            path.chmod(0o600)
        return path.read_text().strip()

    def _print_connection(self, host: str, raw_key: str, admin_password: str, staff: list[tuple[str, str]]) -> None:
        http_config = http_client_config(mcp_url=f"http://{host}/mcp", raw_key=raw_key)
        stdio_config = stdio_client_config(group="ledger")
        line = "=" * 78
        self.stdout.write(
            "\n".join(
                [
                    line,
                    f"Admin:        http://{host}/admin/   user: admin   password: {admin_password}",
                    *(f"  {group + ':':<21} user: {username}   password: the admin's" for group, username in staff),
                    f"Demo API key: {raw_key}",
                    "              (shown once; only its digest is stored; `make demo` makes a new one each run)",
                    f"MCP over HTTP:      http://{host}/mcp  (or /mcp/<group>: {', '.join(tool_groups())})",
                    f"MCP over WebSocket: ws://{host}/ws     seed JSON-RPC: POST http://{host}/rpc",
                    "",
                    "Claude Desktop / Cursor (HTTP):",
                    json.dumps(http_config, indent=2, ensure_ascii=False),
                    "",
                    "Claude Desktop (stdio, ledger tools):",
                    json.dumps(stdio_config, indent=2, ensure_ascii=False),
                    "",
                    "Try it:",
                    f"  curl -s http://{host}/rpc -H 'Authorization: Bearer {raw_key}' \\",
                    '    -d \'{"jsonrpc":"2.0","id":1,"method":"get_movie_list","params":{}}\'',
                    line,
                ]
            )
        )
        sys.stdout.flush()
