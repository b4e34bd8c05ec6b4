"""Selection: see docs/architecture.md."""
