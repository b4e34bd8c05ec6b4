"""Trust commands: remember, get, conflicts, resolve, history, restore, revoke (SPEC §7)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer
from rich.table import Table

from talos.cli.common import (
    AtOpt,
    HomeOpt,
    JsonOpt,
    OverrideOpt,
    ScopeOpt,
    emit,
    err,
    handle_errors,
    open_memory,
    out,
    parse_date,
    parse_overrides,
    scopes_from,
)
from talos.memory import node_provenance
from talos.trust import record_id, stated_value

__all__ = ["conflicts", "get", "history", "remember", "resolve", "restore", "revoke"]

#: Exit code of a refusal an agent can branch on (SPEC §7.7, §9.1).
EXIT_REFUSED = 3


@handle_errors("remember")
def remember(
    text: Annotated[str, typer.Argument(help="The fact, one line.")],
    key: Annotated[
        str | None, typer.Option("--key", help="Canonical key, e.g. deploy.region.")
    ] = None,
    source: Annotated[
        str,
        typer.Option("--source", help="Who says so: user, tool (needs --ref), import, reflect."),
    ] = "user",
    ref: Annotated[
        str | None, typer.Option("--ref", help="Source id: message id, commit, URL, tool call.")
    ] = None,
    scope: Annotated[
        str | None, typer.Option("--scope", help="Namespace (default: global / $TALOS_SCOPE).")
    ] = None,
    observed: Annotated[
        str | None,
        typer.Option("--observed", help="When the evidence was observed (default today)."),
    ] = None,
    valid_from: Annotated[
        str | None, typer.Option("--from", help="Valid from this date (default: --observed).")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Valid until this date (exclusive).")
    ] = None,
    conf: Annotated[float | None, typer.Option("--conf", help="Confidence 0-1.")] = None,
    by: Annotated[str | None, typer.Option("--by", help="The producer (agent or policy).")] = None,
    home: HomeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Append a fact to memory.md with its provenance tag, atomically and audited.

    With --key, it supersedes older records of that key and scope whose authority is not
    higher; late evidence (observed before the current record) goes to history; a reflect
    write never replaces what the person (user) or a tool said: it is stored, shadowed.

    Examples:
      talos remember "editor = helix" --key editor
      talos remember "deploy region is eu-west-1" --key deploy.region --source tool --ref run:42
    """
    scopes = (scope,) if scope else scopes_from(None)
    mem = open_memory(home, scopes=scopes)
    result = mem.remember(
        text,
        key=key,
        source=source,
        ref=ref,
        scope=scopes[0],
        observed=parse_date(observed, "--observed"),
        valid_from=parse_date(valid_from, "--from"),
        until=parse_date(until, "--until"),
        conf=conf,
        by=by,
    )
    if as_json:
        emit(
            "remember",
            {
                "id": result.id,
                "line": result.line,
                "status": result.status,
                "superseded": result.superseded,
            },
        )
        return
    err.print(f"remembered {result.id} ({result.status})")
    for rid in result.superseded:
        err.print(f"  superseded {rid} (restorable: talos restore {rid})")
    if result.status == "shadowed":
        err.print("  a record of higher authority holds this key: stored, but not used")
    if result.status == "history":
        err.print("  older than the current record: kept in the audit log only")


@handle_errors("get")
def get(
    key: Annotated[str, typer.Argument(help="Canonical key, e.g. deploy.region.")],
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    at: AtOpt = None,
    override: OverrideOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the single usable value of KEY with its provenance (exit 0), or refuse (exit 3)
    with the reason: unknown, expired, not-yet-valid, or conflict (with the competitors).

    A record of a scope you are not authorized for is reported as unknown.

    Example: talos get deploy.region --scope project:alpha --json
    """
    mem = open_memory(home, scopes=scopes_from(scope))
    decision = mem.get(key, at=parse_date(at), overrides=parse_overrides(override))
    if as_json:
        emit(
            "get",
            decision.to_json(),
            ok=decision.ok,
            error=None if decision.ok else decision.reason,
        )
    elif decision.ok and decision.record is not None:
        out.out(decision.value or "")
        rec = decision.record
        prov = node_provenance(rec)
        note = (
            " · model-inferred (reflect), verify before relying on it" if decision.inferred else ""
        )
        if decision.override:
            note = " · request-scoped override"
        err.print(
            f"{key} = {decision.value}  [{prov.get('src')} {prov.get('born')} "
            f"id={record_id(rec)}]{note}"
        )
    else:
        err.print(f"{key}: {decision.reason}")
        for n in decision.competitors:
            err.print(f"  {record_id(n)}: {stated_value(n.text)} ({n.src} {n.born})")
    if not decision.ok:
        raise typer.Exit(EXIT_REFUSED)


@handle_errors("conflicts")
def conflicts(
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    at: AtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List keys whose records disagree at equal authority (settle one with `talos resolve`).

    Example: talos conflicts --json
    """
    mem = open_memory(home, scopes=scopes_from(scope))
    found = mem.conflicts(at=parse_date(at))
    if as_json:
        emit(
            "conflicts",
            [
                {
                    "scope": s,
                    "key": k,
                    "records": [
                        {
                            "id": record_id(n),
                            "value": stated_value(n.text),
                            "text": n.text,
                            "provenance": node_provenance(n),
                        }
                        for n in recs
                    ],
                }
                for s, k, recs in found
            ],
        )
        return
    if not found:
        err.print("no conflicts")
        return
    table = Table(title="conflicts")
    for col in ("scope", "key", "id", "value", "source", "date"):
        table.add_column(col)
    for s, k, recs in found:
        for n in recs:
            table.add_row(s, k, record_id(n), stated_value(n.text), n.src, n.born)
    out.print(table)


@handle_errors("resolve")
def resolve(
    key: Annotated[str, typer.Argument(help="The contested key.")],
    keep: Annotated[str, typer.Option("--keep", help="Id of the record to keep.")],
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Settle a conflict: keep one record; the others of KEY become superseded (audited).

    Example: talos resolve team.favourite --keep r3f9a01c2de
    """
    mem = open_memory(home, scopes=scopes_from(scope))
    removed = mem.resolve(key, keep)
    if as_json:
        emit("resolve", {"key": key, "kept": keep, "superseded": removed})
        return
    err.print(f"{key}: kept {keep}; superseded {', '.join(removed) or 'nothing'}")


@handle_errors("history")
def history(
    target: Annotated[str | None, typer.Argument(help="A key or a record id.")] = None,
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the audit log: every remember, supersede, resolve, forget, revoke and restore —
    of the authorized scopes only.

    Example: talos history editor
    """
    mem = open_memory(home, scopes=scopes_from(scope))
    rows = mem.history(target)
    if as_json:
        emit("history", rows)
        return
    if not rows:
        err.print("no history")
        return
    table = Table(title=f"history{' of ' + target if target else ''}")
    for col in ("time (UTC)", "op", "id", "key", "before", "after", "reason"):
        table.add_column(col, overflow="fold")
    for e in rows:
        when = dt.datetime.fromtimestamp(int(e.get("t", 0)), dt.UTC).strftime("%Y-%m-%d %H:%M")
        table.add_row(
            when,
            str(e.get("op")),
            str(e.get("id") or ""),
            str(e.get("key") or ""),
            str(e.get("before") or e.get("line") or ""),
            str(e.get("after") or ""),
            str(e.get("reason") or ""),
        )
    out.print(table)


@handle_errors("restore")
def restore(
    rid: Annotated[str, typer.Argument(help="Id of a removed record (see `talos history`).")],
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Bring a removed line (of an authorized scope) back into memory.md from the audit log.

    Example: talos restore Lc1bafd77f
    """
    line = open_memory(home, scopes=scopes_from(scope)).restore(rid)
    if as_json:
        emit("restore", {"id": rid, "line": line})
        return
    err.print(f"restored {rid}: {line}")


@handle_errors("revoke")
def revoke(
    ref: Annotated[str, typer.Option("--ref", help="The source id to retract, e.g. msg:42.")],
    home: HomeOpt = None,
    scope: ScopeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Retract every record derived from source REF (removed, audited, restorable).

    Example: talos revoke --ref msg:42
    """
    removed = open_memory(home, scopes=scopes_from(scope)).revoke(ref)
    if as_json:
        emit("revoke", {"ref": ref, "removed": removed})
        return
    err.print(f"revoked {len(removed)} record(s) derived from {ref}: {', '.join(removed) or '-'}")
