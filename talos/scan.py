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
from talos.safety.episodes import episode_field, episode_findings, together_findings
from talos.sources.facts import load_facts, tag_reasons
from talos.sources.sessions import (
    EPISODE_CHARS,
    OUTCOME_CHARS,
    Summary,
    folder_of,
    read_session,
    refused_sessions,
    session_folders,
    session_names,
)

__all__ = [
    "FactReport",
    "ScanReport",
    "fact_report",
    "refused_files",
    "scan_facts",
    "scan_home",
    "scan_sessions",
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
    sessions: list[FileReport] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.skills and not self.facts and not self.refused and not self.sessions

    def to_json(self) -> dict[str, object]:
        """``{"clean", "skills", "facts"}``, and ``"refused"`` when a file was refused,
        ``"sessions"`` when a session's text is withheld or masked (each key is left out
        otherwise, so the shape scripts knew is unchanged for them)."""
        out: dict[str, object] = {
            "clean": self.clean,
            "skills": [s.to_json() for s in self.skills],
            "facts": [f.to_json() for f in self.facts],
        }
        if self.refused:
            out["refused"] = [r.to_json() for r in self.refused]
        if self.sessions:
            out["sessions"] = [r.to_json() for r in self.sessions]
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


def scan_sessions(sessions_dir: Path | Sequence[Path]) -> list[FileReport]:
    """The session files whose text an episode withholds or masks (design §3.3, §8:
    transcripts are untrusted input), in load order, kind ``session``: each field that reaches
    a block — the request, the real task, the outcome, the file's name under its folder — read
    as :func:`talos.sources.sessions.episode_node` reads it and screened by the same rules
    (:func:`talos.safety.episodes.episode_findings`; evidence masked).

    Cost: one read of each session's opening and tail, as building the index reads it
    (``bench/safety_rates.py --scan`` measures it: docs/benchmarks.md)."""
    folders = session_folders(sessions_dir)
    out: list[FileReport] = []
    for key, full in session_names(sessions_dir):
        root = folder_of(key, folders).root
        path = Path(full)
        summary = read_session(path, root)
        if not summary.request:
            continue
        try:  # the name episode_node screens: the path under the folder
            rel = path.relative_to(root).as_posix()
        except ValueError:
            rel = path.name
        found = (
            *_name_findings(rel),
            *episode_findings("request", summary.request, EPISODE_CHARS),
            *episode_findings("task", summary.task, EPISODE_CHARS),
            *episode_findings("outcome", summary.outcome, OUTCOME_CHARS),
            *_together(summary),
            *_part_findings(summary),
        )
        if found:
            out.append(FileReport(full, "session", found))
    return out


def _name_findings(rel: str) -> list[Finding]:
    """What the scan says of a transcript's name under its folder: it is shown as the
    episode's path and cannot be masked, so a credential there withholds the episode
    (:func:`talos.safety.episodes.name_withheld`)."""
    out = [f for f in episode_findings("file name", rel, len(rel)) if "credential" not in f.reason]
    if mask_secrets(rel) != rel:
        out.append(Finding("file name withheld: contains a credential"))
    return out


def _shown(said: str, limit: int) -> str:
    return episode_field(said, limit) if said else ""


def _together(summary: Summary) -> tuple[Finding, ...]:
    """The session's shown fields read together (:func:`talos.safety.episodes.read_together`,
    as :func:`talos.sources.sessions.episode_node` screens them)."""
    text = _shown(summary.request, EPISODE_CHARS)
    task = _shown(summary.task, EPISODE_CHARS)
    task = "" if task == text else task
    outcome = _shown(summary.outcome, OUTCOME_CHARS + 1)
    named = [n for n, f in (("request", text), ("task", task), ("outcome", outcome)) if f]
    what = " and ".join(named) if len(named) < 3 else "request, task and outcome"
    return together_findings(what, text, task, outcome)


def _part_findings(summary: Summary) -> list[Finding]:
    """The findings of each part of a long session (design §3.3): its task and outcome alone
    and read together under the request, as the episode keeps them; a part's text that is the
    request, the task or the outcome already screened is not said twice."""
    said = {summary.request, summary.task, summary.outcome}
    text = _shown(summary.request, EPISODE_CHARS)
    out: list[Finding] = []
    for no, (task, outcome) in enumerate(summary.parts, 1):
        if task in said and outcome in said:
            continue  # the session's own fields, screened above
        for name, value, limit in (
            ("task", task, EPISODE_CHARS),
            ("outcome", outcome, OUTCOME_CHARS),
        ):
            if value not in said:
                out += episode_findings(f"part {no} {name}", value, limit)
        shown_task = _shown(task, EPISODE_CHARS)
        if shown_task:
            out += together_findings(
                f"part {no} task and outcome",
                text,
                shown_task,
                _shown(outcome, OUTCOME_CHARS + 1),
            )
    return out


def scan_home(
    memory_file: Path,
    skills_dir: Path,
    sessions_dir: Path | Sequence[Path] | None = None,
    sessions: bool = False,
) -> ScanReport:
    """Scan a home's skills tree and memory file (``talos scan``, design §8.1, §8.2), and list
    the files talos refuses to read (:func:`refused_files`; ``sessions_dir``: one folder or a
    list of them, issue 16.4); with ``sessions``, the session files whose text is withheld or
    masked too (:func:`scan_sessions`: a read of every session, which ``talos doctor`` does
    not pay)."""
    return ScanReport(
        scan_skills(skills_dir),
        scan_facts(memory_file),
        refused_files(memory_file, sessions_dir),
        scan_sessions(sessions_dir) if sessions and sessions_dir is not None else [],
    )
