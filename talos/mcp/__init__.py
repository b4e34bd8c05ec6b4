"""Mcp: see docs/architecture.md."""
