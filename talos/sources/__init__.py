"""Readers that turn a home's files into nodes (design §3): facts, skills, episodes."""

from talos.sources.facts import TAG, load_facts, parse_fact_line, strip_tag
from talos.sources.sessions import first_user_request, load_episodes
from talos.sources.skills import (
    DESC_MAX,
    NAME_MAX,
    load_skills,
    parse_frontmatter,
    skill_label,
)

__all__ = [
    "DESC_MAX",
    "NAME_MAX",
    "TAG",
    "first_user_request",
    "load_episodes",
    "load_facts",
    "load_skills",
    "parse_fact_line",
    "parse_frontmatter",
    "skill_label",
    "strip_tag",
]
