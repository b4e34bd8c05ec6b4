"""The dense leg's benches (``bench/dense_leg.py``, ``bench/hybrid_latency.py``): the network
guard every step runs under, the texts a home gives the leg, the refusal without the ``dense``
extra.

Nothing here needs the third-party data or a model. The model-choice lab that used to share
these helpers is archived (tag ``labs-2026-12``, ``docs/benchmarks.md`` "Dense leg"); the
shipped leg and the real model are tested in ``tests/test_dense.py``.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import dense_leg  # noqa: E402
import hybrid_latency  # noqa: E402

from talos.ranking import dense as D  # noqa: E402


def test_no_network_refuses_and_records_every_attempt() -> None:
    real = socket.getaddrinfo
    with dense_leg.NoNetwork() as guard:
        with pytest.raises(OSError, match="network is off"):
            socket.create_connection(("127.0.0.1", 9))
        with pytest.raises(OSError, match="network is off"):
            socket.getaddrinfo("example.org", 443)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            with pytest.raises(OSError, match="network is off"):
                s.connect(("127.0.0.1", 9))
        finally:
            s.close()
    assert [w for w, _ in guard.attempts] == ["create_connection", "getaddrinfo", "connect"]
    assert guard.attempts[1][1] == "('example.org', 443)"
    assert socket.getaddrinfo is real


def test_home_texts_reads_what_the_leg_would_embed(tmp_path: Path) -> None:
    (tmp_path / "memory.md").write_text(
        "# Memory\n- deploys need the vault token <!-- reflect 2026-01-01 -->\n- plain fact\n",
        encoding="utf-8",
    )
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills" / "a.md").write_text("---\nname: a\n---\n\nbody", encoding="utf-8")
    sess = tmp_path / ".talos" / "sessions"
    sess.mkdir(parents=True)
    (sess / "s1.jsonl").write_text(
        "\n".join(
            json.dumps(m)
            for m in (
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "first request"},
                {"role": "user", "content": "second"},
            )
        ),
        encoding="utf-8",
    )
    assert dense_leg.home_texts(tmp_path) == [
        "deploys need the vault token",
        "plain fact",
        "name: a\n \n\nbody",
        "first request",
    ]
    assert [dense_leg.home_size(n) for n in (3000, 30000)] == [3360, 33060]


def test_without_the_extra_it_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(D, "unavailable", lambda: "install talos-memory[dense]")
    assert dense_leg.main(["--data", "/nonexistent", "--sessions"]) == 1
    assert "talos-memory[dense]" in capsys.readouterr().err
    monkeypatch.setattr(os, "environ", dict(os.environ))  # main sets OMP_* variables
    assert hybrid_latency.main(["--data", "/nonexistent", "--home", "/nonexistent"]) == 1
    assert "talos-memory[dense]" in capsys.readouterr().err
