"""`/metrics` is for the scraper alone, its labels stay bounded, and LOG_FORMAT=json writes one object a line."""

from __future__ import annotations

import json
import logging

import pytest
from prometheus_client import REGISTRY

from mcpsite.logjson import JsonFormatter
from mcpsite.mcp import dispatch

pytestmark = pytest.mark.django_db


def sample(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_metrics_answer_loopback_and_the_token_and_refuse_anyone_else(client, settings):
    assert client.get("/metrics").status_code == 200  # the test client comes from 127.0.0.1
    refused = client.get("/metrics", REMOTE_ADDR="203.0.113.9")
    assert refused.status_code == 403 and b"mcpsite_" not in refused.content
    settings.METRICS_TOKEN = "scrape-token-0123456789"
    allowed = client.get("/metrics", REMOTE_ADDR="203.0.113.9", HTTP_AUTHORIZATION="Bearer scrape-token-0123456789")
    assert allowed.status_code == 200 and b"mcpsite_tool_calls_total" in allowed.content
    wrong = client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_AUTHORIZATION="Bearer wrong")
    assert wrong.status_code == 403  # a wrong token is refused even from an allowed address


def test_a_tool_call_is_counted_with_bounded_labels(make_api_key):
    ctx = dispatch.call_context(transport="rpc", api_key=make_api_key(scopes=["cinema"])[0])
    ok = {"tool": "get_movie_list", "group": "cinema", "transport": "rpc", "protocol": "none", "outcome": "ok"}
    before = sample("mcpsite_tool_calls_total", **ok)
    dispatch.call_tool(ctx, "get_movie_list", {})
    assert sample("mcpsite_tool_calls_total", **ok) == before + 1
    unknown = {"tool": "unknown", "group": "none", "transport": "rpc", "protocol": "none", "outcome": "error"}
    before = sample("mcpsite_tool_calls_total", **unknown)
    with pytest.raises(Exception):  # noqa: B017 (the unknown tool's error; its kind is the transports' business)
        dispatch.call_tool(ctx, "no-such-tool-" + "x" * 50, {})
    assert sample("mcpsite_tool_calls_total", **unknown) == before + 1
    # The name the caller sent is nowhere among the label values.
    labels = [value for metric in REGISTRY.collect() for s in metric.samples for value in s.labels.values()]
    assert not any("no-such-tool" in value for value in labels)


def test_json_log_lines(make_api_key, caplog):
    record = logging.LogRecord("mcpsite.calls", logging.INFO, __file__, 1, "%s %s", ("get_movie_list", "ok"), None)
    record.tool, record.outcome, record.duration_ms, record.request_id = "get_movie_list", "ok", 3.2, "req-1"
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "get_movie_list ok"
    assert (line["tool"], line["outcome"], line["duration_ms"], line["request_id"]) == (
        "get_movie_list",
        "ok",
        3.2,
        "req-1",
    )
    assert line["level"] == "INFO" and line["logger"] == "mcpsite.calls" and "trace_id" not in line


def test_each_tool_call_logs_a_line_for_the_pipelines(make_api_key, caplog):
    ctx = dispatch.call_context(transport="rpc", api_key=make_api_key(scopes=["cinema"])[0])
    with caplog.at_level(logging.INFO, logger="mcpsite.calls"):
        dispatch.call_tool(ctx, "get_movie_list", {})
    (record,) = [r for r in caplog.records if r.name == "mcpsite.calls"]
    assert (record.tool, record.outcome, record.key_id) == ("get_movie_list", "ok", ctx.api_key.pk)


def test_the_grafana_dashboard_queries_only_metrics_we_expose():
    """docs/operations/grafana-dashboard.json loads these metrics: every metric name in its queries exists."""
    import re
    from pathlib import Path

    from prometheus_client import Counter, Gauge, Histogram

    from mcpsite.core import metrics

    exposed = {
        name
        for metric in vars(metrics).values()
        if isinstance(metric, Counter | Gauge | Histogram)
        for family in metric.describe()
        for name in (family.name, f"{family.name}_total", f"{family.name}_bucket", f"{family.name}_count")
    }
    dashboard = json.loads((Path(__file__).parents[2] / "docs/operations/grafana-dashboard.json").read_text())
    queried = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"\bmcpsite_[a-z_]+", target["expr"])
    }
    assert queried and queried <= exposed, queried - exposed
