"""Episodes: the opening request of each past session (SPEC §3.3).

A session file is a ``.jsonl`` transcript. Its format is detected per file, by the first line
that is a JSON object of a known shape (:func:`detect`):

``talos``
    OpenAI-style chat messages, one per line: ``{"role": "user", "content": "..."}`` — the
    sessions of Talos homes, read exactly as the reference does.
``claude``
    Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``):
    ``{"type": "user", "message": {"role": "user", "content": STR_OR_PARTS}, ...}`` among
    ``assistant``, ``summary``, ``system`` … lines.
``codex``
    Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``):
    ``{"type": "response_item", "payload": {"type": "message", "role": "user", "content":
    [{"type": "input_text", "text": ...}]}}`` among ``session_meta``, ``event_msg``,
    ``turn_context`` … lines; older rollouts hold the bare items (``{"type": "message", ...}``)
    after a ``{"id", "timestamp", "instructions"}`` header.

Each reader yields "the first thing the user asked": the agents' own injections — tool results,
``<system-reminder>`` blocks, slash-command echoes, meta and side-chain lines, the Codex
``<environment_context>`` / ``<user_instructions>`` / AGENTS.md preambles — are not requests.

Every model but ``classic`` also reads what the session was about and what it did (SPEC §3.3,
:func:`read_session`): its *task*, the first request that is no bare slash command
(``/review``, a Claude Code ``<command-name>`` echo; one with arguments that name a task is the
person's words, ``/fix the billing bug``), nor the command's canned text that follows it
before any answer, nor a continuation ("keep going", "继续": :func:`talos.tasks.names_a_task`,
the hooks' rule; Claude Code's summary of a continued session, whose stated request is the
task); and its *outcome*, the assistant's last answer (read from the file's tail:
:data:`OUTCOME_SCAN_BYTES`, growing to :data:`SESSION_SCAN_BYTES`), never a line Claude Code
wrote itself (``API Error: …``, ``No response requested.``).

Another agent's folder is read by pointing ``sessions_dir`` at it. A folder path whose last
part is ``**`` (e.g. ``~/.claude/projects/**``) is read recursively, for agents that keep one
subfolder per project or per day; files load sorted by their path relative to the folder, which
is time order for Talos and Codex names. ``sessions_dir`` may list several folders (issue 16.4):
they load one after the other in the list's order (:func:`session_folders`, :class:`Folder`); a
folder given twice counts once and a file reached through two of them is read once.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from talos import fsutil
from talos.model import Node
from talos.safety import mask_secrets
from talos.tasks import names_a_task
from talos.text import matching_keywords
from talos.warn import warn

__all__ = [
    "AGENT_NAMES",
    "EPISODE_CHARS",
    "FORMATS",
    "OUTCOME_CHARS",
    "RECURSIVE_MARK",
    "Folder",
    "Origin",
    "Sessions",
    "Summary",
    "detect",
    "first_user_request",
    "folder_of",
    "load_episodes",
    "read_session",
    "refused_sessions",
    "session_files",
    "session_folders",
    "session_names",
    "session_origin",
    "sessions_root",
]

#: An episode's text is the first 80 characters of the session's first user request.
EPISODE_CHARS = 80

#: Most characters of a session's outcome (its assistant's last answer) that are kept, shown
#: and matched (SPEC §3.3: bounded, a visible cut; matching sees only what can be shown, as
#: a skill's 1200). 240: three lines of a terminal, a summary's length; a long answer's
#: head says what was done, its tail is detail.
OUTCOME_CHARS = 240

#: Bytes of a session's tail first read for its last answer; the window grows eightfold up
#: to :data:`SESSION_SCAN_BYTES` while no answer is in it (a Claude Code tool result can be
#: a line of hundreds of kilobytes).
OUTCOME_SCAN_BYTES = 256 << 10

#: A slash command as a person types it: ``/review``, ``/compact keep it short``; not a path
#: (``/etc/hosts is gone``: the name goes on with ``/``).
_SLASH = re.compile(r"/[A-Za-z][\w:.-]*(?:\s|$)")

#: A session is read until its first request, but never more than this many bytes: a
#: transcript of junk (``/dev/zero``-like, one endless line) cannot exhaust memory.
SESSION_SCAN_BYTES = 64 << 20

#: A lone surrogate (a ``"\ud800"`` escape in the JSON): no output can print it as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")

#: Last part of a sessions path that asks for a recursive read (``DIR/**``).
RECURSIVE_MARK = "**"

#: ``<system-reminder>…</system-reminder>`` blocks that Claude Code adds to user turns.
_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.DOTALL)

#: How Claude Code opens the summary it puts in the person's turn when a session goes on after
#: its context ran out; older transcripts carry no ``isCompactSummary`` flag on that line, and
#: the row showed the preamble as the session's task (the attacker's pass 22).
_CONTINUED = "This session is being continued from a previous conversation"

#: The section of a Claude Code compaction summary that states what the person asked
#: (``1. Primary Request and Intent:``, ``## 1. Primary request and intent``): the first
#: line of text after it is the continued session's task.
_INTENT = re.compile(r"primary\s+request\s+and\s+intent\W*?:?[ \t]*\**[ \t]*", re.IGNORECASE)

#: A list item's or a heading's mark at a line's start (``-``, ``*``, ``1.``, ``**``, ``#``).
_ITEM_MARK = re.compile(r"^(?:[-*+#>]+|\d{1,3}[.)]|\*\*[^*\n]{0,60}?\*\*:?)\s*")

#: A Claude Code slash command echo: its name and the arguments the person typed after it.
_COMMAND_NAME = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)

#: Claude Code user turns that echo a slash command, its output, or a ``!`` shell command,
#: or that mark an interruption: the agent's bookkeeping, not a request.
_CLAUDE_NOT_REQUESTS = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<command-contents>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "[Request interrupted by user",
    "Caveat: The messages below were generated by the user while running local commands",
    _CONTINUED,
)

#: Claude Code line flags that mark a user-role line the person did not type: injected
#: context (``isMeta``), a sub-agent's prompt (``isSidechain``), a compaction summary.
_CLAUDE_SKIP_FLAGS = ("isMeta", "isSidechain", "isCompactSummary", "isVisibleInTranscriptOnly")

#: Line types of a Claude Code transcript (any of them identifies the format).
_CLAUDE_TYPES = frozenset(
    {"user", "assistant", "summary", "system", "file-history-snapshot", "queue-operation"}
)

#: Keys every Claude Code line carries (a line type added in a later version still tells).
_CLAUDE_KEYS = frozenset({"sessionId", "leafUuid", "parentUuid"})

#: Envelope types of a Codex CLI rollout (any of them identifies the format).
_CODEX_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)

#: Codex user messages that are the CLI's preamble, not the person's words.
_CODEX_NOT_REQUESTS = (
    "<environment_context>",
    "<user_instructions>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
    "<user_shell_command>",
    "<turn_aborted>",
)


def detect(obj: Any) -> str | None:
    """The format a parsed transcript line belongs to: ``talos``, ``claude``, ``codex`` or
    ``None`` (no verdict from this line; the next one decides)."""
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    if kind in _CODEX_TYPES and "payload" in obj:
        return "codex"
    if kind == "message" or "record_type" in obj or {"id", "instructions"} <= obj.keys():
        return "codex"
    if "payload" not in obj and (
        isinstance(obj.get("message"), dict)
        or kind in _CLAUDE_TYPES
        or not _CLAUDE_KEYS.isdisjoint(obj.keys())
    ):
        return "claude"
    if "role" in obj:
        return "talos"
    return None


def _talos(obj: Any) -> str | None:
    """The reference rule: a ``{"role": "user", "content": "<string>"}`` object."""
    if isinstance(obj, dict) and obj.get("role") == "user" and isinstance(obj.get("content"), str):
        return str(obj["content"])
    return None


def _texts(content: Any, part_types: Iterable[str]) -> list[str] | None:
    """Text of a message ``content``: a string, or the ``text`` of its parts of the given types.
    ``None`` when the content is neither."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return None
    types = set(part_types)
    return [
        p["text"]
        for p in content
        if isinstance(p, dict) and p.get("type") in types and isinstance(p.get("text"), str)
    ]


def _claude(obj: Any) -> str | None:
    """A Claude Code ``{"type": "user", "message": {...}}`` line the person typed."""
    if not isinstance(obj, dict) or obj.get("type") != "user":
        return None
    if any(obj.get(flag) is True for flag in _CLAUDE_SKIP_FLAGS):
        return None
    msg = obj.get("message")
    if not isinstance(msg, dict) or msg.get("role", "user") != "user":
        return None
    content = msg.get("content")
    if isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") == "tool_result" for p in content
    ):
        return None  # a tool turn: the results of the agent's own tool calls
    texts = _texts(content, ("text",))
    if texts is None:
        return None
    kept = [t for t in (_REMINDER.sub("", t).strip() for t in texts) if t]
    kept = [t for t in kept if not t.startswith(_CLAUDE_NOT_REQUESTS)]
    return "\n".join(kept) or None


def _codex(obj: Any) -> str | None:
    """A Codex user message (enveloped or bare item, or a ``user_message`` event) that is not
    the CLI's preamble."""
    if not isinstance(obj, dict):
        return None
    item = obj.get("payload") if obj.get("type") in _CODEX_TYPES else obj
    if not isinstance(item, dict):
        return None
    if obj.get("type") == "event_msg":
        if item.get("type") != "user_message" or item.get("kind", "plain") != "plain":
            return None
        texts = _texts(item.get("message"), ())
    elif item.get("type") == "message" and item.get("role") == "user":
        texts = _texts(item.get("content"), ("input_text", "text"))
    else:
        return None
    kept = [t.strip() for t in texts or () if t.strip()]
    kept = [t for t in kept if not t.startswith(_CODEX_NOT_REQUESTS)]
    return "\n".join(kept) or None


#: Per-format readers: a parsed line → the request it holds, or ``None``.
FORMATS: dict[str, Callable[[Any], str | None]] = {
    "talos": _talos,
    "claude": _claude,
    "codex": _codex,
}


def first_user_request(path: Path, folder: Path | str | None = None) -> str:
    """The first real user request of a ``.jsonl`` session, in whichever format it is written.

    The format is decided by the first line :func:`detect` recognises; lines before that are
    skipped. Talos format keeps the reference's rules exactly: lines that are JSON but not
    objects, or whose ``content`` is not a string (a list of parts), are skipped, and a line that
    is not JSON at all ends the read — the file is treated as damaged from there on. The golden
    fixture ``home-basic/.talos/sessions/2026-07-07T09.jsonl`` pins it (its request follows a
    garbled line and must not become an episode); SPEC §3.3's "skipped" is narrowed accordingly.
    A non-JSON line also ends the read before any format is known (that is the same fixture). In
    Claude Code and Codex files, which are append-only logs, a non-JSON line (a torn write) is
    skipped.

    At most :data:`SESSION_SCAN_BYTES` are read, line by line. The file is opened only inside
    ``folder`` (default: its own folder), as a regular file with one name
    (:func:`talos.fsutil.open_entry`): a session swapped for a link out of the folder after
    the listing, or a hard link, is refused with one warning (hostile pass of issue 13).

    Returns:
        The request text, or "" when there is none (or the file cannot be read).
    """
    return _read(path, folder, outcome=False).request


class Summary(NamedTuple):
    """What a session file says (:func:`read_session`): ``request``, the first user request
    (the reference's episode, :func:`first_user_request`); ``task``, the first real request
    ("" when none is: the request stands for it); ``outcome``, the assistant's last answer
    ("" when none)."""

    request: str
    task: str
    outcome: str


def read_session(path: Path, folder: Path | str | None = None) -> Summary:
    """The opening request, the real task and the outcome of a ``.jsonl`` session (SPEC §3.3).

    The request is :func:`first_user_request`'s. The task is the first request after it (or
    it) that names a task (:func:`talos.tasks.names_a_task`, the hooks' rule: two words, not
    "keep going" / "继续") and is neither a slash command (``/review``, a Claude Code
    ``<command-name>`` echo) nor the text a command put in the person's turn (the next user
    turn before any answer; a local command's output ends that). A command whose arguments
    name a task is the task as typed (``/fix the billing bug``, a Claude Code echo's
    ``<command-args>``); a Claude Code compaction summary (continued session) is no request,
    and the request it states is the task. The outcome is the text of the last assistant
    message (Claude Code's text parts but its synthetic lines, Codex ``output_text`` and
    ``agent_message``, talos's ``content``), from the file's tail. Same limits as
    :func:`first_user_request` (bytes read, the file opened only inside ``folder``).

    Returns:
        The :class:`Summary`; every field "" when the file has no request or cannot be read.
    """
    return _read(path, folder, outcome=True)


def _read(path: Path, folder: Path | str | None, outcome: bool) -> Summary:
    """:func:`read_session`, without the outcome unless asked."""
    real = os.path.realpath(path.parent if folder is None else folder)
    try:
        with fsutil.open_entry(path, real) as f:  # never a FIFO (issue 12.3), nor outside
            fmt, request, task = _opening(f, outcome)
            answer = _last_answer(f, fmt) if outcome and request else ""
            return Summary(request, task, answer)
    except fsutil.RefusedEntry as e:
        key = (str(path), e.evidence)
        if key not in _WARNED and warn(f"{e}", scopes={"global"}):  # episodes are global's
            _WARNED.add(key)
    except OSError:
        pass
    return Summary("", "", "")


def _opening(f: BinaryIO, task: bool) -> tuple[str, str, str]:
    """``(format, request, task)`` of an open session, read from its start: the request by
    the reference's rules (:func:`first_user_request`), then, when ``task``, on to the first
    real request (:func:`read_session`); the task is "" when none is found or the request
    is it. A task may come before the request: a Claude Code command echo with arguments
    (:func:`_claude_typed`) or a compaction summary's stated request; the read then goes on
    to the request."""
    reader: Callable[[Any], str | None] | None = None
    fmt, request, canned, early = "", "", False, ""
    for obj in _json_lines(f, SESSION_SCAN_BYTES):
        if obj is _TORN:
            if reader is None or reader is _talos:
                return fmt, request, early if request else ""
            continue
        if reader is None:
            fmt = detect(obj) or ""
            if not fmt:
                continue
            reader = FORMATS[fmt]
        said = reader(obj)
        if said:
            first = not request
            request = request or said
            if not task:
                return fmt, request, ""
            if early:
                return fmt, request, early
            if canned:
                canned = False  # a command's text in the person's turn
            elif m := _SLASH.match(said.lstrip()):
                if names_a_task(said.lstrip()[m.end() :]):  # its arguments: the person's words
                    return fmt, request, "" if first else said.strip()
                canned = True
            elif names_a_task(said):
                return fmt, request, "" if first else said
        elif _answer(fmt, obj) is not None:
            canned = False
        elif fmt == "claude":
            mark = _claude_mark(obj)
            if mark:
                canned = mark == "command"
            if task and not early and mark in ("command", "summary"):
                early = _claude_typed(obj) if mark == "command" else _summary_task(obj)
    return fmt, request, early if request else ""


def _claude_text(obj: Any) -> str:
    """The text parts of a Claude Code line's message, joined ("" for none)."""
    msg = obj.get("message") if isinstance(obj, dict) else None
    texts = _texts(msg.get("content"), ("text",)) if isinstance(msg, dict) else None
    return "\n".join(texts or ())


def _claude_mark(obj: Any) -> str:
    """``command`` for a Claude Code user turn that echoes a slash command (its canned text
    may follow), ``local`` for a local command's output (none follows), ``summary`` for a
    compaction summary (flagged ``isCompactSummary``, or opening with :data:`_CONTINUED`),
    else ""."""
    if not isinstance(obj, dict) or obj.get("type") != "user":
        return ""
    joined = _claude_text(obj)
    if "<local-command-stdout>" in joined or "<local-command-stderr>" in joined:
        return "local"
    if "<command-name>" in joined:
        return "command"
    if obj.get("isCompactSummary") is True or joined.lstrip().startswith(_CONTINUED):
        return "summary"
    return ""


def _claude_typed(obj: Any) -> str:
    """What the person typed for a Claude Code command echo: ``/fix the billing bug`` from
    ``<command-name>/fix</command-name>`` and ``<command-args>the billing bug</command-args>``
    when the arguments name a task (:func:`talos.tasks.names_a_task`), else "": the command's
    canned text, which follows in the person's turn, is no one's words (the attacker's pass
    22 saw it shown as the task, ``$ARGUMENTS`` and all)."""
    joined = _claude_text(obj)
    name, args = _COMMAND_NAME.search(joined), _COMMAND_ARGS.search(joined)
    if name is None or args is None or not names_a_task(args[1]):
        return ""
    command = name[1] if name[1].startswith("/") else "/" + name[1]
    return f"{command} {args[1].strip()}"


def _summary_task(obj: Any) -> str:
    """The request a Claude Code compaction summary states (the first line of text after its
    ``Primary Request and Intent`` section's title, list marks dropped) when it names a task,
    else "": a continued session's task is the one it went on with."""
    joined = _claude_text(obj)
    m = _INTENT.search(joined)
    if m is None:
        return ""
    for line in joined[m.end() : m.end() + 4 * EPISODE_CHARS].split("\n"):
        text = _ITEM_MARK.sub("", line.strip()).strip()
        if text and not text.endswith(":"):  # "The user's requests, in order:" opens a list
            return text if names_a_task(text) else ""
    return ""


#: The model Claude Code names on an assistant line it writes itself: ``API Error: Request
#: was aborted.`` (also flagged ``isApiErrorMessage``), ``No response requested.`` after an
#: interruption. The outcome showed them instead of what the session did (attacker's pass 22).
_SYNTHETIC = "<synthetic>"


def _answer(fmt: str, obj: Any) -> str | None:
    """The text of an assistant message of a transcript line in ``fmt`` ("" for one without
    text: a tool call), or ``None`` for a line that is no assistant message: also a Claude
    Code line the agent wrote itself (:data:`_SYNTHETIC`, ``isApiErrorMessage``)."""
    if not isinstance(obj, dict):
        return None
    texts: list[str] | None
    if fmt == "talos":
        if obj.get("role") != "assistant":
            return None
        texts = _texts(obj.get("content"), ("text", "output_text"))
    elif fmt == "claude":
        msg = obj.get("message")
        if obj.get("type") != "assistant" or obj.get("isSidechain") is True:
            return None
        if not isinstance(msg, dict):
            return ""
        if obj.get("isApiErrorMessage") is True or msg.get("model") == _SYNTHETIC:
            return None  # Claude Code's own line, not the model's answer
        texts = _texts(msg.get("content"), ("text",))
    elif fmt == "codex":
        item = obj.get("payload") if obj.get("type") in _CODEX_TYPES else obj
        if not isinstance(item, dict):
            return None
        if obj.get("type") == "event_msg":
            if item.get("type") != "agent_message":
                return None
            texts = _texts(item.get("message"), ())
        elif item.get("type") == "message" and item.get("role") == "assistant":
            texts = _texts(item.get("content"), ("output_text", "text"))
        else:
            return None
    else:
        return None
    return "\n".join(t.strip() for t in texts or () if t.strip())


def _last_answer(f: BinaryIO, fmt: str) -> str:
    """The last non-empty assistant text of an open session in ``fmt`` (:func:`_answer`),
    read from its tail (:data:`OUTCOME_SCAN_BYTES`, growing eightfold to
    :data:`SESSION_SCAN_BYTES`); "" when none."""
    try:
        size = os.fstat(f.fileno()).st_size
    except OSError:
        return ""
    window = OUTCOME_SCAN_BYTES
    while True:
        start = max(0, size - window)
        f.seek(start)
        if start:
            f.readline(SESSION_SCAN_BYTES)  # the rest of a line cut by the window
        last = ""
        for obj in _json_lines(f, size - start + 1):
            if obj is not _TORN:
                said = _answer(fmt, obj)
                if said:
                    last = said
        if last or not start or window >= SESSION_SCAN_BYTES:
            return last
        window *= 8


#: What :func:`_json_lines` yields for a line that is not JSON (a torn write).
_TORN: Any = object()


def _json_lines(f: BinaryIO, budget: int) -> Iterator[Any]:
    """The JSON value of each line of ``f``, reading at most ``budget`` bytes; :data:`_TORN`
    for a line that does not parse (or nests too deep: ``bench/fuzz_readers.py``)."""
    while budget > 0:
        blob = f.readline(budget)
        if not blob:
            return
        budget -= len(blob)
        try:
            yield json.loads(blob.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            yield _TORN


#: The agent each transcript format comes from, as an episode line names it (issue 16.4).
AGENT_NAMES = {"talos": "talos", "claude": "Claude Code", "codex": "Codex"}

#: Bytes of a session read for its origin: its format and first time stamp are on its first
#: lines (a Codex ``session_meta``, a Claude Code ``user`` line), not megabytes in.
ORIGIN_SCAN_BYTES = 1 << 20

#: A day ``YYYY-MM-DD`` in a file name (``2026-07-07T09.jsonl``,
#: ``rollout-2025-05-07T17-24-21-….jsonl``), not inside a longer run of digits.
_NAME_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


class Origin(NamedTuple):
    """Where an episode came from: ``agent`` (:data:`AGENT_NAMES`, "" when the format is not
    known) and ``day`` (``YYYY-MM-DD``, UTC; "" when no day can be told)."""

    agent: str
    day: str


def _day_of(stamp: Any) -> str:
    """The UTC day of a transcript's time stamp: an ISO 8601 string (``2026-11-30T09:12:33Z``,
    an offset converted to UTC, none taken as UTC) or Unix seconds (milliseconds above 1e11);
    "" when it is neither."""
    try:
        if isinstance(stamp, str) and len(stamp) <= 64:
            t = dt.datetime.fromisoformat(stamp.strip())
            if t.tzinfo is not None:
                t = t.astimezone(dt.UTC)
        elif isinstance(stamp, int | float) and not isinstance(stamp, bool):
            t = dt.datetime.fromtimestamp(stamp / 1000 if stamp > 1e11 else stamp, dt.UTC)
        else:
            return ""
    except (ValueError, OverflowError, OSError):
        return ""
    return t.date().isoformat() if 1970 <= t.year <= 9999 else ""


def _stamp(obj: Any) -> Any:
    """The time stamp of one transcript line: ``timestamp`` on the line (Claude Code, Codex
    envelopes and the old Codex header) or in a Codex ``session_meta`` payload."""
    if not isinstance(obj, dict):
        return None
    if "timestamp" in obj:
        return obj["timestamp"]
    payload = obj.get("payload")
    return payload.get("timestamp") if isinstance(payload, dict) else None


def _name_day(name: str) -> str:
    """The day a file name spells (:data:`_NAME_DAY`, a real date), or ""."""
    m = _NAME_DAY.search(name)
    if m is None:
        return ""
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3])).isoformat()
    except ValueError:
        return ""


def session_origin(path: str | os.PathLike[str]) -> Origin:
    """The agent and the day of a session file, for its episode line (issue 16.4).

    The agent is the transcript's format (:func:`detect`: ``talos``, ``Claude Code``,
    ``Codex``). The day is the session's own: the first time stamp in the file up to its first
    request (Claude Code and Codex stamp every line; talos's own format has none); else a date
    in the file's name (talos and Codex name sessions by their start); else none — the day a
    file was last written (its mtime: a copy, a checkout, a sync) is no date of the session,
    and a row shows only dates its data carries (SPEC §6.1 rule 5). All in UTC. Reads at
    most :data:`ORIGIN_SCAN_BYTES`, only a regular file inside its own folder
    (:func:`talos.fsutil.open_entry`); cached per path, size and mtime.

    Returns:
        The :class:`Origin`; ``Origin("", "")`` when the file is gone.
    """
    name = os.fspath(path)
    try:
        st = os.stat(name, follow_symlinks=False)
    except (OSError, ValueError):
        return Origin("", "")
    return _origin(name, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _origin(name: str, size: int, mtime_ns: int) -> Origin:
    """:func:`session_origin` of a file of this ``size`` and ``mtime_ns``."""
    fmt, stamp = "", None
    try:
        with fsutil.open_entry(name, os.path.realpath(os.path.dirname(name) or ".")) as f:
            for obj in _json_lines(f, ORIGIN_SCAN_BYTES):
                if fmt and stamp is not None:
                    break
                if obj is _TORN:
                    continue
                fmt = fmt or detect(obj) or ""
                if stamp is None and _day_of(_stamp(obj)):
                    stamp = _stamp(obj)
                if fmt and FORMATS[fmt](obj):
                    break  # the first request: a later stamp is not the session's start
    except OSError:  # gone, unreadable, or refused (fsutil.RefusedEntry): the name tells
        pass
    day = _day_of(stamp) if stamp is not None else ""
    if not day:
        day = _name_day(os.path.basename(name))
    return Origin(AGENT_NAMES.get(fmt, ""), day)


def sessions_root(sessions_dir: Path) -> tuple[Path, bool]:
    """Split a sessions path into ``(folder, recursive)``: ``DIR/**`` reads DIR recursively."""
    if sessions_dir.name == RECURSIVE_MARK:
        return sessions_dir.parent, True
    return sessions_dir, False


#: The sessions setting: one path, or a list of them (issue 16.4).
Sessions = Path | Sequence[Path]


class Folder(NamedTuple):
    """One sessions folder as listed: ``root`` (as configured, ``/**`` split off),
    ``recursive``, ``real`` (its resolved path, which tells two spellings apart) and
    ``prefix`` of its files' sort keys: "" when it is the only folder, else its place in
    the list as three digits and ``/`` (``000/``, ``001/``…; at most
    :data:`talos.home.MAX_SESSIONS_DIRS` folders), so the folders load one after
    the other in the list's order and no two folders' keys can be equal. One folder's keys
    are its relative paths, exactly as before lists (issue 16.4)."""

    root: Path
    recursive: bool
    real: str
    prefix: str


def session_folders(sessions: Sessions) -> list[Folder]:
    """The sessions folders in load order, a folder given twice (two spellings, a link and
    its target, with the same ``/**``) kept once, at its first place (issue 16.4)."""
    entries = [sessions] if isinstance(sessions, Path) else list(sessions)
    out: list[Folder] = []
    seen: set[tuple[str, bool]] = set()
    for entry in entries:
        root, recursive = sessions_root(entry)
        real = os.path.realpath(root)
        if (real, recursive) in seen:
            continue
        seen.add((real, recursive))
        out.append(Folder(root, recursive, real, f"{len(out):03d}/"))
    if len(out) == 1:
        out[0] = out[0]._replace(prefix="")
    return out


def folder_of(key: str, folders: Sequence[Folder]) -> Folder:
    """The folder (of :func:`session_folders`) a session's sort key belongs to."""
    return folders[int(key[:3])] if len(folders) > 1 else folders[0]


def session_files(sessions_dir: Sessions) -> list[Path]:
    """The ``*.jsonl`` files of ``sessions_dir``, sorted by path relative to the folder (for
    flat folders: by name, which is time order); [] when missing. ``DIR/**`` also reads every
    subfolder of DIR. Several folders: one after the other, in the list's order."""
    return [Path(full) for _key, full in session_names(sessions_dir)]


def session_names(sessions_dir: Sessions, ordered: bool = True) -> list[tuple[str, str]]:
    """:func:`session_files` as ``(sort key, full path)`` strings, in the same order (in
    the folders' order with ``ordered=False``: sorting 30,000 names that share long prefixes
    takes 10 ms, and the index keeps each file's sort key).

    The sort key is the path relative to the folder; with several folders it starts with
    the folder's place in the list (:class:`Folder`). A file reached through two
    folders (``DIR`` and ``DIR/**``, a folder and a link into it) is listed once, from the
    first (issue 16.4).

    A flat folder is listed with ``os.scandir`` (the file type comes with the listing) and
    paths are joined as strings: at 30,000 sessions pathlib's glob, a stat per file and a
    sort key built per path took about a second of every refresh that found the folder
    changed (SPEC §11)."""
    folders = session_folders(sessions_dir)
    if len(folders) == 1:
        return _folder_names(folders[0].root, folders[0].recursive, ordered)
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for folder in folders:
        names = _folder_names(folder.root, folder.recursive, ordered)
        if not any(_overlap(folder, other) for other in folders if other is not folder):
            out += [(folder.prefix + rel, full) for rel, full in names]  # the common case
            continue
        base = folder.real if folder.real.endswith(os.sep) else folder.real + os.sep
        for rel, full in names:
            real = base + rel
            if real not in seen:
                seen.add(real)
                out.append((folder.prefix + rel, full))
    return out


def _overlap(a: Folder, b: Folder) -> bool:
    """Whether one file can be listed from both folders: the same folder, or one inside the
    other that is read with ``/**``. (Only then are the files told apart by their real path,
    a set lookup per file: 14 ms a refresh at 3,000 sessions.)"""
    if a.real == b.real:
        return True
    inside = os.path.commonpath([a.real, b.real])
    return (inside == a.real and a.recursive) or (inside == b.real and b.recursive)


def _folder_names(root: Path, recursive: bool, ordered: bool) -> list[tuple[str, str]]:
    """:func:`session_names` of one folder: ``(path relative to it, full path)``."""
    try:
        if recursive:
            found = [(p.relative_to(root).as_posix(), str(p)) for p in root.rglob("*.jsonl")]
            return sorted(
                (rel, full)
                for rel, full in found
                if _readable(root, rel) and not _refused(root, full) and os.path.isfile(full)
            )
        base = str(root)
        with os.scandir(base) as it:
            names = [
                e.name
                for e in it
                if _is_jsonl(e.name)
                and (e.is_file(follow_symlinks=False) or _linked_file(root, e.path, e))
            ]
    except OSError:
        return []
    names = [n for n in names if n.isascii() or _readable(root, n)]
    if ordered:
        names.sort()
    prefix = "" if base == "." else base if base.endswith(os.sep) else base + os.sep
    return [(name, prefix + name) for name in names]  # as str(Path(base) / name) spells it


_WARNED: set[tuple[str, str]] = set()


def _linked_file(root: Path, path: str, entry: os.DirEntry[str]) -> bool:
    """Whether a listed entry that is not a plain regular file is a session to read: a link
    to a regular file inside the folder. Anything else that would be read as a session (a
    link out of the folder, a FIFO, a device) is refused with one warning (issue 13.5)."""
    if entry.is_dir():  # a folder named like a session (or a link to one): not a file
        return False
    return not _refused(root, path) and entry.is_file()


def _refused(root: Path, path: str) -> bool:
    """Whether the session file ``path`` of the folder ``root`` is refused
    (:func:`talos.fsutil.entry_refusal`); warned once per process and reason."""
    try:
        lst = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISDIR(lst.st_mode) or (stat.S_ISREG(lst.st_mode) and not fsutil.kernel_fs(lst)):
        return False
    refusal = fsutil.entry_refusal(path, lst, os.path.realpath(root))
    if refusal is None:
        return False
    key = (path, refusal[1])
    if key not in _WARNED and warn(  # episodes are global's (SPEC §7.3)
        f"{path}: not read: {refusal[0]} ({refusal[1]}); see talos scan", scopes={"global"}
    ):
        _WARNED.add(key)
    return True


def refused_sessions(sessions_dir: Sessions) -> list[tuple[str, str, str]]:
    """The files of the sessions folders that talos refuses to read, as ``(path, reason,
    evidence)`` sorted by path: links that lead outside their folder, ``.jsonl`` entries that
    are not regular files (issue 13.5; ``talos scan`` lists them). A file reached through two
    folders is listed once."""
    out: set[tuple[str, str, str]] = set()
    for folder in session_folders(sessions_dir):
        out.update(_refused_in(folder.root, folder.recursive))
    return sorted(out)


def _refused_in(root: Path, recursive: bool) -> list[tuple[str, str, str]]:
    """:func:`refused_sessions` of one folder."""
    real = os.path.realpath(root)
    out: list[tuple[str, str, str]] = []
    try:
        if recursive:
            paths = [str(p) for p in root.rglob("*.jsonl")]
        else:
            with os.scandir(root) as it:
                paths = [e.path for e in it if _is_jsonl(e.name)]
    except OSError:
        return []
    for path in paths:
        try:
            lst = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(lst.st_mode):
            continue
        refusal = fsutil.entry_refusal(path, lst, real)
        if refusal is not None:
            out.append((path, *refusal))
    return out


def _readable(root: Path, name: str) -> bool:
    """Whether a file name is text (UTF-8); a name of other bytes is skipped on every route
    with a warning that names it: the index stores names as text, and the file is left as
    it is (tests/test_hostile_incremental.py)."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        warn(  # episodes are global's: a request without global is not told (SPEC §7.3)
            f"{root}: session file {os.fsencode(name)!r} has a name that is not UTF-8; skipped",
            scopes={"global"},
        )
        return False


def _is_jsonl(name: str) -> bool:
    """Whether ``name`` matches ``*.jsonl`` as pathlib's glob does (case as the OS folds)."""
    return (_FOLD(name) if _FOLD else name).endswith(".jsonl")


_FOLD = os.path.normcase if os.name == "nt" else None


def load_episodes(sessions_dir: Sessions, start: int = 0) -> list[Node]:
    """Read each session file's opening request into an episode node (SPEC §3.3).

    Args:
        sessions_dir: a sessions folder or a list of them (issue 16.4).

    Returns:
        Episode nodes in load order (:func:`session_files`: folder by folder, in the list's
        order, each sorted by path); text = first 80 characters of the request.
    """
    nodes: list[Node] = []
    folders = session_folders(sessions_dir)
    for key, full in session_names(sessions_dir):
        node = episode_node(Path(full), start + len(nodes), folder_of(key, folders).root)
        if node is not None:
            nodes.append(node)
    return nodes


def episode_node(path: Path, order: int = 0, folder: Path | str | None = None) -> Node | None:
    """The episode of one session file, or ``None`` when it has no request with keywords.

    The text is the first 80 characters of the request, secrets masked before the cut
    (SPEC §8.3); the keywords are the text's (the reference's, which merge episodes, §5.1).
    ``task`` is the real task's first 80 characters when it is not the request, ``outcome``
    the first :data:`OUTCOME_CHARS` characters of the last answer and one more when it goes
    on (the block marks the cut), both masked alike (:func:`read_session`, SPEC §3.3). Used by
    :func:`load_episodes` and by the persistent index, so both paths read a file the same
    way; ``folder``: the sessions folder the file must lie in (default: its own).
    """
    summary = read_session(path, folder)
    if not summary.request:
        return None
    text = _stored(summary.request, EPISODE_CHARS)
    kw = matching_keywords(text)
    if not kw:
        return None
    task = _stored(summary.task, EPISODE_CHARS)
    return Node(
        kind="episode",
        text=text,
        keywords=kw,
        order=order,
        path=str(path),
        task="" if task == text else task,
        outcome=_stored(summary.outcome, OUTCOME_CHARS + 1),
    )


def _stored(said: str, limit: int) -> str:
    """A session's text as an episode keeps it: lone surrogates replaced (``"\\ud800"`` in
    JSON: not printable), secrets masked before the cut (SPEC §8.3), ``limit`` characters."""
    return mask_secrets(_SURROGATE.sub("\ufffd", said))[:limit] if said else ""
