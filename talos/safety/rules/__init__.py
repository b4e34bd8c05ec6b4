"""The red flags, as data (design §8.1, §8.2): :data:`RULES`, each reason with its patterns.

The patterns live by what they catch: :mod:`talos.safety.rules.commands` (a text that tries
to act: download and run, read credentials, persist, ...) and
:mod:`talos.safety.rules.instructions` (a text that addresses the model). The engine that runs
them is :mod:`talos.safety.scan`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from talos.safety.prefilter import Pat
from talos.safety.rules import commands, forms, instructions, languages

__all__ = ["RULES", "Rule"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One red flag: its ``reason`` (shown to people) and the patterns that raise it.

    ``accept`` may veto a match (e.g. ``SORT_KEY`` is a database term, not a credential).
    Patterns are line-local and bounded (no unbounded ``.*``) so that a hostile 1 MB line
    cannot make the scan quadratic.
    """

    reason: str
    patterns: tuple[Pat, ...]
    accept: Callable[[re.Match[str]], bool] | None = None
    secrets: bool = False  # the rule is "a detector of talos.safety.secrets finds a value"
    #: patterns run only on the text with its spaces taken out (words split anywhere:
    #: "ign ore all prev ious instr uctions"), never on the text itself
    squeezed: tuple[Pat, ...] = ()


#: Every red flag, in the order reasons are listed (design §8.1).
RULES: tuple[Rule, ...] = (
    Rule("download-and-run", commands.DOWNLOAD_AND_RUN),
    Rule("decode-and-run", commands.DECODE_AND_RUN),
    Rule("reads credentials", commands.READS_CREDENTIALS, accept=commands.reads_a_credential),
    # A value a detector of talos.safety.secrets finds (ours and detect-secrets'); the evidence is
    # the
    # window it matched, masked. A fact line holding one is withheld (see keep_fact).
    Rule("contains a credential value", (), secrets=True),
    Rule("sends data out", commands.SENDS_DATA_OUT),
    Rule("persistence", commands.PERSISTENCE),
    Rule("mass delete", commands.MASS_DELETE),
    Rule("disables security tools", commands.DISABLES_SECURITY_TOOLS),
    Rule(
        "addresses the model",
        (
            *instructions.ADDRESSES_THE_MODEL,
            *forms.CONCEALMENT,
            *forms.PARAPHRASES,
            *languages.OVERRIDES,
            *languages.FROM_NOW_ON,
            *languages.EVERYTHING_BEFORE,
        ),
        squeezed=forms.SQUEEZED,
    ),
    Rule(
        "claims authority",
        (
            *instructions.CLAIMS_AUTHORITY,
            *forms.FAKE_TURNS,
            *forms.ROLE_TAGS,
            *forms.AUTHORITY,
        ),
    ),
)
