import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from mcpsite.core.errors import Unauthorized
from mcpsite.core.scopes import tool_groups
from mcpsite.mcp.auth import api_key_authenticate
from mcpsite.mcp.stdio import serve_stdio


class Command(BaseCommand):
    help = "Serve MCP over stdin/stdout (for Claude Desktop and other local clients)."

    def add_arguments(self, parser):
        parser.add_argument("--group", choices=tool_groups(), help="Serve only this tool group (default: all).")
        parser.add_argument("--user", help="Username that owns data created over stdio (reminders).")
        parser.add_argument(
            "--api-key-env",
            metavar="NAME",
            help="Serve as the API key in this environment variable: only its scopes, as its owner.",
        )

    def handle(self, *args, group=None, user=None, api_key_env=None, **options):
        owner = api_key = None
        if user:
            owner = get_user_model().objects.filter(username=user).first()
            if owner is None:
                raise CommandError(f"No user named {user!r}")
        if api_key_env:
            try:
                api_key = api_key_authenticate(raw_key=os.environ.get(api_key_env))
            except Unauthorized as exc:
                raise CommandError(f"{api_key_env}: {exc.message}") from None
        serve_stdio(groups=[group] if group else None, owner=owner, api_key=api_key)
