"""Skills: ``skills/*.md`` with ``name``/``description`` frontmatter (design §3.2; the one
parser, :func:`talos.sources.facts.parse_frontmatter`, also reads memory.md's), and, for every
model but ``classic``, the Agent Skills layout: a folder ``skills/NAME/`` holding ``SKILL.md``
(:data:`SKILL_FILE`) is one skill, named ``NAME``, its body that file; the folder's other files
are not read (the block names the folder, :func:`talos.render.skill_shown`)."""

from __future__ import annotations

import os
from pathlib import Path

from talos import fsutil
from talos.model import Node
from talos.safety import MAX_SKILL_BYTES, ScanStore, mask_secrets, scan_skills
from talos.sources.facts import NAMED_FIELDS, frontmatter_size, parse_frontmatter
from talos.text import MATCH_MAX, fold_whitespace, matching_keywords
from talos.view.canon import canonical_name
from talos.warn import warn

__all__ = [
    "DESC_MAX",
    "MAX_SKILL_BYTES",
    "NAME_MAX",
    "SKILL_FILE",
    "flagged_skills",
    "load_skills",
    "parse_frontmatter",
    "read_skill",
    "skill_label",
    "skill_scopes",
]

#: Label limits (design §3.2): a label is injected every round, so it must be bounded. The
#: reference measured name ≤ 27 and description ≤ 302 characters on a real home; 60/400 cut none.
NAME_MAX, DESC_MAX = 60, 400

#: The file of a skill in the Agent Skills layout (``skills/NAME/SKILL.md``: Claude Code's
#: ``~/.claude/skills``, Codex and other agents lay out skills so).
SKILL_FILE = "SKILL.md"

TRUNCATED_NOTE = {
    "zh": "…(描述超过 {n} 字符,已截断)",
    "en": "…(description longer than {n} characters, truncated)",
}


#: Frontmatter keys whose values are provenance (design §7.1), not what a skill is about.
PROVENANCE_KEYS = frozenset(
    {"src", "source", "born", "date", "id", "key", "scope", "from", "until", "verified", "ref"}
    | {"conf", "by", "supersedes", "superseded_by", "status"}
)


def frontmatter_as_text(text: str) -> str:
    """``text`` with its frontmatter (:func:`parse_frontmatter`'s block) read as words: each
    line's value without its key, the provenance fields (:data:`PROVENANCE_KEYS`) and the
    ``---`` lines dropped; the rest as it is. What every model but ``classic`` matches a skill
    by: the keys ``name:`` and ``description:`` are words of every skill, so "what is your
    name" reached all four skills of the example home and "change my name" won a body."""
    if not text.startswith("---"):
        return text
    lines = text.split("\n")
    size = frontmatter_size(lines)
    if not size:
        return text
    values = []
    for line in lines[1 : size - 1]:
        key, colon, value = line.partition(":")
        if not colon:
            values.append(line)
        elif key.strip().lower() not in PROVENANCE_KEYS:
            values.append(value.strip())
    return "\n".join([*values, *lines[size:]])


def skill_label(name: str, desc: str, lang: str = "en") -> str:
    """The label ``name — description`` with bounded length (design §3.2, §6.7).

    Whitespace runs fold to one space; ``name`` is cut to :data:`NAME_MAX` and ``desc`` to
    :data:`DESC_MAX` characters, each followed by ``…``; a cut description also carries a note
    saying it was truncated (in ``lang``), so a truncated label never reads like a whole one.
    With only one of the two, the label is that one; with neither, ``""``.
    """
    name, desc = fold_whitespace(str(name)), fold_whitespace(str(desc))
    if len(name) > NAME_MAX:
        name = name[:NAME_MAX] + "…"
    if len(desc) > DESC_MAX:
        desc = desc[:DESC_MAX] + TRUNCATED_NOTE.get(lang, TRUNCATED_NOTE["en"]).format(n=DESC_MAX)
    return (name + " — " + desc).strip(" —")


def skill_scopes(source: Path | bytes | str) -> frozenset[str]:
    """The scope a skill file claims in its frontmatter (``scope:``), read leniently (a head
    of at most 64 KiB, bytes decoded with replacement); ``{"global"}`` when it claims none or
    cannot be read. Decides who may hear a warning about the file (:mod:`talos.warn`)."""
    data: bytes | str = b""
    if isinstance(source, Path):
        try:
            # never a FIFO or a device, nor a link out of the folder (issue 12.3, 13.5)
            with fsutil.open_entry(source, os.path.realpath(source.parent)) as f:
                data = f.read(1 << 16)
        except OSError:
            pass
    else:
        data = source
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    scope = canonical_name(parse_frontmatter(text)[0].get("scope", ""))  # as the reader folds it
    return frozenset({scope or "global"})


def _read_entry(path: Path, limit: int) -> bytes:
    """The bytes of the skill ``path``, opened inside its folder only
    (:func:`talos.fsutil.open_entry`), at most ``limit`` of them.

    Raises:
        FileTooLarge: larger. RefusedEntry: outside its folder, not a regular file, a hard
        link. OSError: unreadable.
    """
    with fsutil.open_entry(path, os.path.realpath(path.parent)) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise fsutil.FileTooLarge(path, limit)
    return data


def read_skill(path: Path) -> str | None:
    """Read a skill file as text, or ``None`` (with a warning) when it cannot be a skill:
    unreadable, not a regular file, a link out of its folder or a hard link (checked on the
    open file: :func:`talos.fsutil.open_entry`, so a file swapped for a link to /etc/passwd
    after the listing is refused), larger than :data:`MAX_SKILL_BYTES`, containing NUL bytes,
    or not UTF-8. The warning is scoped like the skill (:func:`skill_scopes`, design §7.3)."""
    try:
        data = _read_entry(path, MAX_SKILL_BYTES)
    except fsutil.FileTooLarge:
        warn(
            f"{path}: larger than {MAX_SKILL_BYTES} bytes; not loaded as a skill",
            scopes=skill_scopes(path),
        )
        return None
    except fsutil.RefusedEntry as e:
        warn(f"{path}: not loaded as a skill: {e.strerror}; see talos scan", scopes={"global"})
        return None
    except OSError as e:
        warn(f"{path}: cannot read ({e.strerror}); not loaded as a skill", scopes={"global"})
        return None
    if b"\0" in data:
        warn(
            f"{path}: binary content (NUL bytes); not loaded as a skill",
            scopes=skill_scopes(data),
        )
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        warn(
            f"{path}: not valid UTF-8 at byte {e.start}; not loaded as a skill",
            scopes=skill_scopes(data),
        )
        return None


def skill_files(skills_dir: Path, folders: bool = False) -> list[Path]:
    """The top-level ``*.md`` files of ``skills_dir``, sorted by file name ([] when missing);
    with ``folders`` (every model but ``classic``, design §3.2) also each ``NAME/SKILL.md``,
    sorted among them by its path relative to the folder (``NAME/SKILL.md``).

    A link that leads outside the folder is not a skill file (issue 13.5); the safety scan
    reports it (:func:`talos.safety.scan_skills`), and every route passes here or there. A
    skill folder that is a link is not read at all: the scan does not walk into linked
    folders, so what it holds was never scanned."""
    try:
        found = [p for p in skills_dir.glob("*.md") if p.is_file()]
        if folders:
            found += [
                d / SKILL_FILE
                for d in skills_dir.iterdir()
                if not d.is_symlink() and d.is_dir() and (d / SKILL_FILE).is_file()
            ]
    except OSError:
        return []
    if any(p.is_symlink() for p in found):
        real = os.path.realpath(skills_dir)
        found = [p for p in found if not (p.is_symlink() and fsutil.outside(p, real))]
    return sorted(found, key=lambda p: _relative(p, skills_dir))


def _relative(path: Path, skills_dir: Path) -> str:
    """A skill file's path relative to the skills folder, ``/``-separated (``deploy.md``,
    ``pdf/SKILL.md``): its sort key and its name in the safety scan's reports."""
    return path.name if path.parent == skills_dir else f"{path.parent.name}/{path.name}"


def load_skills(
    skills_dir: Path,
    lang: str = "en",
    blocked: set[str] | None = None,
    start: int = 0,
    scan_store: ScanStore | None = None,
    folders: bool = False,
) -> list[Node]:
    """Read the skills folder into skill nodes, sorted by file name (design §3.2).

    Args:
        skills_dir: the folder; only its top level is read (and ``NAME/SKILL.md`` with
            ``folders``: :func:`skill_files`); missing means no skills.
        lang: language of the truncation note in labels (``en`` or ``zh``).
        blocked: resolved paths of skills excluded on every route (the safety scan, §8.1).
        start: load order of the first node.
        scan_store: where the safety scan may keep its result between processes.
        folders: read the Agent Skills layout too (every model but ``classic``).

    Returns:
        Skill nodes: ``text`` is the label (or the file's first 60 characters when it has no
        name and no description), ``body`` the first 1201 characters (the 1200 delivered,
        design §3.2, and one more that tells the block the file goes on), ``name`` the stem
        (the folder's name for a ``NAME/SKILL.md``).
    """
    nodes: list[Node] = []
    flagged = flagged_skills(skills_dir, scan_store)  # the safety scan (design §8.1)
    for path in skill_files(skills_dir, folders):
        rel = _relative(path, skills_dir)
        if rel in flagged or (blocked and str(path.resolve()) in blocked):
            continue
        raw = read_skill(path)
        if raw is None:
            continue
        fields, _body = parse_frontmatter(raw)
        label = skill_label(fields.get("name", ""), fields.get("description", ""), lang)
        kw = matching_keywords(raw)
        if not kw:
            continue
        nodes.append(
            Node(
                kind="skill",
                text=label or raw[:60],
                keywords=kw,
                order=start + len(nodes),
                path=str(path),
                body=raw[: MATCH_MAX + 1],  # one past what is delivered: the block marks a cut
                name=path.parent.name if rel != path.name else path.stem,
                src=canonical_name(fields.get("source", "")) or "user",
                fields={
                    k: canonical_name(v) if k in NAMED_FIELDS else v
                    for k, v in fields.items()
                    if k not in ("name", "description")
                },
            )
        )
    return nodes


_WARNED: set[tuple[str, tuple[str, ...]]] = set()


def flagged_skills(skills_dir: Path, store: ScanStore | None = None) -> frozenset[str]:
    """Paths relative to ``skills_dir`` of the skills the scan flags (``NAME.md``, and
    ``NAME/SKILL.md`` of the Agent Skills layout); each new finding is reported once per
    process on stderr. This is the hook every route passes (:func:`load_skills`), so a
    flagged skill is never a node."""
    out: set[str] = set()
    for rep in scan_skills(skills_dir, store):
        if rep.kind != "skill":
            continue
        out.add(os.path.relpath(rep.path, skills_dir).replace(os.sep, "/"))
        key = (rep.path, rep.reasons)
        if key not in _WARNED:
            rules = ", ".join(dict.fromkeys(f.reason for f in rep.findings))
            if warn(  # only for a request that may see the skill (design §7.3)
                f"{mask_secrets(rep.path)}: not loaded, flagged by the safety scan ({rules}); "
                "see talos scan",
                scopes=skill_scopes(Path(rep.path)),
            ):
                _WARNED.add(key)
    return frozenset(out)
