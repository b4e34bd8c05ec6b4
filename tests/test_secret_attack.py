"""Credentials by class, attacked again (design §8.3): a password named in a language the
classes did not list was delivered as written ("lösenord: Sommar2024", "salasana: Kesä2024!"),
as the classes' languages were before them. The names of a password in the languages of the
override table (:mod:`talos.safety.rules.languages`) and the Nordic ones; a plain word after
the name is no password (the rule of every stated password).
"""

from __future__ import annotations

import pytest

from talos import safety
from talos.safety import mask_secrets


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("lösenord: Sommar2024", "lösenord: ****"),
        ("mitt lösenord är Sommar2024!", "mitt lösenord är ****!"),
        ("salasana: Kesä2024!", "salasana: ****!"),
        ("passord: Fjord2024", "passord: ****"),
        ("adgangskode: Hygge2024", "adgangskode: ****"),
        ("heslo: Praha2024", "heslo: ****"),
        ("jelszó: Budapest2024", "jelszó: ****"),
        ("κωδικός: Athina2024", "κωδικός: ****"),
        ("סיסמה: Tel2024aviv", "סיסמה: ****"),
        ("รหัสผ่าน: Bangkok2024", "รหัสผ่าน: ****"),
        ("رمز عبور: Tehran2024", "رمز عبور: ****"),
        ("nenosiri: Nairobi2024", "nenosiri: ****"),
    ],
)
def test_a_password_named_in_more_languages_is_masked(text: str, masked: str) -> None:
    assert mask_secrets(text) == masked
    assert not safety.keep_fact(text)


@pytest.mark.parametrize(
    "text",
    [
        "lösenordet är bra nog",
        "salasana on vaihdettava ensi viikolla",
        "heslo je uložené v trezoru",
        "jelszó: megvan a széfben",
    ],
)
def test_a_plain_word_after_the_name_is_no_password(text: str) -> None:
    assert mask_secrets(text) == text
    assert safety.keep_fact(text)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("<password>hunter2xyz</password>", "<password>****</password>"),
        ("<api_key>9f8e7d6c5b4a3928</api_key>", "<api_key>****</api_key>"),
        ("<db><user>app</user><passwd>S3cr3t!x</passwd></db>", None),
    ],
)
def test_a_credential_in_a_markup_element_is_masked(text: str, masked: str | None) -> None:
    """A value in an element named as a credential (an XML config, a pasted HTML form) was
    delivered as written; the same value after ``password=`` or in JSON was masked."""
    out = mask_secrets(text)
    assert "hunter2xyz" not in out and "9f8e7d6c5b4a3928" not in out and "S3cr3t!x" not in out
    if masked is not None:
        assert out == masked
    assert not safety.keep_fact(text)
