"""MCP tools of the merchant group (see ../shared/seeds)."""
