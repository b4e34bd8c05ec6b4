"""Safety filters on the road into an agent's prompt (SPEC §8).

Memory carries data, never commands. :func:`keep_fact` is the default fact filter (§8.2): a
line shaped like an instruction to the model, or like a download-and-run command, is not a
node on any route.
"""

from __future__ import annotations

import re

__all__ = ["INSTRUCTION_PATTERNS", "instruction_reasons", "keep_fact"]

#: (reason, pattern) pairs; a fact matching any of them is excluded (SPEC §8.2).
INSTRUCTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "addresses the model: ignore previous instructions",
        re.compile(
            r"\b(ignore|disregard|forget)\b.{0,40}\b(previous|prior|above|earlier|all)\b"
            r".{0,20}\b(instructions?|prompts?|rules|messages?)\b",
            re.I,
        ),
    ),
    (
        "addresses the model: hide from the user",
        re.compile(r"\b(don'?t|do not|never)\s+(tell|inform|show|mention)\b.{0,20}\buser\b", re.I),
    ),
    ("download-and-run", re.compile(r"\b(curl|wget)\b[^|\n]*\|\s*(sudo\s+)?(ba|z)?sh\b", re.I)),
    (
        "decode-and-run",
        re.compile(r"base64\s+(-d|--decode)[^|\n]*\|\s*(sudo\s+)?(ba|z)?sh\b", re.I),
    ),
    (
        "addresses the model (zh): 忽略之前的指令",
        re.compile(r"忽略.{0,6}(之前|以上|上面|先前|前面).{0,6}(指令|提示|规则)"),
    ),
    ("addresses the model (zh): 不要告诉用户", re.compile(r"(不要|别|不许)(告诉|告知|让)用户")),
)


def instruction_reasons(text: str) -> list[str]:
    """The reasons ``text`` looks like an instruction rather than a record ([] when benign)."""
    return [reason for reason, pat in INSTRUCTION_PATTERNS if pat.search(text)]


def keep_fact(text: str) -> bool:
    """Default ``keep_fact`` filter (SPEC §3.1, §8.2): ``False`` for instruction-shaped lines."""
    return not instruction_reasons(text)
