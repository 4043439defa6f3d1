"""The geo seed (seeds/geo-resolve-points.md, sections 3 and 6) as acceptance criteria.

The seed states its client contract as sketches, transcribed here as JSON Schemas:

    request  {"granularity": "admin|estat|jarl" (省略時 admin), "points": [{"ref?": "string|null<=128", "lat", "lon"}]}
    response {"granularity", "results": [{"ref?": "string|null", "code": "string|null", "address": "string|null"}]}
    error    {"error": {"code", "message", "location?"}} — never with `results`

docs/apps/geo.md's deliberate deviation: the registered inputSchema states the point shape in the `points`
description instead of an `items` schema (the first bad point is reported by index and ref).
"""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from mcpsite.mcp import registry

pytestmark = pytest.mark.django_db

SEED_CODES = ["INVALID_INPUT", "API_ERROR", "RATE_LIMIT", "OUT_OF_COVERAGE", "INTERNAL"]
GRANULARITIES = ["admin", "estat", "jarl"]

SEED_REQUEST = {
    "type": "object",
    "properties": {
        "granularity": {"enum": GRANULARITIES},
        "points": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "ref": {"type": ["string", "null"], "maxLength": 128},
                    "lat": {"type": "number"},
                    "lon": {"type": "number"},
                },
                "required": ["lat", "lon"],
            },
        },
    },
    "required": ["points"],
}
SEED_RESPONSE = {
    "type": "object",
    "properties": {
        "granularity": {"enum": GRANULARITIES},
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "ref": {"type": ["string", "null"]},
                    "code": {"type": ["string", "null"]},
                    "address": {"type": ["string", "null"]},
                },
                "required": ["code", "address"],
                "additionalProperties": False,  # lat and lon are not echoed (3.2)
            },
        },
    },
    "required": ["granularity", "results"],
    "additionalProperties": False,
}
SEED_ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"enum": SEED_CODES},
                "message": {"type": "string", "minLength": 1},
                "location": {"type": "string"},
            },
            "required": ["code", "message"],
            "additionalProperties": False,
        }
    },
    "required": ["error"],
    "additionalProperties": False,
}

# The appendix (付録A): input, the upstream answer, and the output.
APPENDIX_INPUT = {
    "granularity": "admin",
    "points": [
        {"ref": "p1", "lat": 35.68283, "lon": 139.75945},
        {"lat": 35.6895, "lon": 139.6917},
        {"ref": "p3", "lat": 0.0, "lon": 0.0},
    ],
}
APPENDIX_UPSTREAM = {
    "addresses": {
        "131010001": {"prefecture": "東京都", "city": "千代田区"},
        "131040001": {"prefecture": "東京都", "city": "新宿区"},
    },
    "aacodes": [131010001, 131040001, None],
}
APPENDIX_OUTPUT = {
    "granularity": "admin",
    "results": [
        {"ref": "p1", "code": "131010001", "address": "東京都千代田区"},
        {"code": "131040001", "address": "東京都新宿区"},
        {"ref": "p3", "code": None, "address": None},
    ],
}


# --- definition -----------------------------------------------------------------------------------


def test_the_group_is_resolve_points_alone():
    assert [spec.name for spec in registry.tools(["geo"])] == ["resolve_points"]


def test_input_schema_has_the_seed_arguments():
    schema = registry.get("resolve_points").input_schema
    assert schema["type"] == "object"
    assert list(schema["properties"]) == ["granularity", "points"]
    granularity = schema["properties"]["granularity"]
    assert (granularity["type"], granularity["enum"], granularity["default"]) == ("string", GRANULARITIES, "admin")
    assert schema["properties"]["points"]["type"] == "array"
    assert schema["required"] == ["points"]
    # docs/apps/geo.md deviation: the point shape is in the description, not an items schema.
    assert "items" not in schema["properties"]["points"]
    for words in ("ref", "lat", "lon", "128", "string|null"):
        assert words in schema["properties"]["points"]["description"]


def test_input_schema_accepts_every_request_the_seed_allows():
    validator = registry.get("resolve_points").validator
    Draft202012Validator(SEED_REQUEST).validate(APPENDIX_INPUT)
    for request in (
        APPENDIX_INPUT,
        {"points": []},
        {"points": [{"ref": None, "lat": 1, "lon": 2}, {"ref": "", "lat": -1.5, "lon": 2}]},
    ):
        assert not list(validator.iter_errors(request))


def test_output_schema_accepts_the_seed_results_and_errors():
    validator = Draft202012Validator(registry.get("resolve_points").output_schema)
    validator.validate(APPENDIX_OUTPUT)
    for code in SEED_CODES:
        validator.validate({"error": {"code": code, "message": "m", "location": "points[0]"}})
        validator.validate({"error": {"code": code, "message": "m"}})
    assert not validator.is_valid({"granularity": "admin", "results": [{"code": 1, "address": None}]})
    assert not validator.is_valid({"error": {"code": "NOPE", "message": "m"}})
    # Result or error, never both: said in the description, as strict schema dialects take no `oneOf` (issue #37;
    # mcpsite/tests/test_schema_portability.py).
    assert "granularity と results" in registry.get("resolve_points").output_schema["description"]


def test_mcp_tools_list_exposes_the_registered_schemas(mcp_tools_list):
    [tool] = mcp_tools_list("geo")
    spec = registry.get("resolve_points")
    assert (tool.name, tool.description) == ("resolve_points", spec.description)
    assert tool.input_schema == spec.input_schema
    assert tool.output_schema == spec.output_schema


# --- results --------------------------------------------------------------------------------------


def test_appendix_sample_gives_the_seed_output_exactly(call_tool, fake_galuchat):
    fake_galuchat.rewrite = lambda answer: APPENDIX_UPSTREAM
    result = call_tool("resolve_points", APPENDIX_INPUT)
    assert result == APPENDIX_OUTPUT
    Draft202012Validator(SEED_RESPONSE).validate(result)


@pytest.mark.parametrize("granularity", [*GRANULARITIES, None])
def test_every_granularity_answers_in_the_seed_shape(call_tool, fake_galuchat, granularity):
    points = [{"ref": "a", "lat": 35.68, "lon": 139.76}, {"lat": 35.6, "lon": 140.1}, {"ref": None, "lat": 0, "lon": 0}]
    args = {"points": points} if granularity is None else {"granularity": granularity, "points": points}
    result = call_tool("resolve_points", args)
    Draft202012Validator(SEED_RESPONSE).validate(result)
    Draft202012Validator(registry.get("resolve_points").output_schema).validate(result)
    assert result["granularity"] == (granularity or "admin")
    assert ["ref" in r for r in result["results"]] == [True, False, True]  # ref only where the input had it


def _fail_with(code, fake_galuchat, monkeypatch):
    if code == "RATE_LIMIT":
        fake_galuchat.status = 429
    elif code == "API_ERROR":
        fake_galuchat.status, fake_galuchat.raw_body = 500, "boom"
    elif code == "OUT_OF_COVERAGE":
        fake_galuchat.status, fake_galuchat.raw_body = 200, "not json"
    elif code == "INTERNAL":
        from geo import tools

        monkeypatch.setattr(tools, "points_resolve", lambda **kw: 1 / 0)


@pytest.mark.parametrize("code", SEED_CODES)
def test_every_seed_error_code_in_the_seed_shape(call_tool, fake_galuchat, monkeypatch, code):
    points = [{"ref": "p1", "lat": 35.68, "lon": 139.76}]
    if code == "INVALID_INPUT":
        points.append({"ref": "p2", "lat": 91, "lon": 139.76})
    _fail_with(code, fake_galuchat, monkeypatch)
    result = call_tool("resolve_points", {"points": points})
    Draft202012Validator(SEED_ERROR).validate(result)
    assert result["error"]["code"] == code
    if code == "INVALID_INPUT":
        assert result["error"]["location"] == 'points[1] (ref "p2")'  # 5.1: the index and the ref


def test_errors_are_in_band_over_rpc(rpc, fake_galuchat):
    """On JSON-RPC the seed's error object is the call's result, not a JSON-RPC error."""
    fake_galuchat.status = 429
    body = {"jsonrpc": "2.0", "id": 1, "method": "resolve_points", "params": {"points": [{"lat": 1, "lon": 1}]}}
    answer = rpc.post(body).json()
    assert set(answer) == {"jsonrpc", "id", "result"}
    Draft202012Validator(SEED_ERROR).validate(answer["result"])
    assert answer["result"]["error"]["code"] == "RATE_LIMIT"
