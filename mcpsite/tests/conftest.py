import pytest

from . import tools_for_tests


@pytest.fixture(autouse=True)
def test_tools():
    tools_for_tests.install()
    yield
    tools_for_tests.uninstall()
