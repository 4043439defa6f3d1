"""jsonutil writes, through orjson, exactly the text the stdlib encoder wrote; what orjson refuses still encodes."""

import datetime
import json
import uuid
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpsite.core import jsonutil


def stdlib(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=jsonutil._default)


VALUES = [
    {"name": "むぎぼーカレンダー2025", "price": Decimal("1980"), "rate": Decimal("0.10"), "n": [1, 2.5, None, True]},
    {"at": datetime.datetime(2026, 2, 20, 18, 30, 5, 120, tzinfo=ZoneInfo("Asia/Tokyo"))},
    {"day": datetime.date(2026, 2, 20), "time": datetime.time(18, 0), "naive": datetime.datetime(2026, 1, 1)},
    {"id": uuid.UUID("12345678-1234-5678-1234-567812345678"), "pair": (1, "a"), 7: "int key"},
    {"huge": 2**70},  # beyond orjson's 64 bits: the stdlib fallback
]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_matches_the_stdlib_text(value):
    assert jsonutil.dumps(value) == stdlib(value)
    assert jsonutil.to_jsonable(value) == json.loads(stdlib(value))


def test_floats_are_the_same_numbers():
    value = [1e-7, 1e16, 0.1, 35.6812, 139.0005, -0.0, 5e-324]
    assert json.loads(jsonutil.dumps(value)) == value
    assert jsonutil.to_jsonable(value) == value


def test_lone_surrogates_fall_back_to_the_stdlib():
    value = {"echo": "bad \ud800 text"}
    assert jsonutil.dumps(value) == stdlib(value)
    assert jsonutil.to_jsonable(value) == {"echo": "bad \ud800 text"}


def test_what_is_not_json_still_raises_type_error():
    with pytest.raises(TypeError):
        jsonutil.dumps({"x": object()})


def test_plain_json_is_returned_as_it_is():
    """No copy of what is plain JSON already (geo's 10,000 rows): the same object comes back."""
    value = {"granularity": "admin", "results": [{"ref": "p1", "code": "13101", "address": "東京都"}], "n": [1, 2.5]}
    assert jsonutil.to_jsonable(value) is value


@pytest.mark.parametrize(
    "value",
    [
        {"t": (1, 2)},
        {"d": Decimal("1.5")},
        {"nan": float("nan")},
        [float("inf")],
        {1: "int key"},
        {"s": "x"} | {"sub": type("S", (str,), {})("subclass")},
    ],
)
def test_what_is_not_plain_json_is_still_converted(value):
    assert jsonutil.to_jsonable(value) is not value
    assert jsonutil.dumps(jsonutil.to_jsonable(value)) == jsonutil.dumps(jsonutil._round_trip(value))


def test_a_shared_or_cyclic_container_is_copied_or_refused_as_before():
    shared = {"a": 1}
    value = [shared, shared]
    copied = jsonutil.to_jsonable(value)
    assert copied == value and copied is not value and copied[0] is not copied[1]
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="Circular"):
        jsonutil.to_jsonable(cyclic)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.decimals(allow_nan=False, places=2),
    lambda children: (
        st.lists(children, max_size=4)
        | st.tuples(children)
        | st.dictionaries(st.text(max_size=3) | st.integers(max_value=9), children, max_size=4)
    ),
    max_leaves=25,
)


@given(json_values)
def test_to_jsonable_equals_the_round_trip(value):
    """The fast path (plain JSON as it is) and the round trip give the same JSON, types included."""
    try:
        expected = jsonutil.dumps(jsonutil._round_trip(value))
    except Exception as exc:  # noqa: BLE001 (Decimal infinity: OverflowError, as before)
        with pytest.raises(type(exc)):
            jsonutil.to_jsonable(value)
        return
    result = jsonutil.to_jsonable(value)
    assert jsonutil.dumps(result) == expected
    if jsonutil._is_plain_json(value):
        assert result is value
