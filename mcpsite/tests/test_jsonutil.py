"""jsonutil writes, through orjson, exactly the text the stdlib encoder wrote; what orjson refuses still encodes."""

import datetime
import json
import uuid
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

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
