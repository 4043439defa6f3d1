import gc
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mcpsite.settings")

from mcpsite import tracing  # noqa: E402

# With OTEL_EXPORTER_OTLP_ENDPOINT set, each request is traced from here (docs/operations.md). The tracer provider
# and the instrumentations go in before Django is set up: the MCP SDK takes its tracer when it is imported, and
# Django's handler reads its middleware (the Django instrumentation's among them) when the router builds it.
tracing.configure()
django.setup(set_prefix=False)  # before the router imports models; the router builds Django's ASGI handler

from mcpsite.routing import application as site  # noqa: E402

application = tracing.traced_asgi(site)

# What is loaded by now (modules, settings, the URL conf, the tool registry, the MCP server) lives as long as the
# process: frozen out of the garbage collector's reach, so the collections a request triggers do not walk it (a
# 10,000-point resolve_points allocates enough to trigger several; bench/bench_geo.py sets its process up here).
gc.freeze()
