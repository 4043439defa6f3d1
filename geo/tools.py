"""MCP tools of the geo group (see ../shared/seeds)."""
