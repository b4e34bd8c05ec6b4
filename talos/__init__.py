"""talos — personal long-term memory for AI agents, recalled by spreading activation.

Public API (SPEC §9.2): :class:`Memory`, :func:`keywords`, and the result types.
"""

from talos.memory import Memory, Recall, RecallRow, Row, Suggestion
from talos.text import keywords

__all__ = ["Memory", "Recall", "RecallRow", "Row", "Suggestion", "__version__", "keywords"]
__version__ = "0.1.0"
