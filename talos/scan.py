"""The whole home through the safety rules: what ``talos scan`` and ``talos doctor`` list
(design §8.1, §8.2; issues 12.3, 13.5).

:mod:`talos.safety` holds the rules and scans one text or one skills tree; this module applies
them to a home's files, which it reads through :mod:`talos.sources` (the sources call the
rules on every load, so the rules cannot import the sources: this module is the one above both).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from talos import fsutil
from talos.model import Node
from talos.safety import FileReport, Finding, mask_secrets, scan_skills, text_reasons
from talos.sources.facts import load_facts, tag_reasons
from talos.sources.sessions import refused_sessions

__all__ = [
    "FactReport",
    "ScanReport",
    "fact_report",
    "refused_files",
    "scan_facts",
    "scan_home",
]


@dataclass(frozen=True, slots=True)
class FactReport:
    """A memory.md line the fact filter excludes: ``path``, 1-based ``line``, ``text``
    (secrets masked) and its ``reasons``."""

    path: str
    line: int
    text: str
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "text": self.text,
            "reasons": list(self.reasons),
        }


def scan_facts(memory_file: Path) -> list[FactReport]:
    """The lines of ``memory_file`` that :func:`talos.safety.keep_fact` rejects, in file order
    (design §8.2)."""
    return [r for n in load_facts(memory_file, keep_fact=None) if (r := fact_report(n))]


def fact_report(n: Node) -> FactReport | None:
    """The report :func:`scan_facts` gives of the fact node ``n`` (``None`` when it passes):
    also for a caller that holds the nodes already (``talos doctor``, issue 12 item 8)."""
    reasons = text_reasons(n.text) + (tag_reasons(n.raw) if n.fields else ())
    return FactReport(n.path, n.line, mask_secrets(n.text), reasons) if reasons else None


@dataclass(frozen=True, slots=True)
class ScanReport:
    """Everything ``talos scan`` found: flagged ``skills`` (files of the skills tree),
    ``facts``, and the memory file or sessions talos ``refused`` to read. ``clean`` when all
    are empty."""

    skills: list[FileReport] = field(default_factory=list)
    facts: list[FactReport] = field(default_factory=list)
    refused: list[FileReport] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.skills and not self.facts and not self.refused

    def to_json(self) -> dict[str, object]:
        """``{"clean", "skills", "facts"}``, and ``"refused"`` when a file was refused (the key
        is left out otherwise, so the shape scripts knew is unchanged for them)."""
        out: dict[str, object] = {
            "clean": self.clean,
            "skills": [s.to_json() for s in self.skills],
            "facts": [f.to_json() for f in self.facts],
        }
        if self.refused:
            out["refused"] = [r.to_json() for r in self.refused]
        return out


def refused_files(
    memory_file: Path, sessions_dir: Path | Sequence[Path] | None = None
) -> list[FileReport]:
    """The memory file and the session files talos refuses to read (issue 12.3, 13.5): not a
    regular file (a FIFO, a device, a file of /proc), larger than
    :data:`talos.fsutil.MAX_MEMORY_BYTES`, or — for a session — a link out of its folder.
    Each reader warns and skips them; ``talos scan`` lists them (kind ``memory``/``session``).
    """
    out: list[FileReport] = []
    try:
        st: os.stat_result | None = os.stat(memory_file)
    except (OSError, ValueError):
        st = None
    if st is not None:
        kind = fsutil.file_kind(st)
        if kind is not None:
            out.append(FileReport(str(memory_file), "memory", (Finding(fsutil.NOT_REGULAR, kind),)))
        elif st.st_size > fsutil.MAX_MEMORY_BYTES:
            limit = f"{st.st_size} bytes > {fsutil.MAX_MEMORY_BYTES}"
            out.append(FileReport(str(memory_file), "memory", (Finding("oversized", limit),)))
    if sessions_dir is not None:
        out += [
            FileReport(path, "session", (Finding(reason, evidence),))
            for path, reason, evidence in refused_sessions(sessions_dir)
        ]
    return out


def scan_home(
    memory_file: Path, skills_dir: Path, sessions_dir: Path | Sequence[Path] | None = None
) -> ScanReport:
    """Scan a home's skills tree and memory file (``talos scan``, design §8.1, §8.2), and list
    the files talos refuses to read (:func:`refused_files`; ``sessions_dir``: one folder or a
    list of them, issue 16.4)."""
    return ScanReport(
        scan_skills(skills_dir),
        scan_facts(memory_file),
        refused_files(memory_file, sessions_dir),
    )
