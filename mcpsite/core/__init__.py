"""The platform's core: what domain code may use (errors, rate limits, JSON), knowing no transport."""
