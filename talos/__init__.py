"""talos — personal long-term memory for AI agents, recalled by spreading activation.

Public API (design §9.2): :class:`Memory`, :func:`keywords`, and the result types. They load on
first use (PEP 562): ``import talos`` alone imports nothing heavy, so ``talos hook AGENT``
can answer an agent over the resident server without numpy (issue 16.3).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing itself costs start-up time; type checkers read this as True
if TYPE_CHECKING:
    from talos.memory import Memory
    from talos.results import Decision, Recall, RecallRow, Row, Suggestion, WhyNot
    from talos.text import keywords

__all__ = [
    "Decision",
    "Memory",
    "Recall",
    "RecallRow",
    "Row",
    "Suggestion",
    "WhyNot",
    "__version__",
    "keywords",
]
__version__ = "0.1.0"

_LAZY = {
    "Memory": "talos.memory",
    "Decision": "talos.results",
    "Recall": "talos.results",
    "RecallRow": "talos.results",
    "Row": "talos.results",
    "Suggestion": "talos.results",
    "WhyNot": "talos.results",
    "keywords": "talos.text",
}


def __getattr__(name: str) -> object:
    """The public names, imported when first asked for (``talos.Memory``,
    ``from talos import Memory``)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'talos' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
