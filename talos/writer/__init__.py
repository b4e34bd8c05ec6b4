"""Writer: see docs/architecture.md."""
