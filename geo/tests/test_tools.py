"""resolve_points through the real dispatcher, against the fake GaluchatAPI (seed sections 3, 5, 6, 8)."""

import json
import math

import pytest
import requests

from geo import merge as merge_module
from mcpsite.mcp import dispatch

from .fake_galuchat import expected_result

pytestmark = pytest.mark.django_db


def resolve(call_tool, points, granularity=None):
    args = {"points": points}
    if granularity is not None:
        args["granularity"] = granularity
    return call_tool("resolve_points", args)


def assert_error(result, code, location=None):
    assert set(result) == {"error"}, result  # never results together with an error
    assert result["error"]["code"] == code
    assert result["error"]["message"]
    if location is not None:
        assert result["error"]["location"] == location
    return result["error"]


# --- acceptance criteria 1 and 2: endpoint per granularity, mapset in the query string ---


@pytest.mark.parametrize(
    ("granularity", "path", "mapset"),
    [("admin", "/raacs", "ma10000"), ("estat", "/resareas", "estatremap10000"), ("jarl", "/rjccs", "ma10000")],
)
def test_each_granularity_calls_its_endpoint_with_its_mapset(call_tool, fake_galuchat, granularity, path, mapset):
    result = resolve(call_tool, [{"ref": "p1", "lat": 35.68283, "lon": 139.75945}], granularity)
    (received,) = fake_galuchat.received
    assert (received.path, received.mapset) == (path, mapset)
    assert received.points == [(139759, 35683)]
    code, address = expected_result(granularity, (139759, 35683))
    assert result == {"granularity": granularity, "results": [{"ref": "p1", "code": code, "address": address}]}


def test_granularity_defaults_to_admin(call_tool, fake_galuchat):
    result = resolve(call_tool, [{"lat": 35.0, "lon": 139.0}])
    assert result["granularity"] == "admin"
    assert fake_galuchat.received[0].path == "/raacs"


def test_configured_mapsets_go_in_the_query_string_only(call_tool, fake_galuchat, settings):
    settings.GALUCHAT_MAPSET_ADMIN = "ma1000"
    settings.GALUCHAT_MAPSET_JARL = "ma100"
    fake_galuchat.mapsets.update(admin="ma1000", jarl="ma100")
    resolve(call_tool, [{"lat": 35.0, "lon": 139.0}], "admin")
    resolve(call_tool, [{"lat": 35.0, "lon": 139.0}], "jarl")
    assert [r.mapset for r in fake_galuchat.received] == ["ma1000", "ma100"]
    # The fake's teardown asserts every body was exactly {"unit", "points"}.


def test_estat_address_includes_the_small_area_when_present(call_tool, fake_galuchat):
    points = [{"lat": 35.0, "lon": 139.0}, {"lat": 35.001, "lon": 139.0}]
    results = resolve(call_tool, points, "estat")["results"]
    addresses = [r["address"] for r in results]
    assert any(a.startswith("東京都区") and "町" in a for a in addresses)  # s_area appended
    assert any("町" not in a for a in addresses)  # s_area null: prefecture + city only


# --- acceptance criterion 3: unit rounding at boundaries ---


@pytest.mark.parametrize(
    ("lon", "lat", "sent"),
    [
        (139.0005, 35.0005, (139001, 35001)),  # float division: 139000.49999999997 -> 139000
        (135.5005, 1.0005, (135501, 1001)),  # float division: 1000.4999999999999 -> 1000
        (-0.0005, -35.6825, (-1, -35683)),  # ties away from zero on both sides
        (139.75945, 35.68283, (139759, 35683)),  # the seed's sample point (its 139760 is a typo)
        (180, -90, (180000, -90000)),  # integers and the range ends
    ],
)
def test_unit_rounding_is_decimal_half_up(call_tool, fake_galuchat, lon, lat, sent):
    resolve(call_tool, [{"lat": lat, "lon": lon}])
    assert fake_galuchat.received[0].points == [sent]


def test_float_division_really_gets_the_boundary_wrong():
    """The control for the rounding test: naive float arithmetic sends a different integer."""
    assert math.floor(139.0005 / 0.001 + 0.5) == 139000
    assert round(1.0005 / 0.001) == 1000


# --- acceptance criterion 4: 429 -> RATE_LIMIT ---


def test_upstream_429_is_rate_limit(call_tool, fake_galuchat):
    fake_galuchat.status, fake_galuchat.headers = 429, {"Retry-After": "1"}
    error = assert_error(resolve(call_tool, [{"ref": "a", "lat": 35.0, "lon": 139.0}]), "RATE_LIMIT")
    assert "429" in error["message"]
    assert len(fake_galuchat.received) == 1  # never retried blindly


# --- acceptance criterion 5: the count is kept ---


def test_repeated_points_keep_the_count_and_are_sent_once(call_tool, fake_galuchat):
    points = [{"lat": 35.6895, "lon": 139.6917}] * 3 + [{"ref": "x", "lat": 35.68951, "lon": 139.69170}]
    results = resolve(call_tool, points)["results"]
    assert len(results) == 4
    assert fake_galuchat.received[0].points == [(139692, 35690)]  # the four round to one integer point
    assert results[:3] == [{"code": results[3]["code"], "address": results[3]["address"]}] * 3
    assert results[3]["ref"] == "x" and results[3]["code"] == results[0]["code"]


def test_seed_appendix_sample(call_tool, fake_galuchat):
    fake_galuchat.rewrite = lambda answer: {
        "addresses": {
            "131010001": {"prefecture": "東京都", "city": "千代田区"},
            "131040001": {"prefecture": "東京都", "city": "新宿区"},
        },
        "aacodes": [131010001, 131040001, None],
    }
    result = resolve(
        call_tool,
        [
            {"ref": "p1", "lat": 35.68283, "lon": 139.75945},
            {"lat": 35.6895, "lon": 139.6917},
            {"ref": "p3", "lat": 0.0, "lon": 0.0},
        ],
        "admin",
    )
    assert fake_galuchat.received[0].points == [(139759, 35683), (139692, 35690), (0, 0)]
    assert result == {
        "granularity": "admin",
        "results": [
            {"ref": "p1", "code": "131010001", "address": "東京都千代田区"},
            {"code": "131040001", "address": "東京都新宿区"},
            {"ref": "p3", "code": None, "address": None},
        ],
    }


def test_ref_appears_only_when_the_input_had_one(call_tool, fake_galuchat):
    points = [{"lat": 1.0, "lon": 1.0}, {"ref": None, "lat": 1.0, "lon": 1.0}, {"ref": "", "lat": 1.0, "lon": 1.0}]
    results = resolve(call_tool, points)["results"]
    assert "ref" not in results[0]
    assert results[1]["ref"] is None and results[2]["ref"] == ""


def test_empty_points_need_no_upstream_call(call_tool, fake_galuchat):
    assert resolve(call_tool, [], "jarl") == {"granularity": "jarl", "results": []}
    assert fake_galuchat.received == []


# --- 10,000 points ---


def test_ten_thousand_points_with_duplicates(call_tool, fake_galuchat):
    unique = [(130.0 + i * 0.001, 33.0 + (i % 7) * 0.01) for i in range(2500)]  # 2500 distinct integer points
    points = [
        {"ref": f"r{i}", "lat": unique[(i * 7919) % 2500][1], "lon": unique[(i * 7919) % 2500][0]}
        for i in range(10_000)
    ]
    result = resolve(call_tool, points)
    sizes = sorted(len(r.points) for r in fake_galuchat.received)
    assert sizes == [500, 1000, 1000]  # ceil(2500 / 1000) calls, at most 1000 points each
    sent = fake_galuchat.sent_points
    assert len(sent) == len(set(sent)) == 2500  # every distinct point sent exactly once
    results = result["results"]
    assert len(results) == 10_000
    for i in (0, 1, 4999, 9999):
        lon, lat = unique[(i * 7919) % 2500]
        code, address = expected_result("admin", (round(lon * 1000), round(lat * 1000)))
        assert results[i] == {"ref": f"r{i}", "code": code, "address": address}
    assert [r["ref"] for r in results] == [f"r{i}" for i in range(10_000)]


def test_more_than_the_maximum_is_invalid_input(call_tool, fake_galuchat, settings):
    settings.RESOLVE_POINTS_MAX_POINTS = 3
    error = assert_error(resolve(call_tool, [{"lat": 1, "lon": 1}] * 4), "INVALID_INPUT", "points")
    assert "at most 3" in error["message"]
    assert fake_galuchat.received == []


# --- INVALID_INPUT: the first bad point, with index and ref ---


@pytest.mark.parametrize(
    ("point", "location", "words"),
    [
        ({"ref": "b", "lat": 90.5, "lon": 0}, 'points[1] (ref "b")', "outside -90..90"),
        ({"ref": "b", "lat": 0, "lon": -180.01}, 'points[1] (ref "b")', "outside -180..180"),
        ({"ref": "b", "lat": "35.6", "lon": 0}, 'points[1] (ref "b")', "must be a number, not a string"),
        ({"ref": "b", "lat": True, "lon": 0}, 'points[1] (ref "b")', "not a boolean"),
        # NaN/Infinity (JSON extensions Python accepts) are refused for every tool by the dispatcher.
        ({"ref": "b", "lat": float("nan"), "lon": 0}, "points[1].lat", "finite"),
        ({"ref": "b", "lat": 0, "lon": float("inf")}, "points[1].lon", "finite"),
        ({"ref": "b", "lat": None, "lon": 0}, 'points[1] (ref "b")', "not null"),
        ({"ref": "b", "lon": 0}, 'points[1] (ref "b")', "lat is required"),
        ({"lat": 0}, "points[1]", "lon is required"),
        ({"ref": "x" * 129, "lat": 0, "lon": 0}, "points[1]", "129 characters"),
        ({"ref": "a\nb", "lat": 0, "lon": 0}, "points[1]", "non-printable"),
        ({"ref": 5, "lat": 0, "lon": 0}, "points[1]", "string or null"),
        ([0, 0], "points[1]", "must be an object"),
    ],
)
def test_a_bad_point_fails_the_call_with_its_index_and_ref(call_tool, fake_galuchat, point, location, words):
    points = [{"ref": "a", "lat": 35, "lon": 139}, point, {"ref": "c", "lat": 999, "lon": 0}]
    error = assert_error(resolve(call_tool, points), "INVALID_INPUT", location)
    assert words in error["message"]
    assert fake_galuchat.received == []  # nothing is sent when any point is bad


def test_ref_of_128_printable_characters_is_accepted(call_tool, fake_galuchat):
    ref = ("地点　A-1 " * 20)[:128]
    assert resolve(call_tool, [{"ref": ref, "lat": 1, "lon": 1}])["results"][0]["ref"] == ref


@pytest.mark.parametrize(
    ("arguments", "location"),
    [
        ({"points": "35,139"}, "points"),
        ({"granularity": "city", "points": []}, "granularity"),
        ({"granularity": 3, "points": []}, "granularity"),
        ({}, None),
    ],
)
def test_schema_violations_are_invalid_input_too(call_tool, fake_galuchat, arguments, location):
    error = assert_error(call_tool("resolve_points", arguments), "INVALID_INPUT", location)
    if location is None:
        assert "points" in error["message"]


# --- upstream faults: each produces its error and nothing else ---


@pytest.mark.parametrize(
    ("status", "body"),
    [(500, "Internal Server Error"), (503, "<html>\n<b>down</b> for maintenance\n</html>"), (404, ""), (400, "bad")],
)
def test_http_errors_are_api_error_with_status_and_body(call_tool, fake_galuchat, status, body):
    fake_galuchat.status, fake_galuchat.raw_body = status, body
    error = assert_error(resolve(call_tool, [{"ref": "a", "lat": 35, "lon": 139}]), "API_ERROR", 'points[0] (ref "a")')
    assert f"HTTP {status}" in error["message"]
    assert " ".join(body.split())[:20] in error["message"]
    assert "\n" not in error["message"]


def test_long_error_body_is_trimmed(call_tool, fake_galuchat):
    fake_galuchat.status, fake_galuchat.raw_body = 502, "x" * 10_000
    error = assert_error(resolve(call_tool, [{"lat": 35, "lon": 139}]), "API_ERROR")
    assert len(error["message"]) < 300 and error["message"].endswith("…")


@pytest.mark.parametrize(("status", "code"), [(503, "API_ERROR"), (429, "RATE_LIMIT"), (None, "API_ERROR")])
def test_upstream_errors_are_logged_with_status_message_and_request_id(
    call_tool, fake_galuchat, caplog, tool_context, status, code
):
    """The seed: upstream errors are logged with their status and message; never the whole body, nor the points."""
    if status is None:
        fake_galuchat.error = requests.ConnectionError("refused")
    else:
        fake_galuchat.status, fake_galuchat.raw_body = status, "maintenance " + "x" * 10_000
    points = [{"ref": "secret-place", "lat": 35.123456, "lon": 139.654321}, {"lat": 36, "lon": 140}]
    with caplog.at_level("WARNING", logger="geo.tools"):
        assert_error(call_tool("resolve_points", {"points": points}, ctx=tool_context), code)
    (record,) = [r for r in caplog.records if r.name == "geo.tools"]
    line = record.getMessage()
    assert record.levelname == "WARNING" and f"request {tool_context.request_id}" in line
    assert f"status {status if status is not None else 'none'}" in line and "[2 points]" in line
    if status == 503:
        assert "HTTP 503: maintenance" in line and "x" * 300 not in line  # the excerpt, not the body
    assert "secret-place" not in line and "35.12" not in line and "139.65" not in line and "35123" not in line


@pytest.mark.parametrize(
    ("status", "body", "rewrite", "wrong"),
    [
        (200, "<html>maintenance</html>", None, "not JSON: <html>maintenance</html>"),
        (203, "", None, "not JSON: (empty body)"),
        (200, "[" * 100_000, None, "not JSON: [[["),  # nested too deeply for the decoder (RecursionError)
        (200, None, lambda answer: {**answer, "aacodes": answer["aacodes"][:1]}, "1 aacodes for 2 points"),
        (200, None, lambda answer: {**answer, "addresses": {}}, "is missing from addresses"),
    ],
)
def test_unusable_2xx_answers_are_logged_with_their_status_and_what_was_wrong(
    call_tool, fake_galuchat, caplog, tool_context, status, body, rewrite, wrong
):
    """Issue #24: an HTTP 200 answer that was not JSON or too short was logged "status none" (no answer)."""
    fake_galuchat.status, fake_galuchat.raw_body, fake_galuchat.rewrite = status, body, rewrite
    points = [{"lat": 35, "lon": 139}, {"lat": 36, "lon": 140}]
    with caplog.at_level("WARNING", logger="geo.tools"):
        assert_error(call_tool("resolve_points", {"points": points}, ctx=tool_context), "OUT_OF_COVERAGE")
    (record,) = [r for r in caplog.records if r.name == "geo.tools"]
    assert f"status {status}:" in record.getMessage() and wrong in record.getMessage()


def test_redirect_is_api_error_not_followed(call_tool, fake_galuchat):
    fake_galuchat.status, fake_galuchat.raw_body = 302, ""
    fake_galuchat.headers = {"Location": "https://elsewhere.test/"}
    assert_error(resolve(call_tool, [{"lat": 35, "lon": 139}]), "API_ERROR")
    assert len(fake_galuchat.received) == 1


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (requests.ConnectTimeout("slow"), "timed out"),
        (requests.ReadTimeout("slow"), "timed out"),
        (requests.ConnectionError("refused"), "Could not connect"),
    ],
)
def test_timeouts_and_connection_failures_are_api_error(call_tool, fake_galuchat, exc, words):
    fake_galuchat.error = exc
    error = assert_error(resolve(call_tool, [{"lat": 35, "lon": 139}]), "API_ERROR")
    assert words in error["message"]


def test_second_request_failing_names_a_point_of_that_request(call_tool, fake_galuchat, settings):
    settings.GALUCHAT_MAX_POINTS_PER_REQUEST = 2
    fake_galuchat.status = 500
    fake_galuchat.fail_when = lambda sent: (141000, 35000) in sent  # the request carrying p2
    points = [{"ref": f"p{i}", "lat": 35, "lon": 139 + i} for i in range(3)]
    assert_error(resolve(call_tool, points), "API_ERROR", 'points[2] (ref "p2")')


@pytest.mark.parametrize(
    ("rewrite", "location", "words"),
    [
        (lambda a: {**a, "aacodes": a["aacodes"][:1]}, 'points[1] (ref "q")', "1 aacodes for 3 points"),
        (lambda a: {**a, "aacodes": a["aacodes"] + [None]}, 'points[0] (ref "p")', "4 aacodes for 3 points"),
        (lambda a: {**a, "addresses": {}}, 'points[0] (ref "p")', "missing from addresses"),
        (lambda a: {"addresses": a["addresses"]}, 'points[0] (ref "p")', "no aacodes list"),
        (lambda a: [1, 2, 3], 'points[0] (ref "p")', "no aacodes list"),
        (lambda a: {**a, "aacodes": [a["aacodes"][0], "x", None]}, 'points[1] (ref "q")', "not a code"),
        (
            lambda a: {**a, "addresses": {k: {"prefecture": 1} for k in a["addresses"]}},
            'points[0] (ref "p")',
            "no usable place name",
        ),
    ],
)
def test_inconsistent_answers_are_out_of_coverage_naming_the_point(call_tool, fake_galuchat, rewrite, location, words):
    fake_galuchat.rewrite = rewrite
    points = [{"ref": "p", "lat": 35, "lon": 139}, {"ref": "q", "lat": 35, "lon": 138}, {"lat": 0, "lon": 0}]
    error = assert_error(resolve(call_tool, points), "OUT_OF_COVERAGE", location)
    assert words in error["message"]


def test_malformed_json_is_out_of_coverage(call_tool, fake_galuchat):
    fake_galuchat.raw_body = '{"aacodes": [1'
    assert_error(resolve(call_tool, [{"ref": "p", "lat": 35, "lon": 139}]), "OUT_OF_COVERAGE", 'points[0] (ref "p")')


def test_jarl_address_missing_code_is_out_of_coverage(call_tool, fake_galuchat):
    fake_galuchat.rewrite = lambda a: {**a, "addresses": {k: {"code": "1"} for k in a["addresses"]}}
    assert_error(resolve(call_tool, [{"lat": 35, "lon": 139}], "jarl"), "OUT_OF_COVERAGE", "points[0]")


def test_unexpected_exception_is_internal_and_reveals_nothing(call_tool, fake_galuchat, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise KeyError("secret internals")

    monkeypatch.setattr("geo.resolve.merge", broken)
    error = assert_error(resolve(call_tool, [{"lat": 35, "lon": 139}]), "INTERNAL")
    assert "secret" not in json.dumps(error)
    assert "secret internals" in caplog.text
    assert merge_module.merge is not broken


def test_misconfiguration_is_internal(call_tool, fake_galuchat, settings):
    settings.GALUCHAT_UNIT = "zero"
    assert_error(resolve(call_tool, [{"lat": 35, "lon": 139}]), "INTERNAL")


def test_in_band_errors_are_flagged_as_errors_for_mcp(tool_context, fake_galuchat):
    fake_galuchat.status = 429
    outcome = dispatch.call_tool(tool_context, "resolve_points", {"points": [{"lat": 1, "lon": 1}]})
    assert outcome.is_error and outcome.data["error"]["code"] == "RATE_LIMIT"


# --- the point cache ---


def test_cached_points_skip_the_upstream(call_tool, fake_galuchat):
    first = resolve(call_tool, [{"lat": 35, "lon": 139}, {"lat": 0, "lon": 0}])
    second = resolve(call_tool, [{"lat": 0, "lon": 0}, {"lat": 35, "lon": 139}, {"lat": 36, "lon": 139}])
    assert second["results"][:2] == first["results"][::-1]
    assert [r.points for r in fake_galuchat.received] == [[(139000, 35000), (0, 0)], [(139000, 36000)]]


def test_cache_is_per_granularity_and_mapset(call_tool, fake_galuchat, settings):
    resolve(call_tool, [{"lat": 35, "lon": 139}], "admin")
    resolve(call_tool, [{"lat": 35, "lon": 139}], "jarl")
    settings.GALUCHAT_MAPSET_ADMIN = "ma1000"
    fake_galuchat.mapsets["admin"] = "ma1000"
    resolve(call_tool, [{"lat": 35, "lon": 139}], "admin")
    assert len(fake_galuchat.received) == 3


def test_cache_ttl_zero_turns_the_cache_off(call_tool, fake_galuchat, settings):
    settings.GALUCHAT_CACHE_TTL = 0
    resolve(call_tool, [{"lat": 35, "lon": 139}])
    resolve(call_tool, [{"lat": 35, "lon": 139}])
    assert len(fake_galuchat.received) == 2


def test_errors_are_not_cached(call_tool, fake_galuchat):
    fake_galuchat.status, fake_galuchat.fail_on_call = 500, 1
    assert_error(resolve(call_tool, [{"lat": 35, "lon": 139}]), "API_ERROR")
    assert "results" in resolve(call_tool, [{"lat": 35, "lon": 139}])
    assert len(fake_galuchat.received) == 2


# --- the seed's JSON-RPC transport ---


def test_over_rpc(rpc, fake_galuchat):
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "resolve_points",
        "params": {"granularity": "jarl", "points": [{"ref": "千葉", "lat": 35.37, "lon": 140.36}]},
    }
    response = rpc.post(body)
    code, address = expected_result("jarl", (140360, 35370))
    assert response.json()["result"] == {
        "granularity": "jarl",
        "results": [{"ref": "千葉", "code": code, "address": address}],
    }
    assert "千葉" in response.content.decode()
