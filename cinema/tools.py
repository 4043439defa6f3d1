"""MCP tools of the cinema group (see ../shared/seeds)."""
