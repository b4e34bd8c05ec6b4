"""``talos doctor`` with a talos.toml it cannot use: the config finding names the file and
line, and every check that needs no state runs with the default settings, so a credential
pasted into memory.md is reported the same day (it was not until the TOML was fixed)."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import invoke

from talos.doctor import diagnose

AWS_LINE = "- aws key AKIAIOSFODNN7EXAMPLE secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"


def broken_home(make_home, toml: str) -> Path:
    home = make_home(memory="# Memory\n- deploy region is eu-west-1\n" + AWS_LINE)
    (home / "talos.toml").write_text(toml, encoding="utf-8")
    return home


def test_a_toml_syntax_error_does_not_hide_a_pasted_key(make_home) -> None:
    home = broken_home(make_home, 'lang = "en"\nmodel = \n')
    found = {f.check: f for f in diagnose(home).findings}
    config = found["config"]
    assert (config.status, config.summary) == (
        "error",
        "talos.toml: invalid TOML: Invalid value (at line 2, column 9)",
    )
    assert config.details == (
        "the checks below ran with the default settings (memory.md, skills/, .talos/), the "
        "index and usage counts unchecked; other commands refuse this home until it is fixed",
    )
    assert (found["memory"].status, found["memory"].summary) == ("ok", "memory.md: 2 facts")
    assert found["safety"].status == "warn"
    assert found["safety"].details == (
        "memory.md:3: contains a credential value: AKIA****, secret ****",
    )
    assert "index" not in found  # nothing is built in a state folder talos.toml may move
    assert not (home / ".talos").exists()


def test_a_refused_value_does_not_hide_a_pasted_key_either(make_home) -> None:
    home = broken_home(make_home, 'lang = "fr"\n')
    r = invoke("doctor", "--home", str(home), "--json")
    assert r.exit_code == 5
    found = {f["check"]: f for f in json.loads(r.stdout)["data"]["findings"]}
    assert found["config"]["summary"] == "talos.toml has values talos cannot use"
    assert found["config"]["details"][0] == "talos.toml:1: lang must be one of en, zh, not 'fr'"
    assert found["safety"]["details"] == [
        "memory.md:3: contains a credential value: AKIA****, secret ****"
    ]
