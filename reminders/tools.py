"""MCP tools of the reminders group (see ../shared/seeds)."""
