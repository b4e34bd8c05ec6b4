"""Scanning a skills tree (design §8.1): every flagged file of it, with its reasons.

A ``.md`` is scanned as text (:func:`talos.safety.scan.scan_text`), any other file for being an
executable payload, and a ``.md`` that points at a flagged file is flagged too
(:func:`scan_skills`). Scans are cached per file in this process and per tree signature in the
index (:class:`ScanStore`), keyed by the code of the rules (:data:`RULES_FINGERPRINT`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from talos import fsutil
from talos.safety import secrets
from talos.safety.prefilter import P
from talos.safety.scan import Finding, scan_text
from talos.safety.secrets import mask_secrets

__all__ = [
    "MAX_SKILL_BYTES",
    "RULES_FINGERPRINT",
    "SCRIPT_SUFFIXES",
    "FileReport",
    "ScanStore",
    "scan_skills",
]

#: A skill file larger than this is not read; it is flagged as oversized (design §8.1). It also
#: bounds the scan's work on one file.
MAX_SKILL_BYTES = 1 << 20

#: A digest of the code that decides a scan (every module of :mod:`talos.safety`, the
#: detectors of :mod:`talos.safety.secrets` and the prefilter): a scan stored by other rules is
#: never
#: reused. ``_DATA``: the data files the rules read (:mod:`talos.data`).
_DATA = Path(__file__).resolve().parent.parent / "data"
RULES_FINGERPRINT = hashlib.sha256(
    b"".join(
        p.read_bytes()
        for p in (
            *sorted(Path(__file__).parent.rglob("*.py")),
            Path(secrets.__file__),
            Path(secrets.__file__).parent / "secret_patterns.py",
            Path(P.__code__.co_filename),
            *(_DATA / name for name in ("detect_secrets.json", "confusables.txt")),
        )
    )
).hexdigest()[:16]

#: File name endings of scripts and executables: a payload wherever it sits in the skills tree.
SCRIPT_SUFFIXES = frozenset(
    {
        *(".sh", ".bash", ".zsh", ".ksh", ".fish", ".csh", ".command", ".py", ".pyw", ".pyc"),
        *(".pl", ".rb", ".php", ".js", ".mjs", ".cjs", ".ts", ".ps1", ".psm1", ".bat", ".cmd"),
        *(".vbs", ".lua", ".tcl", ".applescript", ".scpt", ".jar", ".exe", ".dll", ".so"),
        *(".dylib", ".bin", ".run", ".msi", ".deb", ".rpm", ".apk", ".elf", ".appimage"),
    }
)
#: Magic numbers of native executables (ELF, PE, Mach-O, universal binaries).
_EXEC_MAGIC: tuple[bytes, ...] = (b"\x7fELF", b"MZ", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf")
_EXEC_MAGIC += (b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")
#: Version-control metadata is not part of the skills (git's hook samples are executable).
_SKIP_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True, slots=True)
class _FileScan:
    findings: tuple[Finding, ...]
    text: str | None  # decoded text of a readable .md (to find what it points at)


def _payload_kind(path: str, mode: int) -> str:
    """Why a non-.md file is an executable payload ("" when it is plain data)."""
    if mode & 0o111:
        return "executable bit set"
    suffix = os.path.splitext(path)[1].lower()
    if suffix in SCRIPT_SUFFIXES:
        return f"script ({suffix})"
    try:
        with fsutil.open_regular(path) as f:
            head = f.read(4)
    except OSError:
        return ""
    if head.startswith(b"#!"):
        return "script (#! line)"
    if head.startswith(_EXEC_MAGIC):
        return "native executable"
    return ""


@functools.lru_cache(maxsize=8192)
def _scan_file(
    path: str, size: int, stamp: tuple[int, int, int], mode: int, root: str = ""
) -> _FileScan:
    """Scan one regular file; cached by ``(path, size, (mtime, ctime, inode), mode)`` so
    recall does not re-read unchanged skills (``mode`` because ``chmod +x`` keeps the mtime;
    ctime and inode because a rewrite can put the mtime back). ``root``: the resolved skills
    folder; a ``.md`` is opened only inside it (:func:`talos.fsutil.open_entry`: a file
    swapped for a link after the listing is refused, not followed)."""
    del stamp  # part of the cache key only
    if not path.lower().endswith(".md"):
        kind = _payload_kind(path, mode)
        return _FileScan((Finding("executable payload", kind),) if kind else (), None)
    if size > MAX_SKILL_BYTES:
        return _FileScan((Finding("oversized", f"{size} bytes > {MAX_SKILL_BYTES}"),), None)
    try:
        with fsutil.open_entry(path, root) if root else fsutil.open_regular(path) as f:
            data = f.read(MAX_SKILL_BYTES + 1)
    except fsutil.RefusedEntry as e:
        return _FileScan((Finding(e.reason, e.evidence),), None)
    except OSError as e:
        return _FileScan((Finding("unreadable", e.strerror or str(e)),), None)
    if len(data) > MAX_SKILL_BYTES:
        return _FileScan((Finding("oversized", f"more than {MAX_SKILL_BYTES} bytes"),), None)
    if b"\0" in data:
        return _FileScan((Finding("unreadable", "binary content (NUL bytes)"),), None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return _FileScan((Finding("unreadable", f"not valid UTF-8 at byte {e.start}"),), None)
    return _FileScan(tuple(scan_text(text, lines=True)), text)


@dataclass(frozen=True, slots=True)
class FileReport:
    """A flagged file of the skills tree: ``path``, ``kind`` (``skill`` for a top-level
    ``.md`` or a ``NAME/SKILL.md`` of the Agent Skills layout, design §3.2; else ``file``) and
    its ``findings``."""

    path: str
    kind: str
    findings: tuple[Finding, ...]

    @property
    def reasons(self) -> tuple[str, ...]:
        """Each finding as ``"reason (line N): evidence"``."""
        return tuple(str(f) for f in self.findings)

    def to_json(self) -> dict[str, object]:
        """``{"path", "kind", "reasons"}``; a credential in the path is masked."""
        return {"path": mask_secrets(self.path), "kind": self.kind, "reasons": list(self.reasons)}

    def to_store(self) -> list[object]:
        """The report as JSON-able lists (read back by :func:`scan_skills`)."""
        return [self.path, self.kind, [[f.reason, f.evidence, f.line] for f in self.findings]]


#: An entry of the skills tree: its stat, ``None`` (a dangling link where a skill should be),
#: or ``(reason, evidence)`` when talos refuses to read it (:func:`talos.fsutil.entry_refusal`).
_Entry = os.stat_result | tuple[str, str] | None


def _tree(skills_dir: Path) -> list[tuple[str, str, _Entry]]:
    """Every regular file of the skills tree as ``(path, relative posix path, stat)``, sorted
    by relative path; symlinked folders are not followed, VCS metadata is skipped. A ``.md``
    whose stat fails comes with ``None``; a file that resolves outside the tree, or a ``.md``
    that is not a regular file (a FIFO), with its refusal (issue 13.5): it is never read."""
    root = str(skills_dir)
    real = os.path.realpath(root)
    found: list[tuple[str, str, _Entry]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            md = name.lower().endswith(".md")
            try:
                lst = os.lstat(path)
            except OSError:
                continue
            refusal = fsutil.entry_refusal(path, lst, real)
            if refusal and (md or refusal[0] == fsutil.OUTSIDE):
                found.append((path, rel, refusal))
                continue
            try:
                st: os.stat_result | None = os.stat(path) if stat.S_ISLNK(lst.st_mode) else lst
            except OSError:
                st = None
            if st is None and md:
                found.append((path, rel, None))
            elif st is not None and stat.S_ISREG(st.st_mode):
                found.append((path, rel, st))
    return sorted(found, key=lambda t: t[1])


@functools.lru_cache(maxsize=1024)
def _path_pattern(needle: str) -> re.Pattern[str]:
    """``needle`` as a path mention: not inside a longer name, optionally ``./``-prefixed. A
    bare word (``run``: no ``/``, no ``.``) only counts as ``./run``, or prose would match."""
    dot = r"(?:\./)?" if "/" in needle or "." in needle.strip(".") else r"\./"
    return re.compile(r"(?<![\w.-])" + dot + re.escape(needle) + r"(?![\w-])")


def _needles(flagged: list[str], here: str) -> list[tuple[str, str]]:
    """How a ``.md`` in folder ``here`` may name each flagged file: ``(needle, file)``."""
    out: list[tuple[str, str]] = []
    for f in flagged:
        out.append((f, f))
        if here and f.startswith(here + "/"):
            out.append((f[len(here) + 1 :], f))
        base = f.rsplit("/", 1)[-1]
        if "." in base.strip("."):
            out.append((base, f))
    return out


class ScanStore(Protocol):
    """Where a skills-tree scan can be kept between processes (the index implements it):
    ``load_scan(key)`` returns what ``save_scan(key, value)`` stored, or ``None``."""

    def load_scan(self, key: str) -> str | None: ...

    def save_scan(self, key: str, value: str) -> None: ...


_LAST_SCAN: tuple[str, list[FileReport]] | None = None


def scan_skills(skills_dir: Path, store: ScanStore | None = None) -> list[FileReport]:
    """Scan the whole skills tree (design §8.1): every flagged file with its reasons, sorted by
    path relative to ``skills_dir``.

    A top-level ``.md`` (a skill) or nested ``.md`` is flagged for red flags in its text, for
    being unreadable (binary, not UTF-8, permissions) or larger than :data:`MAX_SKILL_BYTES`;
    any other file is flagged when it is an executable payload (executable bit, script suffix,
    ``#!`` line, native executable). Then a ``.md`` that points at a flagged file (by its
    path from the skills folder, from the ``.md``'s folder, or — for names with a suffix — by
    its file name) is flagged too, repeatedly, so ``a.md → b.md → run.sh`` flags both.
    A missing folder has no findings. Never raises.

    The result is kept per tree signature (every file's relative path, size, mtime and
    mode): in this process, and in ``store`` when given, so a recall in a new process does
    not re-read 60 unchanged skills (design §11). Another version of the safety code
    never reuses it (the key holds :data:`RULES_FINGERPRINT`).
    """
    global _LAST_SCAN
    try:
        entries = _tree(skills_dir)
    except OSError:
        return []
    key = hashlib.sha256(
        json.dumps(
            [
                RULES_FINGERPRINT,
                str(skills_dir),
                *[
                    # ctime and inode too: a same-size rewrite with its mtime put back
                    # (tar, rsync -t) must be scanned again (tests/test_index_attack.py)
                    [rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode]
                    if isinstance(st, os.stat_result)
                    else [rel, *(st or ())]
                    for _p, rel, st in entries
                ],
            ]
        ).encode("utf-8", "surrogatepass")
    ).hexdigest()
    if _LAST_SCAN is not None and _LAST_SCAN[0] == key:
        return list(_LAST_SCAN[1])
    if store is not None:
        try:
            stored = _decode_reports(store.load_scan(key))
        except Exception:  # an unreadable cache costs speed only
            stored = None
        if stored is not None:
            _LAST_SCAN = (key, stored)
            return list(stored)
    reports = _scan_entries(entries, os.path.realpath(skills_dir))
    _LAST_SCAN = (key, reports)
    if store is not None:
        with contextlib.suppress(Exception):  # a cache that cannot be written costs speed only
            store.save_scan(key, json.dumps([r.to_store() for r in reports]))
    return list(reports)


def _decode_reports(value: str | None) -> list[FileReport] | None:
    """Reports stored by :func:`scan_skills` (``None`` when absent or unreadable)."""
    if value is None:
        return None
    try:
        return [
            FileReport(p, k, tuple(Finding(str(r), str(e), int(n)) for r, e, n in found))
            for p, k, found in json.loads(value)
        ]
    except (ValueError, TypeError):
        return None


def _name_secret(rel: str) -> Finding | None:
    """A finding when the path ``rel`` holds a credential (masked), else ``None``."""
    found = secrets.find_secrets(rel)
    if not found:
        return None
    shown = secrets.mask_window(rel, secrets.secret_regions(found), found[0].start, found[0].end)
    return Finding("contains a credential value (in its file name)", shown)


def _skill_folder_file(rel: str) -> bool:
    """Whether the relative path ``rel`` is a skill of the Agent Skills layout:
    ``NAME/SKILL.md`` (design §3.2, :data:`talos.sources.skills.SKILL_FILE`)."""
    parts = rel.split("/")
    return len(parts) == 2 and parts[1] == "SKILL.md"


def _scan_entries(entries: list[tuple[str, str, _Entry]], root: str = "") -> list[FileReport]:
    """:func:`scan_skills` over a listed tree, without caches (``root``: the resolved
    folder, :func:`_scan_file`)."""
    scans: dict[str, _FileScan] = {}
    for path, rel, st in entries:
        if st is None:
            scans[rel] = _FileScan((Finding("unreadable", "dangling symbolic link"),), None)
        elif not isinstance(st, os.stat_result):  # refused: never read (issue 13.5)
            scans[rel] = _FileScan((Finding(*st),), None)
        else:
            scans[rel] = _scan_file(
                path, st.st_size, (st.st_mtime_ns, st.st_ctime_ns, st.st_ino), st.st_mode, root
            )
    found: dict[str, tuple[Finding, ...]] = {rel: s.findings for rel, s in scans.items()}
    for rel in found:  # a credential in the file's own name (it is printed: path, warnings)
        if rel.lower().endswith(".md") and (named := _name_secret(rel)):
            found[rel] = (named, *found[rel])
    changed = True
    while changed:  # a .md pointing at a flagged file is flagged; repeat until nothing changes
        changed = False
        flagged = [rel for rel, r in found.items() if r]
        for rel, s in scans.items():
            if found[rel] or s.text is None:
                continue
            for needle, target in _needles(flagged, os.path.dirname(rel)):
                if _path_pattern(needle).search(s.text):
                    found[rel] = (Finding("points at flagged file", target),)
                    changed = True
                    break
    out: list[FileReport] = []
    for path, rel, _st in entries:
        if found[rel]:
            top = "/" not in rel and rel.lower().endswith(".md")
            kind = "skill" if top or _skill_folder_file(rel) else "file"
            out.append(FileReport(path, kind, found[rel]))
    return out
