"""Fixtures shared by every app's tests."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection

from mcpsite.mcp import dispatch
from mcpsite.mcp.registry import GROUPS, CallContext


def pytest_collection_modifyitems(config, items):
    """`@pytest.mark.postgres` tests run only in the PostgreSQL pass of `make test`."""
    from django.conf import settings

    if "postgresql" in settings.DATABASES["default"]["ENGINE"]:
        return
    skip = pytest.mark.skip(reason="needs PostgreSQL (runs in the PostgreSQL pass of make test)")
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _clear_cache():
    """Rate-limit counters live in the cache; each test starts from zero."""
    yield
    try:
        cache.clear()
    except Exception:  # the cache table may be gone after a transactional test's flush
        pass


@pytest.fixture
def is_postgres() -> bool:
    return connection.vendor == "postgresql"


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="agent-owner", email="owner@example.com", password="x" * 12)


@pytest.fixture
def make_api_key(user):
    """make_api_key(scopes=[...], rate="100/m", owner=user) -> (ApiKey, raw_key)."""
    from mcpsite.services import api_key_create

    def make(scopes=GROUPS, rate=None, owner=None, name="test key"):
        return api_key_create(name=name, owner=owner or user, scopes=list(scopes), rate=rate)

    return make


@pytest.fixture
def api_key(make_api_key):
    return make_api_key()


@pytest.fixture
def tool_context(api_key):
    key, _raw = api_key
    return CallContext(transport="test", request_id=dispatch.new_request_id(), api_key=key, owner=key.owner)


@pytest.fixture
def call_tool(tool_context):
    """call_tool(name, arguments, ctx=None) -> the tool's result dict through the real dispatcher.

    ToolErrors propagate (assert with pytest.raises); in-band seed errors come back as the result.
    """

    def call(name, arguments=None, ctx=None):
        return dispatch.call_tool(ctx or tool_context, name, arguments or {}).data

    return call
