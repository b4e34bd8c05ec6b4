"""Exceptions a caller can act on. The CLI maps them to exit codes (SPEC §9.1)."""

from __future__ import annotations

__all__ = ["InputError", "TalosError"]


class TalosError(Exception):
    """Base class of talos errors; the message says what is wrong and what to do."""

    exit_code = 1


class InputError(TalosError):
    """Bad input from a person: a file, an option, a value (CLI exit code 1)."""
