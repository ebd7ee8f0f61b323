"""Pure functions: no model, no table, no server; seconds in all (`make test-fast`)."""
