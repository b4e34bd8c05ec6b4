"""Usage: see docs/architecture.md."""
