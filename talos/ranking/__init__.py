"""Ranking: see docs/architecture.md."""
