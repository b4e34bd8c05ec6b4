"""Safety on the road into an agent's prompt (design §8): skill scan, fact filter, secret masking.

Memory is a second road into an agent's prompt; it must carry data, never commands. Three rules,
each applied in exactly one place that every route passes:

* **Skill scan** (§8.1) — :func:`scan_skills`, read by
  :func:`talos.sources.skills.flagged_skills` when skills are loaded: a skill that tries to
  *act* (download-and-run, decode-and-run, read credentials, send data out, persist,
  mass-delete, disable security tools, address the model), that cannot be read, that is
  oversized, that is an executable payload, or that points at a flagged file of the skills
  tree, is not a node on any route (recall, explain, usage, dead). Results are cached per file
  by ``(path, size, mtime, mode)``.
* **Fact filter** (§8.2) — :func:`keep_fact`, the default ``keep_fact`` of
  :class:`talos.Memory`: a memory.md line with the same red flags is not a node on any route.
* **Secret masking** (§8.3) — :func:`mask_secrets`, applied where an episode's text is built
  (:func:`talos.sources.sessions.episode_node`): a credential-looking value in a past request
  is masked (``ghp_****``) before anything — block, explain, ``--json``, trace keys — sees it.
* **Transcripts are untrusted input** (§8.4) — :mod:`talos.safety.episodes`, in the same
  place: a session's request, task, outcome or file name that addresses the model is
  withheld, on every route.

``talos scan`` (:func:`talos.scan.scan_home`) lists every flagged skill, file and fact with its
reasons. The rules are heuristics over text: they catch the shapes listed in design §8.1 and the
tests in ``tests/test_safety.py`` pin; they are not a sandbox.

The package, in the order a text goes through it:

* :mod:`talos.safety.normalize` — the text as a model or a shell reads it (look-alike letters
  folded, markup decoded, split letters joined, traditional Chinese simplified);
* :mod:`talos.safety.rules` — the red flags, as data (:data:`RULES`): the patterns of a text
  that tries to act (``rules/commands.py``) and of one that addresses the model
  (``rules/instructions.py``);
* :mod:`talos.safety.scan` — the engine: :func:`scan_text` over a text and its variants, and
  the fact filter built on it;
* :mod:`talos.safety.skills` — a skills tree, file by file, cached (:func:`scan_skills`);
* :mod:`talos.safety.episodes` — what of a transcript an episode may keep.

Every name is importable from ``talos.safety`` as it was when this was one module, and setting
one here (a test's ``monkeypatch.setattr(safety, "skeleton", ...)``) reaches the code that
reads it in the part that holds it (:class:`_Namespace`).
"""

from __future__ import annotations

import sys
import types

from talos.safety import normalize, rules, scan, secrets, skills
from talos.safety.normalize import (
    TRADITIONAL_FORMS,
    decoded,
    hidden_text,
    letter_by_name,
    rot13,
    simplified,
    skeleton,
    traditional_forms,
    unleet,
    unsplit,
)
from talos.safety.normalize import (
    _confusable_map as _confusable_map,
)
from talos.safety.prefilter import Pat, fold, triggers_in
from talos.safety.rules import RULES, Rule
from talos.safety.scan import (
    EVIDENCE_MAX,
    EVIDENCE_PER_RULE,
    Finding,
    encoded_texts,
    instruction_reasons,
    keep_fact,
    scan_text,
    text_reasons,
)
from talos.safety.secrets import mask_secrets
from talos.safety.skills import (
    MAX_SKILL_BYTES,
    RULES_FINGERPRINT,
    SCRIPT_SUFFIXES,
    FileReport,
    ScanStore,
    scan_skills,
)
from talos.safety.skills import (
    _scan_file as _scan_file,
)

__all__ = [
    "EVIDENCE_MAX",
    "EVIDENCE_PER_RULE",
    "MAX_SKILL_BYTES",
    "RULES",
    "RULES_FINGERPRINT",
    "SCRIPT_SUFFIXES",
    "TRADITIONAL_FORMS",
    "FileReport",
    "Finding",
    "Rule",
    "ScanStore",
    "decoded",
    "encoded_texts",
    "fold",
    "hidden_text",
    "instruction_reasons",
    "keep_fact",
    "letter_by_name",
    "mask_secrets",
    "normalize",
    "rot13",
    "rules",
    "scan",
    "scan_skills",
    "scan_text",
    "secrets",
    "simplified",
    "skeleton",
    "skills",
    "text_reasons",
    "traditional_forms",
    "triggers_in",
    "unleet",
    "unsplit",
]

#: The token-shape patterns of :mod:`talos.safety.secrets` (kept here for the property tests).
_TOKEN_SHAPES: tuple[Pat, ...] = tuple(s.pat for s in secrets.SHAPES)

#: The parts whose code reads names at call time: a name set on the package is set there too.
_PARTS: tuple[types.ModuleType, ...] = (normalize, scan, skills)


class _Namespace(types.ModuleType):
    """``talos.safety`` read and patched as the one module it was before it became a package.

    A name set on the package (``monkeypatch.setattr(safety, "_scan_file", ...)``) is also set
    in each part of :data:`_PARTS` that holds it, so the code there that reads it sees the new
    value, as it did when all of it read one namespace; undoing the patch sets the old value
    back the same way. State a part keeps between calls is a property here, read from and set
    in its part, never copied.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if not name.startswith("__"):
            for part in _PARTS:
                if name in vars(part):
                    setattr(part, name, value)
        super().__setattr__(name, value)

    @property
    def _LAST_SCAN(self) -> tuple[str, list[FileReport]] | None:
        """The last skills scan of this process (:mod:`talos.safety.skills`); a test sets it
        to ``None`` to stand for a new process (``tests/test_block.py``)."""
        return skills._LAST_SCAN

    @_LAST_SCAN.setter
    def _LAST_SCAN(self, value: tuple[str, list[FileReport]] | None) -> None:
        skills._LAST_SCAN = value


sys.modules[__name__].__class__ = _Namespace
