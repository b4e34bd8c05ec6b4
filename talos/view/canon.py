"""Canonical names: the one spelling of a record's ``key``, ``src`` and ``by`` (design §7.1, §7.4).

Authority is decided by comparing names: two records conflict, shadow or supersede each other
only when their keys are equal (§7.4), a record stands for the person only when its source
is ``user`` (§7.2), and a record is a model's when its producer is ``mcp`` (§7.5). Compared
as written, a model's ``Editor`` stood beside the person's ``editor`` instead of being
shadowed by it (and the hook's session block listed the model's value first), and
``--source USER`` wrote a tag no rule read as ``user`` (``tests/test_key_authority.py``).

So every name is read through :func:`canonical_name` — by the reader of tags
(:func:`talos.sources.facts.parse_fact_line`, the skills' frontmatter), the writer
(:func:`talos.writer.edits.remember`, ``resolve``), and the lookups of ``get``, ``resolve``,
``history`` and ``--override`` that the CLI, the MCP server and the hooks call — and no two
spellings a reader takes for one name can be two names.
"""

from __future__ import annotations

import unicodedata

__all__ = ["canonical_name"]


def canonical_name(value: str) -> str:
    """``value`` as talos compares keys, sources and producers: NFKC-folded (full-width
    ``Ｅｄｉｔｏｒ`` and ligatures become ASCII), format characters dropped and look-alike
    letters folded to the ASCII letter they imitate (Cyrillic ``е`` → ``e``,
    :func:`talos.safety.skeleton`, the fold the safety rules use), case-folded, and
    whitespace runs folded to one space with none at either end. CJK keys stay as they are.
    An ASCII name costs two string calls.

    Args:
        value: a name as written (a tag field, an option, a tool argument).

    Returns:
        The canonical name (``"editor"`` for ``" EDITOR"``, ``"ｅｄｉｔｏｒ"``, ``"еditor"``).
    """
    if value.isascii():
        return " ".join(value.split()).lower()
    from talos.safety import skeleton  # imported on use: an ASCII name never needs it

    folded = skeleton(unicodedata.normalize("NFKC", value))
    return " ".join(unicodedata.normalize("NFKC", folded).casefold().split())
