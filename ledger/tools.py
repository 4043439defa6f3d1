"""MCP tools of the ledger group (see ../shared/seeds)."""
