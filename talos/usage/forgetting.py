"""Forgetting: which memories ``talos dead`` proposes (design §6.4), and what ``talos forget``
removes (design §6.5).

The policy judges what talos or an agent wrote, never what the person wrote: the tag (or a
skill's ``source:``) decides, not who typed the line. A memory qualifies when its
usage counts (:mod:`talos.usage.counts`) say it is seen often and never or no longer recalled, after
a span of days. Forgetting removes the suggested memory.md lines written by talos through the
writer (audited, restorable) and moves suggested skill files to the trash.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from talos.results import Suggestion
from talos.sources.facts import parse_fact_line
from talos.sources.skills import parse_frontmatter, read_skill, skill_files
from talos.warn import warn

if TYPE_CHECKING:
    from talos.graph.graph import Graph
    from talos.home import Paths
    from talos.usage.counts import Stat
    from talos.writer.edits import Forgotten

__all__ = ["forget", "suggestions"]


def suggestions(
    graph: Graph,
    stats: Mapping[str, Mapping[str, Stat]],
    words: Mapping[str, str],
    min_seen: int,
    stale_days: int,
    span: int,
    now: int,
) -> list[Suggestion]:
    """The forgetting suggestions of ``graph``'s records (design §6.4), in graph order.

    A fact whose tag's source is not ``user``, or a skill whose frontmatter says ``source:``
    other than ``user`` (issue 3), qualifies when ``seen >= min_seen`` and it was never hit
    ("seen N times, never recalled") or its last hit is ``>= stale_days`` days ago — and it
    has been counted for at least ``span`` days since the first recall that saw it (a
    newcomer's fact was proposed after 8 recalls in a new home's first ten minutes,
    ``tests/test_dead_span.py``). A count whose first day is not known (kept before talos
    recorded it, or the reference's counts of :mod:`talos.compat`) is judged without that
    span. Merged members count too; episodes never. Untagged and ``user``-tagged lines and
    skills without ``source:`` are never proposed; a line a person tagged ``import`` or
    ``reflect`` is. Each suggestion carries its ``src``. A memory with hits but no recorded
    hit day (imported ``[seen, hits]``) is not judged stale.

    Args:
        graph: the view's graph. stats: usage counts per scope, ``scope → key → Stat``.
        words: the labels of the home's language (:func:`talos.render.labels`: ``never``,
            ``stale``). now: today as a day number (:func:`talos.usage.counts.today`).
    """
    out: list[Suggestion] = []
    seen_ids: set[tuple[str, int]] = set()
    never: dict[int, str] = {}  # the reason per count: 583,000 suggestions at 1M facts
    none: dict[str, Stat] = {}
    for rep in graph.nodes[: graph.records]:  # episodes are never suggested
        for n in (rep, *rep.members) if rep.members else (rep,):
            if (
                n.kind not in ("fact", "skill")
                or n.src in ("user", "override")
                or (n.path, n.line) in seen_ids
            ):
                continue
            seen_ids.add((n.path, n.line))
            st = stats.get(n.fields.get("scope", "global"), none).get(n.key)
            if st is None or st.seen < min_seen:
                continue
            if st.first_day and now - st.first_day < span:
                continue  # counted for too short a time to say it is not used
            if st.hits == 0:
                reason = never.get(st.seen) or never.setdefault(
                    st.seen, words["never"].format(seen=st.seen)
                )
            elif st.last_hit_day and now - st.last_hit_day >= stale_days:
                reason = words["stale"].format(days=now - st.last_hit_day)
            else:
                continue
            out.append(
                Suggestion(
                    n.kind,
                    n.text,
                    reason,
                    n.path,
                    n.line,
                    n.raw,
                    n.scope,
                    n.src,
                    n.born,
                    st.seen,
                    st.hits,
                    st.last_hit_day,
                )
            )
    return out


def forget(
    paths: Paths,
    scopes: Sequence[str],
    folders: bool,
    chosen: Iterable[Suggestion | Sequence[str]],
) -> list[Forgotten]:
    """Remove the memory.md lines the suggestions stand for (design §6.5), and move suggested
    skill files to the trash; returns what was forgotten, with the ids ``talos restore``
    takes (issue 12.6: "can be restored" named no id).

    Removes lines *not* written by the person (``src != user``) whose text equals a
    suggestion's text, in the suggestion's scope — never a hand-written line with the same
    text. Removed lines go to the audit log with the reason. A suggestion that matches no
    line (the file changed since) removes nothing and is reported on stderr.

    Args:
        paths: the home. scopes: the authorized scopes (a skill whose scope left them is
            kept). folders: skills may be ``NAME/SKILL.md`` folders (every model but
            ``classic``, design §3.2).
        chosen: :class:`Suggestion` objects or ``(kind, text[, reason])`` tuples (scope
            ``global``); only ``fact`` suggestions remove lines, only skill
            :class:`Suggestion` objects move files.

    Returns:
        :class:`~talos.writer.edits.Forgotten` records, skills first, then lines in file order.

    Raises:
        filelock.Timeout, OSError: the file could not be rewritten (it is then unchanged).
    """
    from talos.writer import edits as writer  # imported on use: recall never writes memory.md

    wanted: dict[tuple[str, str], str] = {}
    done: list[Forgotten] = []
    for s in chosen:
        kind, text = s[0], s[1]
        if kind == "skill" and isinstance(s, Suggestion):
            skill = _forget_skill(paths, scopes, folders, s)
            if skill is not None:
                done.append(skill)
            continue
        if kind != "fact":
            continue
        scope = s.scope if isinstance(s, Suggestion) else "global"
        reason = s[2] if len(s) > 2 else "forget"
        wanted.setdefault((scope, text), reason)
    if not wanted:
        return done

    def doomed(p: Any, _raw: str) -> bool:
        return p.src != "user" and (p.fields.get("scope", "global"), p.text) in wanted

    reasons = sorted(set(wanted.values()))
    removed = writer.remove_fact_lines(paths, doomed, "forget", "; ".join(reasons))
    matched: set[tuple[str, str]] = set()
    for r in removed:
        parsed = parse_fact_line(r.raw)
        assert parsed is not None  # remove_fact_lines removes parsed facts only
        matched.add((parsed.fields.get("scope", "global"), parsed.text))
        done.append(writer.Forgotten("fact", r.id, parsed.text, f"{paths.memory_file}:{r.line}"))
    for scope, text in wanted.keys() - matched:
        warn(f"nothing to forget for {text!r} (scope {scope}): no such line written by talos")
    return done


def _forget_skill(
    paths: Paths, scopes: Sequence[str], folders: bool, s: Suggestion
) -> Forgotten | None:
    """Move a suggested skill file to the trash (restorable) if it is still a skill of this
    home (a top-level ``.md``, or a ``NAME/SKILL.md``: only that file goes, the folder's
    other files were never read and stay), still exists and is still not hand-written
    (``source:`` other than ``user``); ``None`` otherwise."""
    path = Path(s.path)
    if s.path not in {str(p) for p in skill_files(paths.skills_dir, folders)}:
        warn(f"nothing to forget for skill {s.text!r}: {path} is not a skill of this home")
        return None
    raw = read_skill(path) if path.is_file() else None
    if raw is None:
        warn(f"nothing to forget for skill {s.text!r}: {path} is gone or unreadable")
        return None
    fields, _body = parse_frontmatter(raw)
    if (fields.get("source") or "user") == "user":
        warn(f"{path}: written by the person (no source: or source: user); not forgotten")
        return None
    scope = fields.get("scope") or "global"
    if scope not in scopes:  # its scope changed since it was suggested (design §7.3)
        warn(f"nothing to forget for skill {s.text!r}: it is no longer in scope {s.scope}")
        return None
    from talos.writer import edits as writer  # imported on use: recall never writes memory.md

    dest = writer.trash_skill(paths, path, s.reason, scope)
    return writer.Forgotten("skill", writer.skill_id(path), s.text, str(dest))
