"""``talos hook install|uninstall AGENT``: talos's entry in an agent's settings (issue 16.2).

================  ======================================  =================================
agent             ``--user`` (default)                    ``--project`` (the git root)
================  ======================================  =================================
claude-code       ``~/.claude/settings.json``             ``.claude/settings.json``
                  (``$CLAUDE_CONFIG_DIR`` if set)
codex             ``~/.codex/hooks.json`` and the         ``.codex/hooks.json`` and
                  ``[features] hooks = true`` flag in     ``.codex/config.toml``
                  ``config.toml`` (``$CODEX_HOME``)
gemini            ``~/.gemini/settings.json``             ``.gemini/settings.json``
================  ======================================  =================================

Rules:

* **Merge, never replace.** talos adds one matcher group per event (``UserPromptSubmit`` /
  ``BeforeAgent`` and ``SessionStart``) holding one command handler, ``talos hook AGENT``; no
  other key, group or handler is touched. A talos handler is recognised by its command.
* **No one's home in a project's settings.** They are shared through the repository: the
  command is ``talos hook AGENT`` with no ``--home`` (:data:`PROJECT_HOME`, AGENT_HOOKS.md).
* **Idempotent.** Installing twice changes nothing the second time; older talos entries
  (another path, another timeout, a ``--home``) are updated in place — every one of the
  event, wherever it sits, so no old command (one person's home in a project's settings)
  survives beside an updated one; their groups, matchers and other keys stay as they are.
* **Exact removal.** ``uninstall`` removes the talos handlers, then the groups and event
  lists that become empty *because of that removal* — nothing else. The Codex flag line
  carries a comment naming talos and is removed with it (a flag the person wrote stays).
* **Safe writes.** A file that is not valid JSON (TOML) is refused with its line; the file
  as it was before talos's change is kept beside it as ``NAME.talos-backup``; the new text is
  written atomically (temp file, fsync, rename) to the file a symlink points at. Key order
  and indentation are kept; JSON has no comments, so none can be lost.

The handler's ``timeout`` (the agent's, in its unit: seconds for Claude Code and Codex,
milliseconds for Gemini CLI) is 10 s: the hook stops itself after ``[hooks] timeout``
(2.5 s, at most 9 s whatever talos.toml says), so the agent's limit is only a backstop.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from talos.errors import InputError
from talos.fsutil import atomic_write_bytes
from talos.hooks.scope import git_root
from talos.hooks.state import HANDLER_TIMEOUT_S

__all__ = [
    "AGENT_FILES",
    "PROJECT_HOME",
    "Change",
    "Plan",
    "apply",
    "hook_command",
    "is_talos_handler",
    "plan",
]

#: Seconds the agent gives the hook before it stops it (a backstop: the hook's own deadline
#: is ``[hooks] timeout``, which never reaches it: :data:`talos.hooks.state.RANGES`).
AGENT_TIMEOUT_S = HANDLER_TIMEOUT_S
#: Why a project's settings never name a home. They are committed and shared by several
#: people: an absolute ``--home /home/me/notes`` there is one person's path on everyone's
#: machine (a newcomer's report). Each agent offers a different project variable, or none
#: (Claude Code ``$CLAUDE_PROJECT_DIR``, not always set; Gemini CLI ``$GEMINI_PROJECT_DIR``;
#: Codex none, only ``cwd`` in the event), so the command names no home at all and the hook
#: finds each person's as talos does (``$TALOS_HOME``, else the platform's data dir).
PROJECT_HOME = (
    "--home with --project would write your own path into settings the repository shares; "
    "leave --home out (each person's hook finds their home: $TALOS_HOME, else the platform's "
    "data dir), or install with --user"
)
#: Comment that marks the lines talos wrote in a TOML file.
MARK = "# added by talos hook install"
BACKUP_SUFFIX = ".talos-backup"

#: The events each agent's entry covers.
EVENTS = {
    "claude-code": ("UserPromptSubmit", "SessionStart"),
    "codex": ("UserPromptSubmit", "SessionStart"),
    "gemini": ("BeforeAgent", "SessionStart"),
}

#: (user folder, project folder, settings file name) per agent.
AGENT_FILES = {
    "claude-code": ("~/.claude", ".claude", "settings.json"),
    "codex": ("~/.codex", ".codex", "hooks.json"),
    "gemini": ("~/.gemini", ".gemini", "settings.json"),
}

_OURS = re.compile(r"""(?:^|[\s/\\"'])talos(?:\.exe)?["']?\s+hook\s+(claude-code|codex|gemini)\b""")


def is_talos_handler(handler: Any) -> bool:
    """Whether a hook handler (one object of a group's ``hooks`` list) is talos's."""
    return (
        isinstance(handler, dict)
        and isinstance(handler.get("command"), str)
        and _OURS.search(handler["command"]) is not None
    )


def _launcher(project: bool) -> list[str]:
    """How the agent starts talos. A project's settings are shared (other people, other
    machines): ``talos``, found on PATH. The user's: this talos's own interpreter by absolute
    path, ``-I -m talos`` — an agent started from a desktop launcher may not have the shell's
    PATH; ``-I`` keeps the agent's folder off ``sys.path`` (a ``talos/`` folder there would
    shadow the package) and skips the console script's ``import re`` (~4 ms of every prompt,
    bench/hook_latency.py)."""
    if project or not sys.executable:
        return ["talos"]
    return [sys.executable, "-I", "-m", "talos"]


def hook_command(agent: str, project: bool, home: str | None = None) -> str:
    """The command line the agent runs: ``LAUNCHER hook AGENT [--home HOME]``."""
    parts = [*_launcher(project), "hook", agent]
    if home:
        parts += ["--home", str(Path(home).expanduser().absolute())]
    return " ".join(shlex.quote(p) for p in parts)


def _handler(agent: str, command: str) -> dict[str, Any]:
    if agent == "gemini":  # Gemini CLI: timeout in milliseconds; a name shown in /hooks
        return {
            "name": "talos",
            "type": "command",
            "command": command,
            "timeout": AGENT_TIMEOUT_S * 1000,
            "description": "talos: memory recalled for this prompt",
        }
    return {"type": "command", "command": command, "timeout": AGENT_TIMEOUT_S}


@dataclass(slots=True)
class Change:
    """One file as it is and as it will be (``None``: absent)."""

    path: Path
    before: str | None
    after: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether applying it writes anything."""
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the change ("" when nothing changes)."""
        if not self.changed:
            return ""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=str(self.path) if self.before is not None else "/dev/null",
            tofile=str(self.path) if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(slots=True)
class Plan:
    """What ``install``/``uninstall`` would do: the changes and notes for the person."""

    action: str
    agent: str
    changes: list[Change]
    notes: list[str] = field(default_factory=list)


# -- JSON settings ------------------------------------------------------------------------


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as e:
        raise InputError(
            f"{path}: not UTF-8 text (byte {e.start}); talos edits it only as UTF-8"
        ) from None
    except IsADirectoryError:
        raise InputError(f"{path} is a folder, expected a settings file") from None


def _load_json(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(
            f"{path}:{e.lineno}:{e.colno}: not valid JSON ({e.msg}); talos edits only valid "
            "JSON — fix that line (comments are not JSON) or move the file away"
        ) from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object at the top, not {type(data).__name__}")
    return data


def _indent(text: str | None) -> str | int:
    """The indentation of ``text``'s first indented line (2 spaces when there is none)."""
    m = re.search(r"\n([ \t]+)\S", text or "")
    if not m:
        return 2
    ws = m.group(1)
    return ws if "\t" in ws else len(ws)


def _dump(data: dict[str, Any], like: str | None) -> str:
    return json.dumps(data, indent=_indent(like), ensure_ascii=False) + "\n"


def _hooks_table(path: Path, data: dict[str, Any], create: bool) -> dict[str, Any] | None:
    hooks = data.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise InputError(f'{path}: "hooks" must be a JSON object; talos leaves it alone')
    return hooks


def _groups(path: Path, hooks: dict[str, Any], event: str) -> list[Any]:
    groups = hooks[event]
    if not isinstance(groups, list):
        raise InputError(f'{path}: "hooks.{event}" must be a list; talos leaves it alone')
    return groups


def _install_json(path: Path, text: str | None, agent: str, command: str) -> str:
    data = _load_json(path, text)
    hooks = _hooks_table(path, data, create=True)
    assert hooks is not None
    wanted = _handler(agent, command)
    for event in EVENTS[agent]:
        groups = _groups(path, hooks, event) if event in hooks else hooks.setdefault(event, [])
        found = False
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                continue
            for i, h in enumerate(handlers):
                if is_talos_handler(h):  # every one: an old command must not survive anywhere
                    handlers[i] = {**h, **wanted}  # keep keys a person added
                    found = True
        if not found:
            groups.append({"hooks": [wanted]})
    out = _dump(data, text)
    if text is not None and json.loads(text) == json.loads(out):
        return text  # nothing changed: keep the file byte for byte
    return out


def _uninstall_json(path: Path, text: str | None) -> str | None:
    data = _load_json(path, text)
    hooks = _hooks_table(path, data, create=False)
    if not hooks:
        return text
    removed = False
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list) and any(is_talos_handler(h) for h in handlers):
                removed = True
                group["hooks"] = [h for h in handlers if not is_talos_handler(h)]
                if not group["hooks"]:
                    continue  # the group held only talos: it goes with it
            kept.append(group)
        if len(kept) != len(groups):
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not removed:
        return text
    if not hooks:
        del data["hooks"]
    return _dump(data, text)


# -- the Codex feature flag ---------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")
_FLAG = re.compile(r"^\s*(?:features\.)?(hooks|codex_hooks)\s*=\s*(true|false)\b")


def _check_toml(path: Path, text: str) -> None:
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: invalid TOML ({e}); talos edits only valid TOML") from None


def _install_flag(path: Path, text: str | None, notes: list[str]) -> str | None:
    """``config.toml`` with ``[features] hooks = true``, unless a flag is already set."""
    src = text or ""
    if src:
        _check_toml(path, src)
    lines = src.splitlines(keepends=True)
    table = ""
    header_at = None
    for no, line in enumerate(lines, 1):
        m = _HEADER.match(line)
        if m:
            table = m.group(1).strip()
            if table == "features":
                header_at = no
            continue
        f = _FLAG.match(line)
        if f and (table == "features" or (not table and line.lstrip().startswith("features."))):
            if f.group(2) == "false":
                notes.append(
                    f"{path}:{no}: Codex hooks are turned off ({f.group(1)} = false); talos "
                    "leaves your setting alone — set it to true for the hook to run"
                )
            return text
    flag = f"hooks = true  {MARK}\n"
    if header_at is not None:
        lines.insert(header_at, flag)
    else:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        if lines and lines[-1].strip():
            lines.append("\n")
        lines += [f"[features]  {MARK}\n", flag]
    out = "".join(lines)
    _check_toml(path, out)
    return out


def _uninstall_flag(path: Path, text: str | None) -> str | None:
    """``config.toml`` without the lines talos wrote (a ``[features]`` header talos added
    goes only when no other key is left under it)."""
    if not text or MARK not in text:
        return text
    lines = [
        ln
        for ln in text.splitlines(keepends=True)
        if not (ln.rstrip().endswith(MARK) and _FLAG.match(ln))
    ]
    out: list[str] = []
    for i, line in enumerate(lines):
        if line.rstrip().endswith(MARK) and _HEADER.match(line):
            rest = []
            for nxt in lines[i + 1 :]:
                if _HEADER.match(nxt):
                    break
                rest.append(nxt)
            if not any(r.strip() and not r.lstrip().startswith("#") for r in rest):
                while out and not out[-1].strip():
                    out.pop()  # the blank line talos put before its table
                continue
            line = line.replace(MARK, "").rstrip() + "\n"
        out.append(line)
    return "".join(out)


# -- plans --------------------------------------------------------------------------------


def settings_dir(agent: str, project: bool, cwd: str | None = None) -> Path:
    """The agent's settings folder for ``--project`` (under the git root of ``cwd``, else
    ``cwd``) or ``--user`` (``$CLAUDE_CONFIG_DIR``/``$CODEX_HOME`` when set)."""
    user, proj, _name = AGENT_FILES[agent]
    if project:
        here = os.path.abspath(cwd or os.getcwd())
        return Path(git_root(here) or here) / proj
    env = {"claude-code": "CLAUDE_CONFIG_DIR", "codex": "CODEX_HOME"}.get(agent)
    if env and os.environ.get(env):
        return Path(os.environ[env]).expanduser()
    return Path(user).expanduser()


def _target(path: Path) -> Path:
    """The file to write: where a symlink points (a dotfiles repo keeps its link)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def plan(
    action: str,
    agent: str,
    project: bool = False,
    home: str | None = None,
    cwd: str | None = None,
) -> Plan:
    """What ``talos hook ACTION AGENT`` would change, without writing anything.

    Args:
        action: ``install`` or ``uninstall``. agent: a key of :data:`EVENTS`. project: the
            project's settings instead of the user's. home: a talos home for ``--home`` in
            the command (``None``: the hook finds it as talos does); never with ``project``.
            cwd: the folder whose git root is the project (default: the current folder).

    Raises:
        InputError: a settings file is not valid JSON/TOML or not shaped as the agent
            documents (the message names the file and line); ``home`` with ``project``
            (:data:`PROJECT_HOME`).
    """
    if action == "install" and project and home:
        raise InputError(PROJECT_HOME)
    folder = settings_dir(agent, project, cwd)
    path = _target(folder / AGENT_FILES[agent][2])
    text = _read(path)
    changes: list[Change] = []
    notes: list[str] = []
    if action == "install":
        command = hook_command(agent, project, home)
        changes.append(Change(path, text, _install_json(path, text, agent, command)))
    else:
        changes.append(Change(path, text, _uninstall_json(path, text)))
    if action == "uninstall":
        changes = [_removed_if_ours(c) for c in changes]
    if agent == "codex":
        toml_path = _target(folder / "config.toml")
        toml_text = _read(toml_path)
        after = (
            _install_flag(toml_path, toml_text, notes)
            if action == "install"
            else _uninstall_flag(toml_path, toml_text)
        )
        changes.append(Change(toml_path, toml_text, after))
    return Plan(action, agent, changes, notes)


def _removed_if_ours(c: Change) -> Change:
    """``c`` as uninstall applies it: a JSON file talos created (its backup is empty: there was
    no file before) that would be left as ``{}`` is removed, backup and all. Decided in the
    plan, so ``--dry-run`` shows the removal it does (it showed ``+{}``; newcomer's report)."""
    if c.after is None or c.after.strip() not in ("{}", ""):
        return c
    try:
        created_by_talos = c.path.with_name(c.path.name + BACKUP_SUFFIX).stat().st_size == 0
    except OSError:
        return c
    return Change(c.path, c.before, None, c.notes) if created_by_talos else c


def apply(p: Plan) -> list[Path]:
    """Write a plan's changes; returns the files written. Before each write the file as it
    was is kept as ``NAME.talos-backup`` (an empty backup: there was no file). A change to
    ``None`` (a file talos created that uninstall empties) removes the file and its backup.

    Raises:
        OSError: a file cannot be written (the others written before it stay written).
    """
    written = []
    for c in p.changes:
        if not c.changed:
            continue
        backup = c.path.with_name(c.path.name + BACKUP_SUFFIX)
        if c.after is None:  # a file talos created, left empty by uninstall (_removed_if_ours)
            c.path.unlink(missing_ok=True)
            backup.unlink(missing_ok=True)
        else:
            atomic_write_bytes(backup, (c.before or "").encode("utf-8"))
            atomic_write_bytes(c.path, c.after.encode("utf-8"))
        written.append(c.path)
    return written
