"""What each agent sends a hook and what it reads back (design §9.5; sources in AGENT_HOOKS.md).

Standard library only: the hook client imports this before it knows whether the resident
server can answer (issue 16.3).

=============  ===========================  ========================  ===========================
agent          events talos answers         context it reads          size limit
=============  ===========================  ========================  ===========================
claude-code    UserPromptSubmit,            ``hookSpecificOutput.     10,000 characters (JS
               SessionStart                 additionalContext``       string length: UTF-16
                                                                      code units); more is saved
                                                                      to a file, the model gets
                                                                      a ~2 KB preview
codex          UserPromptSubmit,            the same JSON             2,500 approximate tokens,
               SessionStart                                           ``ceil(bytes / 4)``: 10,000
                                                                      UTF-8 bytes; more is saved
                                                                      to a file with a preview
gemini         BeforeAgent, SessionStart    the same JSON; JSON       none documented: talos
                                            only on stdout (plain     keeps to 10,000 characters
                                            text becomes a message
                                            to the person)
=============  ===========================  ========================  ===========================

All three take the JSON form ``{"hookSpecificOutput": {"hookEventName": EVENT,
"additionalContext": TEXT}}`` on exit 0, so talos always writes that form (one line, ASCII
escapes: a terminal-control byte in a memory can never reach the agent raw); nothing relevant
means no output at all, not an empty object.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["AGENTS", "Agent", "Event", "clean", "measure", "parse_event", "render"]


@dataclass(frozen=True, slots=True)
class Agent:
    """One agent's hook contract.

    Attributes:
        name: the argument of ``talos hook NAME``.
        prompt_event: the event that carries the person's prompt.
        session_event: the event fired when a session starts (``None``: not answered).
        limit: the most context the agent delivers whole, in ``unit``.
        unit: how the agent measures it: ``utf16`` (JavaScript ``length``), ``bytes``
            (UTF-8), ``chars`` (code points).
    """

    name: str
    prompt_event: str
    session_event: str | None
    limit: int
    unit: str


#: The agents ``talos hook`` answers, by the name on its command line.
AGENTS: dict[str, Agent] = {
    "claude-code": Agent("claude-code", "UserPromptSubmit", "SessionStart", 10_000, "utf16"),
    "codex": Agent("codex", "UserPromptSubmit", "SessionStart", 10_000, "bytes"),
    "gemini": Agent("gemini", "BeforeAgent", "SessionStart", 10_000, "chars"),
}


@dataclass(frozen=True, slots=True)
class Event:
    """A hook event as talos uses it.

    Attributes:
        name: ``hook_event_name`` as the agent sent it.
        kind: ``prompt`` (recall for the prompt), ``session`` (the project's block) or ``""``
            (an event talos does not answer).
        prompt: the person's prompt ("" unless ``kind == "prompt"``).
        cwd: the folder the agent runs in ("" when the event has none).
        source: why a session started (``startup``, ``resume``, ``clear``, ``compact``; "").
    """

    name: str
    kind: str
    prompt: str = ""
    cwd: str = ""
    source: str = ""


def _text(event: dict[str, Any], key: str) -> str:
    value = event.get(key, "")
    if not isinstance(value, str):
        raise ValueError(f"field {key!r} must be a string, not {type(value).__name__}")
    return value


def parse_event(agent: Agent, event: Any) -> Event:
    """The :class:`Event` in an agent's hook input (the parsed stdin JSON).

    Raises:
        ValueError: ``event`` is not a JSON object, has no ``hook_event_name``, or a field
            talos reads (``prompt``, ``cwd``, ``source``) is not a string.
    """
    if not isinstance(event, dict):
        raise ValueError(f"hook input must be a JSON object, not {type(event).__name__}")
    name = _text(event, "hook_event_name")
    if not name:
        raise ValueError("hook input has no hook_event_name")
    if name == agent.prompt_event:
        return Event(name, "prompt", prompt=_text(event, "prompt"), cwd=_text(event, "cwd"))
    if name == agent.session_event:
        return Event(name, "session", cwd=_text(event, "cwd"), source=_text(event, "source"))
    return Event(name, "")


def measure(text: str, unit: str) -> int:
    """Size of ``text`` the way an agent counts it (``utf16``, ``bytes`` or ``chars``)."""
    if unit == "utf16":
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    if unit == "bytes":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text)


#: Characters that drive a terminal (C0 controls but tab and newline, DEL, C1 controls):
#: Codex prints hook context in its interface, so a memory holding ESC must not reach it raw.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """``text`` with terminal control characters replaced by U+FFFD (stored text is data: it
    never moves a cursor). Applied before the budget is measured."""
    return _CONTROL.sub("\ufffd", text)


def render(event: Event, context: str) -> str:
    """What the hook writes on stdout for ``context``: "" when there is none, else the JSON
    object with ``hookSpecificOutput.additionalContext`` (passed through :func:`clean`) and a
    newline."""
    if not context:
        return ""
    context = clean(context)
    out = {"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": context}}
    return json.dumps(out, ensure_ascii=True) + "\n"
