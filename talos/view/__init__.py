"""View: see docs/architecture.md."""
