"""MCP tools of the geo group: resolve_points (../shared/seeds/geo-resolve-points.md).

Errors are in-band as the seed shows: `{"error": {"code", "message", "location?"}}`, never
together with `results`.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from mcpsite.mcp.registry import CallContext, tool
from mcpsite.mcp.schema import nullable

from .conf import galuchat_config
from .errors import GeoError, GeoInternalError, render_error
from .resolve import points_resolve

logger = logging.getLogger(__name__)

GRANULARITY_ENUM = ["admin", "estat", "jarl"]

# The seed's request (3.1). The point shape {ref?, lat, lon} is stated in the description and checked
# by points.parse_points, not by an `items` schema: the dispatcher validates the schema first, and
# the seed wants the FIRST bad point reported with its index and ref; and jsonschema walking 10,000
# items would cost several times the rest of the call.
INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "granularity": {
            "type": "string",
            "enum": GRANULARITY_ENUM,
            "default": "admin",
            "description": "返却コードの種類。admin: 行政区域コード (/raacs)、estat: 統計小地域コード (/resareas)、"
            "jarl: JCC/JCG コード (/rjccs)。省略時は admin。",
        },
        "points": {
            "type": "array",
            "description": "座標点の配列 (WGS84)。各要素は {ref?, lat, lon}: "
            "ref は任意の参照ラベル (string|null, 128 文字以内の印字可能文字。MCP 内だけで使用し API には送らず、"
            "入力にある場合のみ結果に含める)、lat は緯度 (number, -90〜90)、lon は経度 (number, -180〜180)。"
            "最大 10,000 点 (設定 RESOLVE_POINTS_MAX_POINTS)。",
        },
    },
    "required": ["points"],
}

_RESULT = {
    "type": "object",
    "properties": {
        "ref": nullable({"type": "string"}),
        "code": nullable({"type": "string"}),
        "address": nullable({"type": "string"}),
    },
    "required": ["code", "address"],
}
# Either granularity and results, or error alone: said in the description, as strict schema dialects take no
# `oneOf` (docs/add-a-tool.md, "Schemas every host accepts").
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "成功時は granularity と results、失敗時は error のみ。",
    "properties": {
        "granularity": {"type": "string", "enum": GRANULARITY_ENUM},
        "results": {"type": "array", "items": _RESULT},
        "error": {
            "type": "object",
            "properties": {
                "code": {
                    "type": "string",
                    "enum": ["INVALID_INPUT", "API_ERROR", "RATE_LIMIT", "OUT_OF_COVERAGE", "INTERNAL"],
                },
                "message": {"type": "string"},
                "location": {"type": "string"},
            },
            "required": ["code", "message"],
        },
    },
}

# The most one point of a request can take: a 128-character ref with every character \u-escaped (as a client's
# ASCII-only JSON encoder writes Japanese), coordinates at full precision, keys, punctuation and spaces.
POINT_BYTES = 128 * 6 + 96


def max_request_bytes() -> int:
    """The largest legitimate resolve_points request: RESOLVE_POINTS_MAX_POINTS points at POINT_BYTES, and the
    envelope (0 while geo is misconfigured: the tool then refuses every call and says why)."""
    try:
        return request_bytes(galuchat_config().max_points)
    except ImproperlyConfigured:
        return 0


def request_bytes(points: int) -> int:
    """The most a resolve_points request of `points` points can take, its envelope included."""
    return points * POINT_BYTES + 4096


DESCRIPTION = (
    "座標点の配列を GaluchatAPI で逆ジオコーディングし、granularity に応じた地域コードと住所を返す"
    "（admin: 行政区域コード、estat: 統計小地域コード、jarl: JCC/JCG コード）。"
    "results は入力順・件数を保持する。カバー外の点は code と address が null。"
    '失敗時は results を返さず {"error":{"code","message","location?"}} を返す '
    "(INVALID_INPUT / API_ERROR / RATE_LIMIT / OUT_OF_COVERAGE / INTERNAL)。"
)


@tool(
    name="resolve_points",
    title=_("Resolve coordinates to areas"),
    icon="📍",
    description=DESCRIPTION,
    input_schema=INPUT_SCHEMA,
    output_schema=OUTPUT_SCHEMA,
    render_error=render_error,
    annotations={"readOnlyHint": True, "openWorldHint": True},  # asks GaluchatAPI
    upstream=True,
    max_request_bytes=max_request_bytes,
)
def resolve_points(args: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
    """Resolve points to area codes and addresses (seed sections 3, 5 and 6)."""
    granularity = args.get("granularity") or "admin"
    try:
        # Progress per GaluchatAPI request and cancellation, where the MCP client asked for them (else no-ops).
        results = points_resolve(
            granularity=granularity,
            points=args["points"],
            on_progress=lambda done, total: ctx.interaction.progress(done, total, f"GaluchatAPI {done}/{total}"),
            should_stop=ctx.interaction.cancelled,
        )
    except GeoError as exc:
        if exc.upstream:
            # The seed keeps upstream failures in the log: status and message (the body only as the message's
            # short excerpt), and how many points were asked for, never the points themselves.
            status = exc.upstream_status if exc.upstream_status is not None else "none"
            logger.warning(
                "GaluchatAPI %s (request %s): status %s: %s [%d points]",
                exc.seed_code, ctx.request_id, status, exc.message, len(args["points"]),
            )  # fmt: skip
        raise
    except ImproperlyConfigured:
        logger.exception("geo is misconfigured (request %s)", ctx.request_id)
        raise GeoInternalError(f"The geo service is misconfigured (request {ctx.request_id})") from None
    except Exception:
        # Logged with the request id; the caller learns nothing about the internals.
        logger.exception("resolve_points failed (request %s)", ctx.request_id)
        raise GeoInternalError(f"Internal error (request {ctx.request_id})") from None
    return {"granularity": granularity, "results": results}
