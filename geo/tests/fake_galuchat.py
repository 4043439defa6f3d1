"""A fake GaluchatAPI at the HTTP layer (`responses`): the real client code runs against it.

Every request it receives is checked against the published contract (POST, `?mapset=` in the
query string only, body exactly `{"unit", "points"}` with integer [lon, lat] pairs, at most 1000
points); violations are collected and fail the test at teardown. Answers are computed from the
points so every test can predict them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

import responses

BASE_URL = "https://galuchat.test"
PATHS = {"/raacs": "admin", "/resareas": "estat", "/rjccs": "jarl"}
LIST_KEYS = {"admin": "aacodes", "estat": "scodes", "jarl": "aacodes"}


def admin_code(point):
    lon, lat = point
    if lon == 0 and lat == 0:
        return None  # the Gulf of Guinea: outside every Japanese area
    return 13000 + (abs(lon) * 7 + abs(lat)) % 97


def entry_for(granularity, code):
    if granularity == "admin":
        return {"prefecture": "東京都", "city": f"区{code}"}
    if granularity == "estat":
        return {
            "prefecture": "東京都",
            "city": f"区{code // 100000}",
            "s_area": None if code % 2 else f"町{code % 100}",
        }
    return {"name": f"東京都 区{code}", "code": f"{code % 1000}.A", "name_en": f"Ward{code}"}


def answer_for(granularity, points):
    codes, addresses = [], {}
    for point in points:
        code = admin_code(point)
        if code is not None and granularity == "estat":
            code = code * 100000 + abs(point[1]) % 2
        codes.append(code)
        if code is not None:
            addresses[str(code)] = entry_for(granularity, code)
    return {"addresses": addresses, LIST_KEYS[granularity]: codes}


def expected_result(granularity, point):
    """(code, address) the tool must produce for an integer point, derived independently of geo.merge."""
    code = admin_code(point)
    if code is None:
        return None, None
    if granularity == "admin":
        return str(code), f"東京都区{code}"
    if granularity == "estat":
        code = code * 100000 + abs(point[1]) % 2
        entry = entry_for("estat", code)
        return str(code), "東京都" + entry["city"] + (entry["s_area"] or "")
    entry = entry_for("jarl", code)
    return entry["code"], entry["name"]


@dataclass
class Received:
    path: str
    granularity: str
    mapset: str
    unit: float
    points: list
    at: float = 0.0


@dataclass
class FakeGaluchat:
    mock: responses.RequestsMock
    mapsets: dict = field(default_factory=lambda: {"admin": "ma10000", "estat": "estatremap10000", "jarl": "ma10000"})
    unit: float = 0.001
    received: list[Received] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    # Faults: a status + body, a raw body, an exception, or a function that rewrites the answer.
    status: int = 200
    raw_body: str | None = None
    headers: dict = field(default_factory=dict)
    error: Exception | None = None
    rewrite: object = None
    fail_on_call: int | None = None  # only this call (1-based) gets the fault
    # Or only requests whose points satisfy this (requests run concurrently, so arrival order is not fixed).
    fail_when: object = None

    def install(self):
        for path in PATHS:
            self.mock.add_callback(responses.POST, BASE_URL + path, callback=self._answer)

    def _check(self, request, granularity):
        parts = urlsplit(request.url)
        query = parse_qs(parts.query, keep_blank_values=True)
        if query != {"mapset": [self.mapsets[granularity]]}:
            self.violations.append(f"{parts.path}: query {query} != mapset={self.mapsets[granularity]}")
        if "json" not in request.headers.get("Content-Type", ""):
            self.violations.append(f"{parts.path}: Content-Type {request.headers.get('Content-Type')}")
        try:
            body = json.loads(request.body)
        except (TypeError, ValueError):
            self.violations.append(f"{parts.path}: body is not JSON")
            return None
        if set(body) != {"unit", "points"}:
            self.violations.append(f"{parts.path}: body keys {sorted(body)} (mapset must not be in the body)")
        if body.get("unit") != self.unit:
            self.violations.append(f"{parts.path}: unit {body.get('unit')!r}")
        points = body.get("points")
        if not isinstance(points, list) or not points or len(points) > 1000:
            self.violations.append(f"{parts.path}: {len(points or [])} points (1..1000 allowed)")
            return None
        for point in points:
            if not (isinstance(point, list) and len(point) == 2 and all(type(v) is int for v in point)):
                self.violations.append(f"{parts.path}: point {point!r} is not [lon_int, lat_int]")
                return None
        return body

    def _answer(self, request):
        path = urlsplit(request.url).path
        granularity = PATHS[path]
        body = self._check(request, granularity)
        points = [tuple(p) for p in (body or {}).get("points", [])]
        self.received.append(
            Received(
                path,
                granularity,
                parse_qs(urlsplit(request.url).query).get("mapset", [""])[0],
                (body or {}).get("unit"),
                points,
                time.monotonic(),
            )
        )
        if self.fail_when is not None:
            faulty = self.fail_when(points)
        else:
            faulty = self.fail_on_call is None or self.fail_on_call == len(self.received)
        if faulty and self.error is not None:
            raise self.error
        if faulty and self.raw_body is not None:
            return self.status, self.headers, self.raw_body
        if faulty and self.status != 200:
            return self.status, self.headers, ""
        answer = answer_for(granularity, points)
        if faulty and self.rewrite is not None:
            answer = self.rewrite(answer)
        return 200, {"Content-Type": "application/json"}, json.dumps(answer, ensure_ascii=False)

    @property
    def sent_points(self):
        return [p for r in self.received for p in r.points]
