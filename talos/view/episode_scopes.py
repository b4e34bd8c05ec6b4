"""Which scope an episode belongs to, and the episode block a view may see (design §3.3, §7.3).

An episode belongs to the project its transcript ran in: the working folder the transcript
names (:func:`talos.sources.transcripts.session_cwd`; Claude Code stamps ``cwd`` on its lines,
a Codex rollout names it in ``session_meta``) is given the scope a hook running there would
recall in (:func:`talos.hooks.scope.scopes_for`, one rule): the closest ``[hooks.scopes]``
folder's scope, else ``project:<git root folder name>``, else ``global``. A transcript that
names no folder (talos's own sessions, a chat export) is ``global``'s.

A folder that is gone (a deleted checkout, a transcript copied from another machine) is looked
at from its nearest existing parent (``~/code/atlas/old-branch`` → the ``atlas`` repository;
a parent that is a link is the folder it points at, as for the hook);
when no git root is found that way, its own last name is the project
(``project:<folder name>``): a project's sessions never fall into ``global`` because their
folder went away. A ``[hooks.scopes]`` value that is not a scope name withholds the episodes
of its folder from every view (the hook refuses the same table).

The view is filtered by scope like the records (design §7.3: ``scope ∈ S``, before anything is
scored): :func:`scoped_block` removes the episodes of other scopes from the block
(:meth:`talos.graph.episodes.EpisodeBlock.remove`, which merges what is left as a build of it
would). So a recall outside any project (scopes ``global`` alone: the CLI's default, a hook
outside a git repository) sees the episodes of sessions that ran outside any project, as it
sees only the facts and skills of ``global``; ``--scope project:atlas`` (or a hook in atlas)
adds atlas's.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Mapping
from typing import Any

from talos.errors import InputError
from talos.graph.episodes import EpisodeBlock
from talos.hooks.scope import GLOBAL, git_root, scopes_for
from talos.view.canon import canonical_name
from talos.view.scopes import fold_scope

__all__ = ["episode_scope", "out_of_scope", "scope_digest", "scoped_block"]

#: The scope of an episode whose folder's ``[hooks.scopes]`` entry is not a scope name: no
#: request can name it (it holds a space), so no view sees the episode.
WITHHELD = " withheld"


def _table(config: Mapping[str, Any]) -> Any:
    hooks = config.get("hooks")
    return hooks.get("scopes") if isinstance(hooks, Mapping) else None


def episode_scope(cwd: str, config: Mapping[str, Any], home: str) -> str:
    """The scope of an episode whose transcript ran in ``cwd`` (module docstring).

    Args:
        cwd: the transcript's working folder ("" when it names none).
        config: the parsed talos.toml (its ``[hooks.scopes]`` table).
        home: the home folder (relative ``[hooks.scopes]`` folders resolve against it).

    Returns:
        ``global``, ``project:NAME``, a ``[hooks.scopes]`` value, or :data:`WITHHELD`.
    """
    if not cwd:
        return GLOBAL
    try:
        if os.path.isdir(cwd) or _mapped(cwd, config, home):
            return scopes_for(cwd, config, home)[-1]  # the hook's rule, exactly
    except InputError:
        return WITHHELD
    here = cwd  # gone: its nearest existing parent tells the repository
    while not os.path.isdir(here) and os.path.dirname(here) != here:
        here = os.path.dirname(here)
    root = git_root(os.path.realpath(here)) if os.path.isdir(here) else None
    name = os.path.basename(root) if root else os.path.basename(cwd.rstrip("/\\"))
    name = fold_scope(canonical_name(name))
    return f"project:{name}" if name else GLOBAL


def _mapped(cwd: str, config: Mapping[str, Any], home: str) -> bool:
    """Whether a ``[hooks.scopes]`` folder holds ``cwd`` (a ``"global"`` entry maps it too)."""
    table = _table(config)
    if not isinstance(table, Mapping):
        return False
    here = os.path.normcase(os.path.realpath(cwd))
    for folder in table:
        if not isinstance(folder, str):
            continue
        target = os.path.normcase(os.path.realpath(os.path.join(home, os.path.expanduser(folder))))
        try:
            if os.path.commonpath([here, target]) == target:
                return True
        except ValueError:
            continue
    return False


def _scopes_of(
    folders: Mapping[str, Collection[str]], config: Mapping[str, Any], home: str
) -> dict[str, str]:
    """Each working folder's scope (:func:`episode_scope`)."""
    return {cwd: episode_scope(cwd, config, home) for cwd in folders}


def out_of_scope(
    folders: Mapping[str, Collection[str]],
    scopes: Collection[str],
    config: Mapping[str, Any],
    home: str,
) -> list[str]:
    """The paths of the episodes a request of ``scopes`` may not see: those whose folder's
    scope (:func:`episode_scope`) is not among them, and every episode without a folder
    (``global``'s) when ``global`` is not. ``folders``: ``{cwd: [path, …]}`` of the episodes
    that name a folder (:meth:`talos.index.Index.episode_folders`)."""
    allowed = set(scopes)
    out: list[str] = []
    for cwd, scope in _scopes_of(folders, config, home).items():
        if scope not in allowed:
            out += folders[cwd]
    return out


def scoped_block(
    block: EpisodeBlock,
    folders: Mapping[str, Collection[str]],
    scopes: Collection[str],
    config: Mapping[str, Any],
    home: str,
) -> EpisodeBlock:
    """``block`` without the episodes a request of ``scopes`` may not see (:func:`out_of_scope`),
    merged as a block of the others would be; ``block`` itself when it loses none. Without
    ``global`` among ``scopes``, the episodes that name no folder go too.

    Raises:
        BlockError: not raised; a path the block does not hold is ignored (the folders were
            read in another transaction: the next refresh settles it).
    """
    drop = set(out_of_scope(folders, scopes, config, home))
    if GLOBAL not in scopes:
        named = {p for paths in folders.values() for p in paths}
        drop |= {p for p in block.paths if p not in named}
    if not drop:
        return block
    positions = [e for e, p in enumerate(block.paths) if p in drop]
    return block.remove(positions)


def scope_digest(
    folders: Mapping[str, Collection[str]], config: Mapping[str, Any], home: str
) -> str:
    """A digest of every working folder's scope: part of the key of what is stored for a view
    (a ``[hooks.scopes]`` edit or a moved repository changes which episodes it holds)."""
    pairs = sorted(_scopes_of(folders, config, home).items())
    return hashlib.sha256(json.dumps(pairs).encode("utf-8", "surrogatepass")).hexdigest()[:16]
