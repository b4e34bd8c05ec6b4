"""``talos hook``: automatic recall in Claude Code, Codex CLI and Gemini CLI (design §9.5).

``talos hook AGENT`` is normally reached before Typer loads (:mod:`talos.entry`); this command
gives the same behaviour to ``python -m talos.cli``-style callers, plus ``install``,
``uninstall`` (:mod:`talos.hooks.install`), ``status`` and ``stop`` (the resident server).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from talos.cli.common import HomeOpt, JsonOpt, emit, err, handle_errors, out
from talos.errors import InputError

__all__ = ["hook"]

_AGENTS = ("claude-code", "codex", "gemini")
_ACTIONS = ("install", "uninstall", "status", "stop")


@handle_errors("hook")
def hook(
    ctx: typer.Context,
    action: Annotated[
        str,
        typer.Argument(
            metavar="ACTION",
            help="claude-code, codex or gemini (answer that agent's hook event on stdin), "
            "install or uninstall (edit an agent's settings), status or stop (the resident "
            "server).",
            show_default=False,
        ),
    ],
    agent: Annotated[
        str | None,
        typer.Argument(
            metavar="AGENT", help="For install/uninstall: claude-code, codex or gemini."
        ),
    ] = None,
    project: Annotated[
        bool,
        typer.Option(
            "--project",
            help="The project's settings (under the git root), shared with everyone who uses "
            "the repository: the command is plain 'talos hook AGENT', with no --home, so each "
            "person's hook finds their own home ($TALOS_HOME, else the platform's data dir).",
        ),
    ] = False,
    user: Annotated[
        bool, typer.Option("--user", help="Your own settings, for every project (the default).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the diff of the settings; write nothing.")
    ] = False,
    transcripts: Annotated[
        bool,
        typer.Option(
            "--transcripts/--no-transcripts",
            help="install: also add the agent's own transcript folder (~/.claude/projects, "
            "~/.codex/sessions) to sessions_dir in talos.toml, so past sessions are recalled.",
        ),
    ] = True,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Give an agent your memory with every prompt, through its hooks.

    talos hook install AGENT adds one entry to the agent's settings (Claude Code:
    ~/.claude/settings.json; Codex: ~/.codex/hooks.json and the hooks flag in config.toml;
    Gemini: ~/.gemini/settings.json; --project: the repository's, which name no home: --home
    is refused there, $TALOS_HOME is left out). From then on the agent runs
    talos hook AGENT on each prompt and when a session starts: talos recalls from global and
    the project's scope (project:<git root folder>, or the hooks.scopes table of talos.toml) and
    the agent receives the block as data, within its size limit. Nothing relevant: nothing is
    added. A failure never blocks the agent: the hook exits 0 and logs a line (talos doctor).

    Install also finds the agent's own transcripts (Claude Code: ~/.claude/projects or
    $CLAUDE_CONFIG_DIR/projects; Codex: ~/.codex/sessions or $CODEX_HOME/sessions) and adds the
    folder to sessions_dir in talos.toml (your lines kept; remove the entry to stop), so your
    past sessions are recalled in their project; --no-transcripts leaves talos.toml alone.

    Install is idempotent, keeps NAME.talos-backup, never touches other hooks; uninstall
    removes exactly what install added. A resident server (one per home, owner-only Unix
    socket, exits after 10 idle minutes) keeps each hook to a few milliseconds; status and
    stop show and end it.

    Examples:
      talos hook install claude-code
      talos hook install codex --dry-run
      talos hook uninstall gemini --project
      talos hook claude-code < event.json
    """
    if action in _AGENTS:
        from talos.hooks.client import main as run_hook

        raise typer.Exit(run_hook([action, *(["--home", str(home)] if home else [])]))
    if action not in _ACTIONS:
        choices = ", ".join((*_AGENTS, *_ACTIONS))
        raise InputError(f"unknown action {action!r}; choose one of: {choices}")
    if action in ("status", "stop"):
        _server(action, home, as_json)
        return
    if agent not in _AGENTS:
        what = f"unknown agent {agent!r}" if agent else "which agent?"
        raise InputError(f"{what} — talos hook {action} claude-code|codex|gemini")
    if project and user:
        raise InputError("choose --project or --user, not both")
    from talos.hooks.install import apply, plan

    named = home
    if project and _from_environment(ctx, "home"):
        # $TALOS_HOME is this person's: a project's settings are shared (PROJECT_HOME)
        named = None
    p = plan(action, agent, project=project, home=str(named) if named else None)
    if named is None and home is not None and action == "install":
        p.notes.append(
            f"$TALOS_HOME ({home}) is not written into the project's settings: the hook finds "
            "each person's home as talos does ($TALOS_HOME, else the platform's data dir); "
            "start the agent with it set"
        )
    written = [] if dry_run else apply(p)
    found: dict[str, object] | None = None
    if action == "install" and transcripts and as_json:
        found = _transcripts(home, agent, dry_run, as_json)
    if as_json:
        emit(
            "hook",
            {
                "action": action,
                "agent": agent,
                "dry_run": dry_run,
                "files": [
                    {"path": str(c.path), "changed": c.changed, "diff": c.diff()} for c in p.changes
                ],
                "written": [str(w) for w in written],
                "notes": p.notes,
                **({"transcripts": found} if found is not None else {}),
            },
        )
        return
    for c in p.changes:
        if dry_run and c.changed:
            out.out(c.diff(), end="")
        elif c.changed:
            if c.after is None:
                err.print(f"removed {c.path} (talos had created it; nothing else was in it)")
            else:
                err.print(f"updated {c.path} (before: {c.path.name}.talos-backup)")
        else:
            state = "already has talos's entry" if action == "install" else "has no talos entry"
            err.print(f"{c.path}: {state}")
    for note in [*p.notes, *_advice(action, agent)]:
        err.print(note)
    if action == "install" and transcripts:
        _transcripts(home, agent, dry_run, as_json)
    if dry_run:
        err.print("dry run: nothing written")


def _transcripts(home: Path | None, agent: str, dry_run: bool, as_json: bool) -> dict[str, object]:
    """Add the agent's transcript folder to the home's sessions_dir
    (:func:`talos.cli.transcripts.offer_transcripts`)."""
    from talos.cli.common import checked_paths
    from talos.cli.transcripts import offer_transcripts

    cmd = f"talos hook install {agent}"
    return offer_transcripts(checked_paths(home), [agent], cmd, dry_run, as_json)


def _from_environment(ctx: typer.Context, name: str) -> bool:
    """Whether option ``name`` of the running command got its value from its environment
    variable (``--home`` from ``$TALOS_HOME``), not from the command line."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "ENVIRONMENT"


def _advice(action: str, agent: str) -> list[str]:
    if action != "install":
        return []
    return {
        "claude-code": ["Claude Code reads hooks at start: restart it (or review them in /hooks)."],
        "codex": [
            "Codex runs a new hook only once you trust it: start codex and choose "
            "'Trust all and continue' when it lists the new hook."
        ],
        "gemini": ["Gemini CLI runs project hooks only in a trusted folder."],
    }[agent]


def _server(action: str, home: Path | None, as_json: bool) -> None:
    from talos.hooks import client

    h = str(home) if home else None
    if action == "status":
        info = client.ping(h)
        if as_json:  # typed for a script: pid a number, current a boolean
            typed: dict[str, object] = dict(info or {})
            if info is not None:
                typed["pid"] = int(info["pid"]) if info["pid"].isdigit() else info["pid"]
                typed["current"] = info["current"] == "True"
            emit("hook", {"running": info is not None, **typed})
        elif info is None:
            err.print("no talos hook server is running for this home")
        else:
            current = "" if info["current"] == "True" else " (stale: restarts on the next hook)"
            out.out(f"talos hook server running, pid {info['pid']}{current}")
        return
    stopped = client.stop(h)
    if as_json:
        emit("hook", {"stopped": stopped})
    else:
        err.print("stopped the talos hook server" if stopped else "no server was running")
