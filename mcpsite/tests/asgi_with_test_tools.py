"""The product's ASGI application plus the test-only tools, for live interop tests."""

from mcpsite.asgi import application  # noqa: F401  (sets up Django)
from mcpsite.tests import tools_for_tests

tools_for_tests.install()
