"""Point validation and the degrees -> integer conversion (seed 5.1 and 5.4)."""

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from geo.errors import InvalidInput
from geo.points import _parse_columns, _parse_located, parse_points, to_unit_integer, unit_integers

UNIT = Decimal("0.001")


def exact_half_up(text: str, unit: str) -> int:
    """An independent oracle: exact rational arithmetic, ties away from zero."""
    q = Fraction(text) / Fraction(unit)
    sign = -1 if q < 0 else 1
    q = abs(q)
    whole = q.numerator // q.denominator
    return sign * (whole + (1 if q - whole >= Fraction(1, 2) else 0))


@given(st.floats(min_value=-180, max_value=180, allow_nan=False))
def test_conversion_matches_exact_rational_rounding(value):
    assert to_unit_integer(Decimal(repr(value)), UNIT) == exact_half_up(repr(value), "0.001")


@given(st.integers(min_value=-180_000_0, max_value=180_000_0), st.sampled_from(["0.01", "0.001", "0.0001"]))
def test_exact_ties_round_away_from_zero(tenths, unit):
    # value = (tenths / 10) * unit: every odd `tenths` ending in 5 is an exact tie.
    text = str(Decimal(tenths) / 10 * Decimal(unit))
    assert to_unit_integer(Decimal(text), Decimal(unit)) == exact_half_up(text, unit)


def test_parse_keeps_order_refs_and_integer_keys():
    parsed = parse_points(
        [{"ref": "a", "lat": 35.0005, "lon": 139.0005}, {"lat": -1, "lon": 2}, {"ref": None, "lat": 0.0, "lon": 0.0}],
        unit=UNIT,
        max_points=10,
    )
    assert [(p.key, p.has_ref, p.ref) for p in parsed] == [
        ((139001, 35001), True, "a"),
        ((2000, -1000), False, None),
        ((0, 0), True, None),
    ]


def test_first_bad_point_wins():
    with pytest.raises(InvalidInput) as info:
        parse_points([{"lat": 0, "lon": 0}, {"ref": "x", "lat": 91, "lon": 0}, {"lat": "bad"}], unit=UNIT, max_points=9)
    assert info.value.location == 'points[1] (ref "x")'


@pytest.mark.parametrize("ref", ["\x00", "a\u200bb", "\u2028", "\ue000"])
def test_non_printable_refs_are_refused(ref):
    with pytest.raises(InvalidInput, match="non-printable"):
        parse_points([{"ref": ref, "lat": 0, "lon": 0}], unit=UNIT, max_points=1)


@pytest.mark.parametrize("ref", ["東京 タワー", "全角　スペース", "emoji 🗼", "x" * 128])
def test_printable_refs_are_accepted(ref):
    assert parse_points([{"ref": ref, "lat": 0, "lon": 0}], unit=UNIT, max_points=1)[0].ref == ref


@pytest.mark.parametrize("bad", [[35], {"v": 35}, "35", True, float("nan"), float("inf"), 90.5])
def test_a_repeated_longitude_never_lets_a_bad_latitude_through(bad):
    # Repeated (lon, lat) pairs skip validation; an unhashable or invalid latitude must still be refused.
    with pytest.raises(InvalidInput) as info:
        parse_points([{"lat": 35, "lon": 139}, {"ref": "b", "lat": bad, "lon": 139}], unit=UNIT, max_points=9)
    assert info.value.location == 'points[1] (ref "b")'


coordinate = st.one_of(
    st.integers(min_value=-90, max_value=90), st.floats(min_value=-90, max_value=90).map(lambda v: round(v, 4))
)


@given(st.lists(st.tuples(coordinate, coordinate, st.one_of(st.none(), st.text(max_size=3))), max_size=30), st.data())
def test_repeated_points_parse_like_single_ones(pairs, data):
    """Each point parses exactly as it would alone, whatever was seen before it (ints and floats mixed)."""
    points = [data.draw(st.sampled_from(pairs)) for _ in range(len(pairs) * 2)] if pairs else []
    payload = [
        {"lat": lat, "lon": lon} if ref is None else {"ref": ref, "lat": lat, "lon": lon} for lat, lon, ref in points
    ]
    try:
        alone = [parse_points([p], unit=UNIT, max_points=1)[0] for p in payload]
    except InvalidInput:
        with pytest.raises(InvalidInput):
            parse_points(payload, unit=UNIT, max_points=len(payload))
        return
    assert list(parse_points(payload, unit=UNIT, max_points=len(payload))) == alone


UNITS = ["1", "0.01", "0.001", "0.0001", "0.003", "0.00025", "0.000001"]


def tie(tenths: int, unit: str) -> float:
    """(tenths / 10) units as the float a client would send: 139.0005 for 1390005 tenths of 0.001."""
    return float(Decimal(tenths) / 10 * Decimal(unit))


degrees = st.one_of(
    st.floats(min_value=-180, max_value=180, allow_nan=False),
    st.integers(min_value=-180, max_value=180),
    st.floats(min_value=-180, max_value=180).map(lambda v: round(v, 5)),  # x.xxxx5 ties in 0.001 (and 0.0001)
    st.integers(min_value=-1_800_000, max_value=1_800_000).map(lambda n: tie(n, "0.001")),
    st.integers(min_value=-18_000_000, max_value=18_000_000).map(lambda n: tie(n, "0.0001")),
)


@given(st.lists(degrees, max_size=20), st.sampled_from(UNITS))
def test_float_conversion_equals_the_decimal_one(values, unit):
    """The float quotient with its decimal fallback near ties gives exactly the decimal half-up integer."""
    unit = Decimal(unit)
    assert unit_integers(values, unit) == {v: to_unit_integer(Decimal(repr(v)), unit) for v in values}


@given(st.integers(min_value=-18_000_000, max_value=18_000_000), st.sampled_from(UNITS))
def test_exact_ties_take_the_decimal_path_and_round_away_from_zero(tenths, unit):
    value = tie(tenths, unit)
    if abs(value) <= 180:
        assert unit_integers([value], Decimal(unit))[value] == exact_half_up(repr(value), unit)


values = st.one_of(
    degrees, st.none(), st.booleans(), st.text(max_size=2), st.just(float("nan")), st.just(float("inf")),
    st.floats(min_value=-200, max_value=200), st.integers(min_value=-(10**30), max_value=10**30),
)  # fmt: skip
refs = st.one_of(
    st.text(max_size=4), st.text(min_size=128, max_size=130), st.sampled_from(["全角　スペース", "a\u200bb", "\x00"]),
    st.none(), st.integers(),
)  # fmt: skip


@st.composite
def payloads(draw):
    """Points, mostly valid (so the columns accept many payloads), with now and then one bad or unusual point:
    a missing key, a wrong type, out of range, NaN, an odd ref, not an object."""
    points: list = []
    for _ in range(draw(st.integers(min_value=0, max_value=12))):
        lat = draw(degrees.filter(lambda v: abs(v) <= 90))
        point = {"lat": lat, "lon": draw(degrees)}
        if draw(st.booleans()):
            point["ref"] = draw(st.one_of(st.none(), st.text(st.characters(codec="utf-8"), max_size=4)))
        odd = draw(st.integers(min_value=0, max_value=15))
        if odd == 1:
            point[draw(st.sampled_from(["lat", "lon"]))] = draw(values)
        elif odd == 2:
            del point[draw(st.sampled_from(["lat", "lon"]))]
        elif odd == 3:
            point["ref"] = draw(refs)
        elif odd == 4:
            point = draw(st.one_of(st.none(), st.just([]), st.just("x")))
        points.append(point)
    repeats = draw(st.lists(st.sampled_from(points), max_size=6)) if points else []
    return points + repeats


def outcome(parse, points, unit):
    try:
        return parse(points, unit)
    except InvalidInput as exc:
        return ("error", exc.message, exc.location)


@given(payloads(), st.sampled_from(UNITS))
def test_column_parse_equals_the_located_walk(points, unit):
    """The columns either accept exactly what the point-by-point walk returns, or leave the points to it."""
    unit = Decimal(unit)
    fast = _parse_columns(points, unit)
    if fast is not None:
        assert fast == _parse_located(points, unit)
    assert outcome(lambda p, u: parse_points(p, unit=u, max_points=100), points, unit) == outcome(
        _parse_located, points, unit
    )
