"""The product's ASGI application plus the test-only tools, for live interop tests (and, with
MCPSITE_TEST_APPS_PROBE set, the test-only MCP App view of apps_probe.py)."""

import os

from mcpsite.asgi import application  # noqa: F401  (sets up Django)
from mcpsite.tests import apps_probe, tools_for_tests

tools_for_tests.install()
if os.environ.get("MCPSITE_TEST_APPS_PROBE"):
    apps_probe.install()
