"""Transcripts are untrusted input: what of a session's text may reach a block (design §3.3, §8).

A transcript is where web pages, tool output and pasted mail land: a session's request, its
real task, its outcome (the assistant's last answer) and its file's name are stored text like a
fact, and an agent reads them in its prompt. Each field is screened here, in the one function
every route passes (:func:`episode_field`, called where an episode is built:
:func:`talos.sources.sessions.episode_node`, which the index and a read without it share), so
recall, the hooks, MCP and explain never see what it withholds:

* a credential is masked (design §8.3: episodes are delivered masked, ``ghp_****``), before
  the field is cut, as before;
* a field that addresses the model — earlier rules set aside, a persona imposed, a fake turn,
  a claim of authority (the rules about words, :data:`EPISODE_RULES`) — is withheld whole:
  the request (the episode's text) takes the episode with it, a task or an outcome is left
  out and the episode is shown by what remains. The text screened runs :data:`MARGIN`
  characters past the field's cut, so an instruction that starts just before the cut is no
  less withheld for being cut.

The rules about commands (download-and-run, reading ``.env``, ``rm -rf``) are not applied to
episodes: a past request or answer is the record of what a person asked and an agent did
("read .env and tell me why the db connection fails", "install it with curl … | sh"), and the
block says its rows are recorded data; on a fact line, which a person writes to be followed,
they stay (design §8.2).

``talos scan`` lists the sessions with a withheld field or a masked credential
(:func:`episode_findings`, :func:`talos.scan.scan_sessions`).
"""

from __future__ import annotations

import functools

from talos.safety.scan import _PROSE, Finding, prose_findings
from talos.safety.secrets import mask_secrets

__all__ = [
    "EPISODE_RULES",
    "MARGIN",
    "addresses_the_model",
    "episode_field",
    "episode_findings",
    "withheld_reasons",
]

#: The rules an episode's field is withheld for: the text addresses the model (design §8.1's
#: "text addressed to the model"), not a record of what was done.
EPISODE_RULES = _PROSE

#: Characters past a field's cut that are screened with it: "… ignore all previous
#: instructions" starting at character 70 of an 80-character request is withheld, although
#: the block would show only its start.
MARGIN = 160


def withheld_reasons(text: str) -> tuple[Finding, ...]:
    """The findings of :data:`EPISODE_RULES` in ``text`` (empty: the text may be shown);
    credentials in ``text`` are masked first, so no evidence quotes one
    (:func:`talos.safety.scan.prose_findings`: the secret detectors are not run again)."""
    return tuple(prose_findings(mask_secrets(text)))


def episode_field(said: str, limit: int) -> str:
    """A session's text as an episode stores it: credentials masked before the cut
    (:func:`talos.safety.secrets.mask_secrets`), cut to ``limit`` characters; ``""`` when the
    text up to ``limit + MARGIN`` characters addresses the model (:func:`withheld_reasons`)."""
    if not said:
        return ""
    masked = mask_secrets(said)
    if _addresses(masked[: limit + MARGIN]):
        return ""
    return masked[:limit]


@functools.lru_cache(maxsize=16384)
def _addresses(masked: str) -> bool:
    """:func:`addresses_the_model` of a text whose credentials are masked already."""
    return bool(prose_findings(masked))


@functools.lru_cache(maxsize=16384)
def addresses_the_model(text: str) -> bool:
    """Whether :func:`withheld_reasons` finds anything in ``text`` (cached per text: the
    index and a read without it build one episode twice in a process)."""
    return bool(withheld_reasons(text))


def episode_findings(field: str, said: str, limit: int) -> tuple[Finding, ...]:
    """What ``talos scan`` says of one field of a session (``field``: ``request``, ``task``,
    ``outcome``, ``file name``): each finding of :func:`withheld_reasons` in the text
    :func:`episode_field` screens, as ``"FIELD withheld: REASON"``, and ``"FIELD: contains a
    credential value (masked when shown)"`` when masking changed the part shown. Evidence is
    masked."""
    if not said:
        return ()
    masked = mask_secrets(said)
    out = [
        Finding(f"{field} withheld: {f.reason}", f.evidence)
        for f in prose_findings(masked[: limit + MARGIN])
    ]
    if masked[:limit] != said[:limit]:
        out.append(Finding(f"{field}: contains a credential value (masked when shown)"))
    return tuple(out)
