"""Attacks on "an episode belongs to its project" (design §3.3, §7.3, §9.5): the scope of a
transcript's working folder is the scope a hook there recalls in, by one rule, on every
route. Each test is written from an input that broke the rule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_episode_scope import tasks, transcript

from talos import Memory
from talos.hooks.scope import scopes_for
from talos.view.episode_scopes import episode_scope

ACME = "the acme merger invoice total is 4.2M; confidential, do not share"
BETA = "draft the beta merger invoice email for the finance team"

needs_links = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")


@needs_links
def test_a_folder_linked_under_another_projects_name_is_the_project_it_points_at(
    tmp_path: Path,
) -> None:
    """The failing input: ``links/beta`` is a link to acme's checkout. A transcript that ran
    there was ``project:beta`` (the git root was found on the link's own path and named by
    the link), so a hook in beta's real repository delivered acme's confidential session; a
    ``[hooks.scopes]`` entry for acme's folder already resolved the link (``client:acme``).
    A folder's project is its real git root, whatever path led to it."""
    acme, beta = tmp_path / "repos" / "acme", tmp_path / "repos" / "beta"
    for repo in (acme, beta):
        (repo / ".git").mkdir(parents=True)
    (tmp_path / "links").mkdir()
    link = tmp_path / "links" / "beta"
    os.symlink(acme, link)
    home = str(tmp_path)
    assert episode_scope(str(link), {}, home) == "project:acme"
    assert episode_scope(str(link / "gone" / "sub"), {}, home) == "project:acme"
    assert scopes_for(str(link), {}, home) == ("global", "project:acme")  # the hook's rule
    assert scopes_for(str(beta), {}, home) == ("global", "project:beta")

    cc = tmp_path / "claude" / "projects"
    transcript(cc / "-links-beta", "a.jsonl", link, ACME, "Filed the acme merger invoice.")
    transcript(cc / "-repos-beta", "b.jsonl", beta, BETA, "Drafted the beta merger mail.")
    mem_home = tmp_path / "home"
    mem_home.mkdir()
    (mem_home / "talos.toml").write_text(f'sessions_dir = ["{cc.as_posix()}/**"]\n')
    for index in (True, False):
        mem = Memory(mem_home, scopes=list(scopes_for(str(beta), {}, home)), index=index)
        got = mem.recall("merger invoice total", k=10)
        assert tasks(got.picked) == [BETA]
        assert "4.2M" not in got.text
