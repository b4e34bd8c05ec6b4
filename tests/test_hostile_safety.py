"""Issue 13, the hostile pass over the fixed code (items 3, 4, 5, 6 and 8).

Someone who had not seen the fixes tried to break them, as a hostile user would, through the
CLI, the Python API, the MCP tools and ``talos.compat``. Each break found is pinned here from
its exact input, with a variant of ours the fix of its class must also catch; the false-positive
side (ordinary memory that must not be withheld) is pinned beside it. All credentials are
synthetic and assembled from parts, so this file holds no token itself.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from talos.cli import app
from talos.secrets import mask_secrets


def run(*args: str):
    return CliRunner().invoke(app, list(args))


# -- item 6: credential shapes that were not masked, or only in part ----------------------------

_A = "abcdefghijklmnopqrstuvwxyz"
_D = "0123456789"
# a Discord bot token of today's length: its third part is 38 characters; detect-secrets' regex
# knows 27 and matched a prefix, so the last 11 characters were printed after the mask
DISCORD = "MTExMjIzMzQ0NTU2Njc3ODg5OQ" + ".GaBcDe." + _A + _D + "AB"

MASKED = [
    # the failing inputs
    (f"kestrel bot token {DISCORD} please", "kestrel bot token **** please"),
    (f"slack app token {'xapp-' + '1-A0123456789-1234567890123-' + 'abcdef' + _D * 5}", None),
    (f"stripe webhook secret {'whsec_' + _A + _D[:6]}", "stripe webhook secret whsec_****"),
    (f"shopify {'shpat_' + 'abcdef' + _D * 2 + 'abcdef' + _D[:4]}", "shopify shpat_****"),
    (
        f"digitalocean {'dop_v1_' + 'abcdef' + _D * 5 + 'abcdef' + _D * 2}",
        "digitalocean dop_v1_****",
    ),
    (f"doppler {'dp.st.' + 'dev.' + _A + _D + 'ABCDEF'}", "doppler dp.st.****"),
    (f"age {'AGE-SECRET-KEY-1' + 'QQQ' * 19 + 'Q'}", "age AGE-SECRET-KEY-1****"),
    (f"linear {'lin_api_' + _A + _D + 'ABCD'}", "linear lin_api_****"),
    (f"gcp oauth {'ya29.' + 'a0AfH6SMB' + _A + _D}", "gcp oauth ya29.****"),
    (f"mailgun {'key-' + 'abcdef' + _D * 2 + 'abcdef' + _D[:4]}", "mailgun key-****"),
    ("Cookie: session=" + "abcdef" + _D * 2 + "abcdef" + _D[:4], "Cookie: ****"),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
        + ("Zm9vYmFy" * 10)
        + "Zm9v==;EndpointSuffix=core.windows.net",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=****;"
        "EndpointSuffix=core.windows.net",
    ),
    (
        "https://acct.blob.core.windows.net/c?sv=2021-06-08&sp=rl&sig="
        + "AbCdEf"
        + _D
        + "%2BaB%3D",
        "https://acct.blob.core.windows.net/c?sv=2021-06-08&sp=rl&sig=****",
    ),
    # a private key's body pasted without its armour line, one line of it per memory.md line
    ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj", "****"),
    ("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz", "****"),
    # a secret named, then given after a space: "secret <value>", "wifi 密码 <value>"
    ("secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "secret ****"),
    ("wifi 密码 12345678abc", "wifi 密码 ****"),
    # variants of ours (the last two held before: pinned so they keep holding)
    (f"token {'MTA5ODc2NTQzMjEwOTg3NjU0' + '.Gh1jK2.' + _A.upper() + _D + 'xy'}", "token ****"),
    (f"{'shpss_' + 'abcdef' + _D * 2 + 'abcdef' + _D[:4]}", "shpss_****"),
    ("MIIEpAIBAAKCAQEA7VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6d", "****"),
    (
        "-----BEGIN RSA PRIVATE\nKEY-----\nxJTUt9Us8cKjMzEfYyjiWA4R4/M2bS\n"
        "-----END RSA PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE\nKEY-----****",
    ),
    (
        "-----begin  ec  private  key-----\nMHcCAQEEIIrYSSNQFaA2Hwf1",
        "-----begin  ec  private  key-----****",
    ),
    (f"notion {'secret_' + _A + _D + 'ABCDEFG'}", "notion secret_****"),
    ("API key 9f8e7d6c5b4a39281706f5e4d3c2b1a0Zz", "API key ****"),
    (f"telegram {'123456789:' + 'AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawM'}", "telegram ****"),
    (f"{'xoxe.xoxp-' + '1-' + _A + _D}", "xoxe.xoxp-****"),
]


@pytest.mark.parametrize(("text", "masked"), MASKED)
def test_credential_shapes_are_masked_whole(text: str, masked: str | None) -> None:
    out = mask_secrets(text)
    if masked is not None:
        assert out == masked
    else:
        assert out.count("****") == 1 and out.startswith("slack app token xapp-****")
    assert mask_secrets(out) == out  # idempotent


ORDINARY_6 = [
    "the secret sauce is garlic",
    "the API key lives in the team vault",
    "Cookie: none needed for the public API",
    "my password manager is 1Password",
    "commit 9f8e7d6c5b4a39281706f5e4d3c2b1a0 fixed the build",
    "密码 在 1Password 里",
    "wifi 密码 贴在冰箱上",
    "MIT license, see LICENSE",
    "the token bucket refills 100 tokens a second",
]


@pytest.mark.parametrize("text", ORDINARY_6)
def test_ordinary_text_near_the_new_shapes_is_not_masked(text: str) -> None:
    assert mask_secrets(text) == text


def test_the_discord_tail_never_reaches_an_episode_or_the_block(make_home) -> None:
    """The reported input: an episode with a 38-character third part printed
    ``****123456789AB``; now the whole run of token characters is masked on every route."""
    request = f"kestrel bot token {DISCORD} please"
    home = make_home(sessions={"a.jsonl": json.dumps({"role": "user", "content": request}) + "\n"})
    res = run("recall", "kestrel bot", "--home", str(home), "--json")
    block = json.loads(res.stdout)["data"]["text"]
    assert "kestrel bot token **** please" in block
    assert "456789AB" not in res.stdout


def test_history_never_prints_a_credential_of_a_removed_line(make_home) -> None:
    """The reported input: ``revoke`` removed a tool record holding a GitHub token; ``talos
    history`` then printed the whole line, token included, in the table and under --json
    (the audit log keeps the exact line, so ``restore`` can bring it back)."""
    token = "ghp_" + _A + _D
    home = make_home(
        memory=f"- ci token is {token} <!-- tool 2026-01-01 ref=run:x -->\n"
        "- deploy pw is Hunter2024x for the db <!-- tool 2026-01-01 ref=run:x -->\n"
    )
    assert run("revoke", "--ref", "run:x", "--home", str(home)).exit_code == 0
    table = run("history", "--home", str(home), "--plain")
    data = json.loads(run("history", "--home", str(home), "--json").stdout)["data"]
    assert [e["before"] for e in data] == [
        "- ci token is ghp_**** <!-- tool 2026-01-01 ref=run:x -->",
        "- deploy pw is **** for the db <!-- tool 2026-01-01 ref=run:x -->",
    ]
    for out in (table.stdout, json.dumps(data)):
        assert _A not in out and "Hunter2024x" not in out
    # the audit log keeps the exact line: restore brings the record back as it was
    rid = data[0]["id"]
    assert run("restore", rid, "--home", str(home)).exit_code == 0
    assert token in (home / "memory.md").read_text(encoding="utf-8")
