from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from mcpsite.services import ScopeError, api_key_create, scopes_parse


class Command(BaseCommand):
    help = "Create an API key; the key is printed once and only its digest is stored."

    def add_arguments(self, parser):
        parser.add_argument("--name", required=True)
        parser.add_argument(
            "--scopes",
            default="all",
            help="Comma-separated scopes: a tool group (read and write), <group>:read or <group>:write; or 'all'.",
        )
        parser.add_argument("--owner", default="demo", help="Username owning the key (created if missing).")
        parser.add_argument("--rate", help="Requests per period, e.g. 100/m (default MCP_DEFAULT_RATE).")
        parser.add_argument("--quiet", action="store_true", help="Print only the key.")

    def handle(self, *args, name, scopes, owner, rate, quiet, **options):
        try:
            scope_list = scopes_parse(text=scopes)
        except ScopeError as exc:
            raise CommandError(str(exc)) from None
        user, created = get_user_model().objects.get_or_create(username=owner)
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        api_key, raw_key = api_key_create(name=name, owner=user, scopes=scope_list, rate=rate)
        if quiet:
            self.stdout.write(raw_key)
        else:
            # Output for the staff member at the terminal (in LANGUAGE_CODE); --quiet output is for scripts.
            self.stdout.write(
                gettext("API key %(name)r for %(user)s (scopes: %(scopes)s):")
                % {"name": api_key.name, "user": user.username, "scopes": ", ".join(scope_list)}
            )
            self.stdout.write(f"  {raw_key}")
            self.stdout.write(gettext("Shown once: only its SHA-256 digest is stored."))
