"""The data talos ships in ``talos/data`` instead of installing a package for it: each file is
named in its licence notes, has the size its reader expects, and is its source's data where
the source package is installed (the stop lists, the frequency list and detect-secrets'
regexes are pinned in ``tests/test_analyzer.py`` and ``tests/test_secrets.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from talos import data

FOLDER = Path(data.__file__).parent

#: Each shipped file and its number of lines.
FILES = {
    "stopwords_en.txt": 179,
    "stopwords_zh.txt": 841,
    "wordfreq_en.txt": 401,
    "detect_secrets.json": 31,  # "[", 29 regexes, "]"
    "confusables.txt": 1315,
    "stem_exceptions.txt": 57,  # talos's own: 13 lines of notes, 44 terms
}


@pytest.mark.parametrize(("name", "count"), FILES.items())
def test_each_file_is_named_in_the_licence_notes(name: str, count: int) -> None:
    assert len(data.lines(name)) == count
    assert f"`{name}`" in (FOLDER / "LICENSES.md").read_text(encoding="utf-8")


def test_every_file_of_the_folder_is_accounted_for() -> None:
    """A file added to the folder without its source and licence fails here."""
    notes = {"__init__.py", "LICENSES.md", "LICENSE-Apache-2.0.txt"}
    shipped = {p.name for p in FOLDER.iterdir() if p.is_file()}
    assert shipped == notes | set(FILES)
    assert "Apache License" in data.text("LICENSE-Apache-2.0.txt")


def test_confusables() -> None:
    table = data.confusables()
    assert len(table) == 1315
    assert table["\u043e"] == "o" and table["\u03bd"] == "v"  # Cyrillic о, Greek ν
    assert all(not c.isascii() and g.isascii() and g.isalnum() for c, g in table.items())


def test_the_confusables_are_unicode_data_as_confusable_homoglyphs_ships_it() -> None:
    """Where confusable-homoglyphs is installed: each non-ASCII character its data lists as
    a look-alike of an ASCII letter or digit, with the first such one, in its order."""
    confusables = pytest.importorskip("confusable_homoglyphs.confusables")
    want: dict[str, str] = {}
    for char, homoglyphs in confusables.confusables_data.items():
        if len(char) != 1 or char.isascii():
            continue
        for h in homoglyphs:
            g = h["c"]
            if len(g) == 1 and g.isascii() and g.isalnum():
                want[char] = g
                break
    assert list(data.confusables().items()) == list(want.items())


def test_a_name_that_is_not_shipped() -> None:
    with pytest.raises(FileNotFoundError):
        data.text("no-such-file.txt")
