from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from mcpsite.core.scopes import tool_groups
from mcpsite.mcp.stdio import serve_stdio


class Command(BaseCommand):
    help = "Serve MCP over stdin/stdout (for Claude Desktop and other local clients)."

    def add_arguments(self, parser):
        parser.add_argument("--group", choices=tool_groups(), help="Serve only this tool group (default: all).")
        parser.add_argument("--user", help="Username that owns data created over stdio (reminders).")

    def handle(self, *args, group=None, user=None, **options):
        owner = None
        if user:
            owner = get_user_model().objects.filter(username=user).first()
            if owner is None:
                raise CommandError(f"No user named {user!r}")
        serve_stdio(groups=[group] if group else None, owner=owner)
