"""Settings for the MCP conformance run (scripts/conformance): the product's settings plus the suite's diagnostic
fixtures. Never a deployment's settings: the fixtures' system check refuses them with DEBUG off."""

from mcpsite.settings import *  # noqa: F403
from mcpsite.settings import INSTALLED_APPS

DEBUG = True
INSTALLED_APPS = [*INSTALLED_APPS, "conformance_fixtures"]
