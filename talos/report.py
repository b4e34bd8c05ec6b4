"""``talos report``: what recall has been doing, from the trace and the usage counts (design §6.6).

:func:`build_report` reads ``recall_trace.jsonl`` (one line per recall, design §6.3) and the
usage counts of the authorized scopes, and returns a JSON-ready dict. Only trace lines of
requests whose scopes are all authorized are read (:func:`read_trace`): ``--scope
project:alpha`` never sees what a beta recall picked, nor how many beta recalls there were.

* ``recalls`` (trace lines), ``empty_rounds`` (``picked == []``), ``body_rounds`` (a skill body
  was delivered), their rates, ``picks`` (rows delivered) and ``picks_by_kind``;
* ``per_day``: recalls, empty and body rounds per UTC day, every day from the first recall to
  the last (days without a recall are listed with zeros, so a plot's time axis is true);
* ``scores``: count, min, median, mean, max and a histogram (:data:`SCORE_BINS`) of the scores
  of every picked row;
* ``most_recalled``: the keys picked most often in the trace (ties: first picked first);
* ``never_recalled``: facts and skills of the current view (merged members included) that were
  never picked — no hit in the usage counts and no pick in the trace — most-seen first, then in
  load order. Episodes are left out: they are not counted (design §6.3), and most old sessions
  are never recalled by design.

:func:`render_html` turns it into one self-contained page: inline CSS and SVG plots generated
here, no script, no fonts or files fetched from anywhere.
"""

from __future__ import annotations

import datetime as dt
import html
import math
import statistics
import time
import unicodedata
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from talos.fsutil import json_value, open_regular
from talos.memory import Memory
from talos.model import KINDS, Node, node_identity
from talos.render import shown
from talos.text import one_line
from talos.usage.counts import trace_scopes

__all__ = ["SCORE_BINS", "build_report", "read_trace", "render_html"]

#: Histogram edges of picked scores: ``[lo, hi)`` bins, the last one open-ended.
SCORE_BINS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0)


def read_trace(
    path: Path, scopes: Collection[str] | None = None
) -> tuple[list[dict[str, Any]], int]:
    """The well-formed lines of a recall trace, and how many lines were not.

    A line is well-formed when it is a JSON object with a list ``picked`` (finite scores), a
    time ``t`` between 1970 and tomorrow and, when present, a list ``scopes`` of names
    (:func:`_well_formed`). A missing file is an empty trace.

    Args:
        path: the trace file.
        scopes: the reader's authorized scopes (design §6.3, §7.3): only lines whose request
            scopes (:func:`talos.usage.counts.trace_scopes`) are all among them are read — a line
            of an older talos, which has none, is ``global``'s. A line that cannot be read
            names no scope, so it is counted only for a reader authorized for ``global``.
            ``None``: every line.
    """
    allowed = None if scopes is None else frozenset(scopes)
    latest = time.time() + 86400  # a line "written" later than tomorrow: a wrong clock
    rounds: list[dict[str, Any]] = []
    bad = 0
    try:
        with open_regular(path) as f:  # never a FIFO or a device (issue 12.3)
            for blob in f:
                if not blob.strip():
                    continue
                try:
                    rec = json_value(blob.decode("utf-8", errors="replace"))
                except ValueError:  # not JSON, nested too deeply, NaN
                    rec = None
                owner = trace_scopes(rec) if isinstance(rec, dict) else None
                if allowed is not None and not (owner or _UNREADABLE) <= allowed:
                    continue  # another scope's recall: not even counted (design §7.3)
                if owner is not None and _well_formed(rec, latest):
                    rounds.append(rec)
                else:
                    bad += 1
    except FileNotFoundError:
        pass
    return rounds, bad


def _well_formed(rec: Any, latest: float) -> bool:
    """Whether trace line ``rec`` is one a recall wrote (design §6.3): an object with a list
    ``picked`` of objects whose scores, when numbers, are finite, and a time ``t`` from 1970
    to ``latest``. ``"t": 1e400`` raised OverflowError out of report, and one line from the
    year 9999 made the per-day series 2.9 million days long (35 s, 3.9 GB; hostile pass)."""
    if not isinstance(rec, dict):
        return False
    picked, t = rec.get("picked"), rec.get("t")
    if not isinstance(picked, list) or not all(isinstance(p, dict) for p in picked):
        return False
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= latest:
        return False
    return all(not isinstance(p.get("score"), float) or math.isfinite(p["score"]) for p in picked)


#: Whose a trace line is when it cannot be read: ``global`` (what an untagged line is).
_UNREADABLE = frozenset({"global"})


def _key_text(key: str, texts: dict[str, str]) -> str:
    """The text of a traced row: the whole text of the memory that holds ``key`` now, else the
    key's own (design §6.3: ``text[:80]``) with "…" when it may have been cut there."""
    if key in texts:
        return texts[key]
    text = key.partition(":")[2]
    return text + "…" if len(text) >= 80 else text


def _day(t: float) -> dt.date:
    return dt.datetime.fromtimestamp(t, dt.UTC).date()


def _rate(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _bins(scores: Sequence[float]) -> list[dict[str, Any]]:
    edges = list(SCORE_BINS)
    counts = [0] * len(edges)
    for s in scores:
        i = max(0, sum(1 for e in edges if s >= e) - 1)
        counts[i] += 1
    return [
        {"lo": lo, "hi": edges[i + 1] if i + 1 < len(edges) else None, "count": counts[i]}
        for i, lo in enumerate(edges)
    ]


def build_report(mem: Memory, top: int = 10, at: dt.date | None = None) -> dict[str, Any]:
    """Summarize the trace and usage of ``mem`` (design §6.6). Changes no memory and no count.

    Args:
        mem: the memory (its trace file, usage store and authorized view).
        top: how many most-recalled keys to list.
        at: business date of the view whose never-recalled memories are listed (default today).

    Returns:
        The JSON-ready summary described in the module docstring.
    """
    rounds, bad = read_trace(mem.paths.trace_file, mem.scopes)
    per_day: dict[dt.date, list[int]] = {}
    by_kind = dict.fromkeys(KINDS, 0)
    keys: dict[str, dict[str, Any]] = {}
    scores: list[float] = []
    empty = body = picks = 0
    for rec in rounds:
        day = _day(rec["t"])
        counts = per_day.setdefault(day, [0, 0, 0])
        picked = rec["picked"]
        counts[0] += 1
        if not picked:
            empty += 1
            counts[1] += 1
        if any(p.get("body") is True for p in picked):
            body += 1
            counts[2] += 1
        for p in picked:
            key = str(p.get("key", ""))
            kind = key.partition(":")[0]
            by_kind[kind] = by_kind.get(kind, 0) + 1
            picks += 1
            score = p.get("score")
            entry = keys.setdefault(key, {"picks": 0, "bodies": 0, "scores": [], "last": day})
            entry["picks"] += 1
            entry["bodies"] += p.get("body") is True
            entry["last"] = max(entry["last"], day)
            if isinstance(score, (int, float)) and not isinstance(score, bool):
                scores.append(float(score))
                entry["scores"].append(float(score))

    days: list[dict[str, Any]] = []
    if per_day:
        first, last = min(per_day), max(per_day)
        for offset in range((last - first).days + 1):
            d = first + dt.timedelta(days=offset)
            r, e, b = per_day.get(d, (0, 0, 0))
            days.append({"day": d.isoformat(), "recalls": r, "empty": e, "body": b})

    usage = mem.usage()
    members: list[Node] = []
    seen_ids: set[tuple[str, str, int]] = set()
    graph = mem.graph(at)
    for rep in graph.nodes[: graph.records]:  # records only: episodes are not counted
        for n in rep.family():
            ident = (n.key, n.path, n.line)
            if n.kind != "episode" and ident not in seen_ids:
                seen_ids.add(ident)
                members.append(n)
    texts = {n.key: n.text for n in members}  # a trace key holds 80 characters of the text
    ranked = sorted(keys.items(), key=lambda kv: -kv[1]["picks"])  # stable: first picked first
    most = [
        {
            "key": key,
            "kind": key.partition(":")[0],
            "text": _key_text(key, texts),
            "picks": v["picks"],
            "bodies": v["bodies"],
            "mean_score": round(statistics.fmean(v["scores"]), 4) if v["scores"] else None,
            "last_day": v["last"].isoformat(),
        }
        for key, v in ranked[: max(top, 0)]
    ]

    never = []
    for n in members:
        stat = usage.get(n.key)
        if (stat is None or stat.hits == 0) and n.key not in keys:
            never.append(
                {
                    "key": n.key,
                    "kind": n.kind,
                    "text": n.text,
                    "seen": stat.seen if stat else 0,
                    **node_identity(n),
                }
            )
    never.sort(key=lambda r: -r["seen"])  # stable: load order among equals

    return {
        "home": str(mem.paths.home),
        "trace_file": str(mem.paths.trace_file),
        "scopes": list(mem.scopes),
        "recalls": len(rounds),
        "empty_rounds": empty,
        "body_rounds": body,
        "empty_rate": _rate(empty, len(rounds)),
        "body_rate": _rate(body, len(rounds)),
        "picks": picks,
        "picks_by_kind": by_kind,
        "malformed_lines": bad,
        "first_day": days[0]["day"] if days else None,
        "last_day": days[-1]["day"] if days else None,
        "per_day": days,
        "scores": {
            "count": len(scores),
            "min": min(scores) if scores else None,
            "median": round(statistics.median(scores), 4) if scores else None,
            "mean": round(statistics.fmean(scores), 4) if scores else None,
            "max": max(scores) if scores else None,
            "bins": _bins(scores),
        },
        "memories": len(members),
        "most_recalled": most,
        "never_recalled": never,
    }


# -- HTML ----------------------------------------------------------------------------------


def _E(text: object) -> str:
    """Text for the page: on one line, control and format characters visible (a bidi override
    in a memory would reorder the table cell, design §6.1 item 7), then HTML-escaped."""
    return html.escape(one_line(str(text)))


_CSS = """
:root { --ink:#1f2933; --muted:#616e7c; --line:#d9dee4; --bar:#3b6fb6; --empty:#c8553d;
        --body:#2a9d8f; --bg:#f7f8fa; --card:#fff; }
* { box-sizing: border-box; }
body { margin:0; padding:32px; background:var(--bg); color:var(--ink);
       font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "PingFang SC",
             "Microsoft YaHei", "Noto Sans CJK SC", "WenQuanYi Zen Hei", sans-serif; }
main { max-width: 1080px; margin: 0 auto; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 0 0 2px; }
.sub, .note { color: var(--muted); font-size: 13px; margin: 0 0 12px; }
.tiles { display:grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap:12px;
         margin: 20px 0; }
.tile, .card { background:var(--card); border:1px solid var(--line); border-radius:8px; }
.tile { padding: 12px 14px; }
.tile b { display:block; font-size: 24px; }
.tile span { color: var(--muted); font-size: 13px; }
.card { padding: 16px 18px; margin: 0 0 16px; }
.grid2 { display:grid; grid-template-columns: 1fr 1fr; gap:16px; }
.grid2 .card { margin: 0; }
svg { display:block; width:100%; height:auto; }
svg text { font-size: 11px; fill: #616e7c; }
svg .lbl { fill: var(--ink); font-size: 12px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align:left; padding: 5px 8px; border-bottom: 1px solid var(--line);
         vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
.kind { display:inline-block; padding: 0 6px; border-radius: 4px; font-size: 12px;
        background:#eef2f7; color:#334e68; }
.empty { color: var(--muted); font-style: italic; }
"""


def _nice_step(top: float, ticks: int = 4) -> float:
    """A round tick step (1, 2 or 5 × 10^n) giving about ``ticks`` intervals up to ``top``."""
    if top <= 0:
        return 1.0
    raw = top / ticks
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return float(m * mag)
    return float(10 * mag)


def _fmt(v: float) -> str:
    return f"{v:g}" if v == int(v) or abs(v) >= 10 else f"{v:.2f}".rstrip("0").rstrip(".")


def _x_labels(labels: Sequence[str], n_max: int = 12) -> set[int]:
    """Indices of the x labels to print: at most ``n_max``, always the first and last."""
    n = len(labels)
    if n <= n_max:
        return set(range(n))
    step = math.ceil(n / n_max)
    shown = set(range(0, n, step))
    shown.add(n - 1)
    if n - 1 - max(i for i in shown if i != n - 1) < step / 2:
        shown.discard(max(i for i in shown if i != n - 1))
    return shown


def _frame(
    width: int, height: int, ymax: float, suffix: str, pad: tuple[int, int, int, int]
) -> tuple[list[str], float, float]:
    """Gridlines and y labels; returns (parts, the y top value, pixels per unit)."""
    left, right, top, bottom = pad
    step = _nice_step(ymax)
    ytop = step * max(1, math.ceil(ymax / step))
    inner = height - top - bottom
    scale = inner / ytop
    parts = []
    v = 0.0
    while v <= ytop + 1e-9:
        y = height - bottom - v * scale
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="#e4e7eb" stroke-width="1"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt(v)}{suffix}</text>'
        )
        v += step
    return parts, ytop, scale


def svg_bars(
    values: Sequence[float],
    labels: Sequence[str],
    *,
    color: str = "var(--bar)",
    suffix: str = "",
    title: str = "",
    width: int = 960,
    height: int = 240,
    ymax: float | None = None,
) -> str:
    """A vertical bar chart as an inline ``<svg>``; each bar has a tooltip ``label: value``."""
    pad = (44, 20, 12, 34)
    left, right, _top, bottom = pad
    top_value = ymax if ymax is not None else max(values, default=0) or 1
    parts, _ytop, scale = _frame(width, height, top_value, suffix, pad)
    n = max(len(values), 1)
    slot = (width - left - right) / n
    bar = max(1.0, slot * 0.72)
    shown = _x_labels(labels)
    for i, (v, label) in enumerate(zip(values, labels, strict=True)):
        x = left + i * slot + (slot - bar) / 2
        h = v * scale
        y = height - bottom - h
        parts.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{color}" '
            f'rx="1"><title>{_E(label)}: {_fmt(v)}{suffix}</title></rect>'
        )
        if i in shown:
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{height - bottom + 16}" '
                f'text-anchor="middle">{_E(label)}</text>'
            )
    return _svg(width, height, title, parts)


def svg_line(
    values: Sequence[float | None],
    labels: Sequence[str],
    *,
    color: str,
    suffix: str = "%",
    ymax: float = 100.0,
    title: str = "",
    width: int = 470,
    height: int = 220,
) -> str:
    """A line chart of rates (``None`` = no data that day: the line breaks there)."""
    pad = (44, 24, 12, 34)
    left, right, _top, bottom = pad
    parts, _ytop, scale = _frame(width, height, ymax, suffix, pad)
    n = len(values)
    span = width - left - right

    def x_of(i: int) -> float:
        return left + (span / 2 if n == 1 else i * span / (n - 1))

    segment: list[str] = []
    segments: list[list[str]] = []
    for i, v in enumerate(values):
        if v is None:
            if segment:
                segments.append(segment)
            segment = []
            continue
        segment.append(f"{x_of(i):.1f},{height - bottom - v * scale:.1f}")
    if segment:
        segments.append(segment)
    for seg in segments:
        parts.append(
            f'<polyline points="{" ".join(seg)}" fill="none" stroke="{color}" '
            f'stroke-width="2" stroke-linejoin="round"/>'
        )
    for i, v in enumerate(values):
        if v is not None:
            parts.append(
                f'<circle cx="{x_of(i):.1f}" cy="{height - bottom - v * scale:.1f}" r="3" '
                f'fill="{color}"><title>{_E(labels[i])}: {_fmt(v)}{suffix}</title></circle>'
            )
    for i in _x_labels(labels, 6):
        parts.append(
            f'<text x="{x_of(i):.1f}" y="{height - bottom + 16}" '
            f'text-anchor="middle">{_E(labels[i])}</text>'
        )
    return _svg(width, height, title, parts)


def svg_hbars(
    items: Sequence[tuple[str, float, str]],
    *,
    color: str = "var(--bar)",
    title: str = "",
    width: int = 960,
    label_width: int = 470,
) -> str:
    """Horizontal bars: ``(label, value, tooltip)`` per row; labels are cut to fit the
    ``label_width`` pixels at the end of which they are right-aligned."""
    row = 24
    height = max(row * len(items) + 8, 32)
    top_value = max((v for _l, v, _t in items), default=0) or 1
    span = width - label_width - 60
    parts = []
    for i, (label, v, tip) in enumerate(items):
        y = 4 + i * row
        short = _clip(label, label_width // 7)
        w = max(1.0, v / top_value * span)
        parts.append(
            f'<text class="lbl" x="{label_width - 8}" y="{y + 15}" text-anchor="end">'
            f"{_E(short)}<title>{_E(label)}</title></text>"
            f'<rect x="{label_width}" y="{y + 3}" width="{w:.1f}" height="{row - 8}" '
            f'fill="{color}" rx="2"><title>{_E(tip)}</title></rect>'
            f'<text x="{label_width + w + 6:.1f}" y="{y + 15}">{_fmt(v)}</text>'
        )
    return _svg(width, height, title, parts)


def _clip(text: str, columns: int) -> str:
    """``text`` cut to ``columns`` display columns (a wide CJK character takes two), with "…"."""
    used = 0
    for i, ch in enumerate(text):
        used += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        if used > columns - 1:
            return text[:i] + "…"
    return text


def _svg(width: int, height: int, title: str, parts: list[str]) -> str:
    return (
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="{_E(title)}">'
        + "".join(parts)
        + "</svg>"
    )


def _pct(rate: float) -> str:
    return f"{rate * 100:.1f}%"


def render_html(report: dict[str, Any], *, never_limit: int = 50) -> str:
    """One self-contained HTML page for ``report`` (from :func:`build_report`).

    Plots (inline SVG): recalls per day, empty-round rate and body-injection rate per day,
    score distribution, most recalled memories; then a table of never-recalled memories (the
    first ``never_limit``). Same report → same bytes.
    """
    r = report
    days = r["per_day"]
    one_year = len({x["day"][:4] for x in days}) == 1  # once: per day it was 56 s at 20,000
    labels = [d["day"][5:] if one_year else d["day"] for d in days]
    body: list[str] = []
    span = f"{r['first_day']} → {r['last_day']}" if r["first_day"] else "no recalls yet"
    body.append(
        f"<h1>talos report</h1><p class='sub'>{_E(r['home'])} · scopes "
        f"{_E(', '.join(r['scopes']))} · {_E(span)} (UTC days)</p>"
    )
    tiles = [
        (str(r["recalls"]), "recalls"),
        (_pct(r["empty_rate"]), f"empty rounds ({r['empty_rounds']})"),
        (_pct(r["body_rate"]), f"rounds with a skill body ({r['body_rounds']})"),
        (str(r["picks"]), "memories delivered"),
        (f"{len(r['never_recalled'])} / {r['memories']}", "facts & skills never recalled"),
    ]
    body.append(
        "<div class='tiles'>"
        + "".join(f"<div class='tile'><b>{_E(v)}</b><span>{_E(k)}</span></div>" for v, k in tiles)
        + "</div>"
    )
    if r["malformed_lines"]:
        body.append(
            f"<p class='note'>{r['malformed_lines']} trace line(s) could not be read and "
            "were skipped.</p>"
        )

    def card(title: str, note: str, content: str) -> str:
        return (
            f"<section class='card'><h2>{_E(title)}</h2><p class='note'>{_E(note)}</p>"
            f"{content}</section>"
        )

    none = "<p class='empty'>No recalls in the trace yet.</p>"
    nothing = "<p class='empty'>No memory has been delivered yet.</p>" if days else none
    body.append(
        card(
            "Recalls per day",
            "One trace line per recall call.",
            svg_bars([d["recalls"] for d in days], labels, title="recalls per day")
            if days
            else none,
        )
    )

    def rates(field: str) -> list[float | None]:
        return [round(d[field] / d["recalls"] * 100, 1) if d["recalls"] else None for d in days]

    body.append(
        "<div class='grid2'>"
        + card(
            "Empty-round rate",
            "Share of recalls that returned nothing, per day.",
            svg_line(rates("empty"), labels, color="var(--empty)", title="empty-round rate")
            if days
            else none,
        )
        + card(
            "Body-injection rate",
            "Share of recalls that delivered a skill's file content, per day.",
            svg_line(rates("body"), labels, color="var(--body)", title="body-injection rate")
            if days
            else none,
        )
        + "</div><div style='height:16px'></div>"
    )
    sc = r["scores"]
    bins = sc["bins"]
    bin_labels = [
        f"{b['lo']:.2f}–{b['hi']:.2f}" if b["hi"] is not None else f"≥ {b['lo']:.2f}" for b in bins
    ]
    stats = (
        f"{sc['count']} picked rows · min {sc['min']} · median {sc['median']} · "
        f"mean {sc['mean']} · max {sc['max']}"
        if sc["count"]
        else "No picked rows yet."
    )
    body.append(
        card(
            "Score distribution",
            f"Scores of every delivered row. {stats}",
            svg_bars([b["count"] for b in bins], bin_labels, title="score distribution", height=220)
            if sc["count"]
            else nothing,
        )
    )
    most = r["most_recalled"]
    items = [
        (
            f"[{m['kind']}] {m['text']}",
            m["picks"],
            f"{m['picks']} picks, {m['bodies']} with body, mean score {m['mean_score']}, "
            f"last {m['last_day']}",
        )
        for m in most
    ]
    body.append(
        card(
            "Most recalled",
            "Memories delivered most often (from the trace).",
            svg_hbars(items, title="most recalled") if items else nothing,
        )
    )
    never = r["never_recalled"]
    if never:
        rows = "".join(
            f"<tr><td><span class='kind'>{_E(n['kind'])}</span></td>"
            f"<td>{_E(shown(n['text']))}</td>"
            f"<td class='num'>{n['seen']}</td></tr>"
            for n in never[:never_limit]
        )
        more = (
            f"<p class='note'>… and {len(never) - never_limit} more (see --json).</p>"
            if len(never) > never_limit
            else ""
        )
        table = (
            "<table><thead><tr><th>kind</th><th>memory</th><th class='num'>seen in recalls</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>{more}"
        )
    elif r["memories"]:
        table = "<p class='empty'>Every fact and skill has been recalled at least once.</p>"
    else:
        table = "<p class='empty'>No facts or skills in view.</p>"
    body.append(
        card(
            "Never recalled",
            "Facts and skills in view that no recall has delivered yet; most-seen first. "
            "Candidates to review with talos forget, which proposes only memories talos wrote.",
            table,
        )
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>talos report</title><style>{_CSS}</style></head><body><main>"
        + "".join(body)
        + "</main></body></html>\n"
    )
