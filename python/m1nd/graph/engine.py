"""The only bridge to the native kernels (``m1nd_core``).

Kernels trust their input (typed, C-contiguous, in range); this module makes that true: it coerces dtypes with
``np.ascontiguousarray``, checks shapes and ranges, and raises :class:`~m1nd.errors.InvalidInputError` with a clear
message before a kernel could fail with Cython's cryptic fused-type errors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import numpy as np

from m1nd.defaults import DECAY, THRESHOLD
from m1nd.errors import GraphTooLargeError, InvalidInputError
from m1nd_core import activation as _act
from m1nd_core import hebbian as _hebb
from m1nd_core import paths as _paths
from m1nd_core import postings as _postings
from m1nd_core import rank as _rank
from m1nd_core import termcount as _termcount
from m1nd_core import wordfold as _wordfold
from m1nd_core.csr import CSRGraph

MAX_NODES = 2_000_000
MAX_EDGES = 20_000_000
W_MIN = 0.05
W_MAX = 1.0
ALL_RELATIONS = 0xFFFFFFFF
S = TypeVar("S")

MODE = {"forward": 0, "reverse": 1, "both": 2}


def core_build_info() -> dict[str, object]:
    """How the loaded kernels were compiled (``health.core``): the ABI (``abi3`` serves every CPython from 3.11 on),
    whether bounds and initialisation checks are compiled in, the C compiler and the CMake build type."""
    import os

    try:
        from m1nd_core import _build_info as b  # written by CMake next to the modules (src/m1nd_core/CMakeLists.txt)
    except ImportError:
        return {"abi": "unknown", "abi3": None, "boundscheck": None, "compiler": "unknown", "build_type": "unknown"}
    from m1nd_core import csr

    # the loaded module's file name says which ABI it was built for (csr.abi3.so; on Windows every build is csr.pyd)
    name = os.path.basename(csr.__file__ or "")
    abi3 = ".abi3." in name or (name.endswith(".pyd") and b.ABI.startswith("abi3"))
    return {"abi": b.ABI, "abi3": abi3, "boundscheck": bool(b.BOUNDSCHECK), "compiler": b.COMPILER.strip(),
            "build_type": b.BUILD_TYPE}


def relation_mask(codes: list[int] | tuple[int, ...] | set[int]) -> int:
    m = 0
    for c in codes:
        m |= 1 << int(c)
    return m


def table16(values: dict[int, float] | list[float] | None, default: float = 1.0) -> np.ndarray:
    out = np.full(16, default, dtype=np.float32)
    if values is None:
        return out
    items = values.items() if isinstance(values, dict) else enumerate(values)
    for k, v in items:
        out[int(k)] = v
    return out


class ScratchPool(Generic[S]):
    """Reusable kernel working memory, one object per concurrent caller (kernels release the GIL, so callers may
    overlap); each kernel leaves its scratch at rest, so a borrowed one is always ready."""

    def __init__(self, make: Callable[[], S]) -> None:
        self._make = make
        self._free: list[S] = []

    @contextmanager
    def borrow(self) -> Iterator[S]:
        try:
            sc = self._free.pop()  # list.pop / append are atomic under the GIL
        except IndexError:
            sc = self._make()
        try:
            yield sc
        finally:
            self._free.append(sc)

    def __len__(self) -> int:
        return len(self._free)


def _ranges(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated ``range(starts[k], ends[k])`` for all k (int64) and the k each value came from."""
    counts = ends - starts
    total = int(counts.sum())
    owner = np.repeat(np.arange(len(starts)), counts)
    if total == 0:
        return np.zeros(0, np.int64), owner
    offs = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(total)
    return offs.astype(np.int64), owner


@dataclass
class Path:
    nodes: np.ndarray  # int32 node indices, len hops+1
    edges: np.ndarray  # int64 forward edge positions, len hops
    dirs: np.ndarray  # int8 +1 forward, -1 backward
    strength: float


class Engine:
    """Holds one CSR graph and runs kernels on it. Weights are mutated in place by learning."""

    def __init__(self, csr: CSRGraph) -> None:
        self.csr = csr
        self.n = csr.n_nodes
        self.e = csr.n_edges
        self._deg_cache: dict[tuple[str, int], np.ndarray] = {}
        # Spread working memory, reused so a query costs the region it reaches rather than O(N) allocation and
        # clearing per spread.
        self._scratch = ScratchPool(lambda: _act.SpreadScratch(self.n))

    # -- construction ---------------------------------------------------------------------------------------------
    @classmethod
    def from_edges(cls, n_nodes: int, src: np.ndarray, dst: np.ndarray, weights: np.ndarray,
                   base_weights: np.ndarray, relations: np.ndarray) -> Engine:
        e = len(src)
        if n_nodes > MAX_NODES or e > MAX_EDGES:
            raise GraphTooLargeError(f"graph too large: {n_nodes} nodes / {e} edges (limits {MAX_NODES} nodes / "
                                     f"{MAX_EDGES} edges); exclude vendored or generated directories")
        arrays = [np.ascontiguousarray(src, dtype=np.int32), np.ascontiguousarray(dst, dtype=np.int32),
                  np.ascontiguousarray(weights, dtype=np.float32), np.ascontiguousarray(base_weights, dtype=np.float32),
                  np.ascontiguousarray(relations, dtype=np.uint8)]
        if any(len(a) != e for a in arrays):
            raise InvalidInputError("edge arrays must all have the same length")
        if e and (arrays[0].min() < 0 or arrays[0].max() >= n_nodes or arrays[1].min() < 0
                  or arrays[1].max() >= n_nodes):
            raise InvalidInputError("edge endpoint out of range")
        return cls(CSRGraph.from_edges(int(n_nodes), *arrays))

    @classmethod
    def from_arrays(cls, n_nodes: int, arrays: dict[str, np.ndarray]) -> Engine:
        names = ("indptr", "indices", "weights", "base_weights", "relations", "rev_indptr", "rev_indices", "rev_edge")
        dtypes = (np.int64, np.int32, np.float32, np.float32, np.uint8, np.int64, np.int32, np.int64)
        args = [np.ascontiguousarray(arrays[k], dtype=t) for k, t in zip(names, dtypes)]
        # Cached arrays may be read-only views of a memory map; only the learned weights are mutated in place.
        args[2] = np.array(args[2], dtype=np.float32, copy=True)
        return cls(CSRGraph.from_arrays(int(n_nodes), *args))

    def arrays(self) -> dict[str, np.ndarray]:
        c = self.csr
        return {"indptr": c.indptr, "indices": c.indices, "weights": c.weights, "base_weights": c.base_weights,
                "relations": c.relations, "rev_indptr": c.rev_indptr, "rev_indices": c.rev_indices,
                "rev_edge": c.rev_edge}

    # -- views ----------------------------------------------------------------------------------------------------
    @property
    def weights(self) -> np.ndarray:
        return self.csr.weights

    @property
    def nbytes(self) -> int:
        return int(self.csr.nbytes)

    def edge_sources(self) -> np.ndarray:
        """Source node of every forward edge position (int32[E])."""
        return np.repeat(np.arange(self.n, dtype=np.int32), np.diff(self.csr.indptr))

    def out_edges(self, u: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions, targets) of u's forward edges."""
        a, b = int(self.csr.indptr[u]), int(self.csr.indptr[u + 1])
        return np.arange(a, b, dtype=np.int64), self.csr.indices[a:b]

    def in_edges(self, u: int) -> tuple[np.ndarray, np.ndarray]:
        """(forward positions, sources) of u's incoming edges."""
        a, b = int(self.csr.rev_indptr[u]), int(self.csr.rev_indptr[u + 1])
        return self.csr.rev_edge[a:b], self.csr.rev_indices[a:b]

    def incident(self, nodes, mask: int = ALL_RELATIONS) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every edge touching the given nodes, both directions, vectorised: (owner index into ``nodes`` int64,
        neighbour int32, forward edge position int64, True when the edge leaves the owner). Forward edges of all
        owners come first, then reverse ones; within each, owners in the given order."""
        c = self.csr
        nodes = np.asarray(nodes, np.int64)
        if len(nodes) == 0:
            z = np.zeros(0, np.int64)
            return z, z.astype(np.int32), z, z.astype(bool)
        fpos, fown = _ranges(c.indptr[nodes], c.indptr[nodes + 1])
        rpos, rown = _ranges(c.rev_indptr[nodes], c.rev_indptr[nodes + 1])
        owner = np.concatenate([fown, rown])
        nbr = np.concatenate([c.indices[fpos], c.rev_indices[rpos]]).astype(np.int32)
        pos = np.concatenate([fpos, c.rev_edge[rpos]]).astype(np.int64)
        fwd = np.concatenate([np.ones(len(fpos), bool), np.zeros(len(rpos), bool)])
        if mask != ALL_RELATIONS:
            keep = ((mask >> c.relations[pos].astype(np.int64)) & 1).astype(bool)
            owner, nbr, pos, fwd = owner[keep], nbr[keep], pos[keep], fwd[keep]
        return owner, nbr, pos, fwd

    def edges_between(self, u: int, v: int) -> np.ndarray:
        return self.csr.edges_between(int(u), int(v))

    def degree(self, direction: str, mask: int = ALL_RELATIONS) -> np.ndarray:
        key = (direction, mask)
        if key not in self._deg_cache:
            self._deg_cache[key] = self.csr.out_degree(mask) if direction == "out" else self.csr.in_degree(mask)
        return self._deg_cache[key]

    # -- kernels --------------------------------------------------------------------------------------------------
    def _node_array(self, nodes, name: str) -> np.ndarray:
        arr = np.ascontiguousarray(nodes, dtype=np.int32).reshape(-1)
        if arr.size and (arr.min() < 0 or arr.max() >= self.n):
            raise InvalidInputError(f"{name}: node index out of range [0, {self.n})")
        return arr

    def _spread_args(self, seeds, amplitudes, decay: float, threshold: float, max_hops: int, mode: str, mask: int,
                     hub_ref: float, fwd_mult: np.ndarray | None, rev_mult: np.ndarray | None
                     ) -> tuple[tuple[np.ndarray, np.ndarray], dict]:
        seeds = self._node_array(seeds, "seeds")
        amps = np.ascontiguousarray(amplitudes, dtype=np.float32).reshape(-1)
        if amps.shape != seeds.shape:
            raise InvalidInputError("seeds and amplitudes must have the same length")
        if not (0 < decay <= 1) or threshold < 0 or not (0 <= max_hops <= 32):
            raise InvalidInputError("spread: decay must be in (0, 1], threshold ≥ 0, max_hops in 0..32")
        kw = {"decay": float(decay), "threshold": float(threshold), "max_hops": int(max_hops), "mode": MODE[mode],
              "relation_mask": int(mask), "hub_ref": float(hub_ref),
              "fwd_mult": table16(None) if fwd_mult is None else np.ascontiguousarray(fwd_mult, dtype=np.float32),
              "rev_mult": table16(None) if rev_mult is None else np.ascontiguousarray(rev_mult, dtype=np.float32)}
        return (seeds, amps), kw

    def spread(self, seeds, amplitudes, *, decay: float = DECAY, threshold: float = THRESHOLD,
               max_hops: int = 5, mode: str = "both", mask: int = ALL_RELATIONS, hub_ref: float = 16.0,
               fwd_mult: np.ndarray | None = None, rev_mult: np.ndarray | None = None,
               ) -> tuple[np.ndarray, np.ndarray]:
        """Dense result: (activation float32[N], hops int16[N], -1 unreached)."""
        args, kw = self._spread_args(seeds, amplitudes, decay, threshold, max_hops, mode, mask, hub_ref, fwd_mult,
                                     rev_mult)
        act = np.empty(self.n, dtype=np.float32)
        hops = np.empty(self.n, dtype=np.int16)
        with self._scratch.borrow() as sc:
            _act.spread(self.csr, *args, act, hops, scratch=sc, **kw)
        return act, hops

    def spread_sparse(self, seeds, amplitudes, *, decay: float = DECAY, threshold: float = THRESHOLD,
                      max_hops: int = 5, mode: str = "both", mask: int = ALL_RELATIONS, hub_ref: float = 16.0,
                      fwd_mult: np.ndarray | None = None, rev_mult: np.ndarray | None = None,
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The reached nodes only: (ascending node indices int32, activation float32, hops int16)."""
        args, kw = self._spread_args(seeds, amplitudes, decay, threshold, max_hops, mode, mask, hub_ref, fwd_mult,
                                     rev_mult)
        with self._scratch.borrow() as sc:
            return _act.spread_sparse(self.csr, *args, sc, **kw)

    def bfs_hops(self, source: int, *, max_hops: int, mode: str = "both", mask: int = ALL_RELATIONS) -> np.ndarray:
        hops = np.full(self.n, -1, dtype=np.int16)
        _act.bfs_hops(self.csr, int(source), hops, max_hops=int(max_hops), mode=MODE[mode], relation_mask=int(mask))
        return hops

    def k_paths(self, source: int, target: int, *, max_hops: int = 6, max_paths: int = 10, budget: int = 10000,
                min_strength: float = 1e-4, mask: int = ALL_RELATIONS) -> tuple[list[Path], int, bool, int]:
        r = _paths.k_paths(self.csr, int(source), int(target), max_hops=int(max_hops), max_paths=int(max_paths),
                           budget=int(budget), min_strength=float(min_strength), relation_mask=int(mask))
        paths = [Path(np.asarray(n), np.asarray(e), np.asarray(d), float(s)) for n, e, d, s in r["paths"]]
        return paths, int(r["total_found"]), bool(r["budget_exhausted"]), int(r["shortest_hops"])

    def chains(self, source: int, *, mode: str, max_depth: int = 6, min_strength: float = 0.1, budget: int = 10000,
               max_chains: int = 10, mask: int = ALL_RELATIONS, fwd_mult: np.ndarray | None = None,
               rev_mult: np.ndarray | None = None) -> list[Path]:
        r = _paths.chains(self.csr, int(source), mode=MODE[mode], max_depth=int(max_depth),
                          min_strength=float(min_strength), budget=int(budget), max_chains=int(max_chains),
                          relation_mask=int(mask),
                          fwd_mult=table16(None) if fwd_mult is None else np.ascontiguousarray(fwd_mult, np.float32),
                          rev_mult=table16(None) if rev_mult is None else np.ascontiguousarray(rev_mult, np.float32))
        return [Path(np.asarray(n), np.asarray(e), np.asarray(d), float(s)) for n, e, d, s in r]

    def pagerank(self, *, mask: int = ALL_RELATIONS, damping: float = 0.85) -> np.ndarray:
        out = np.zeros(self.n, dtype=np.float32)
        if self.n:
            _rank.pagerank(self.csr, out, relation_mask=int(mask), damping=float(damping))
        return out

    def hebbian(self, edges, signs, rate: float) -> int:
        if not (0.0 <= rate <= 1.0):
            raise InvalidInputError(f"strength must be between 0.0 and 1.0 (got {rate})")
        edges = np.ascontiguousarray(edges, dtype=np.int64).reshape(-1)
        signs = np.ascontiguousarray(signs, dtype=np.int8).reshape(-1)
        if edges.shape != signs.shape:
            raise InvalidInputError("edges and signs must have the same length")
        if edges.size and (edges.min() < 0 or edges.max() >= self.e):
            raise InvalidInputError("edge position out of range")
        return int(_hebb.apply(self.csr.weights, edges, signs, float(rate), w_min=W_MIN, w_max=W_MAX))

    def top_k(self, values: np.ndarray, k: int, min_value: float = 0.0) -> np.ndarray:
        return np.asarray(_act.top_k(np.ascontiguousarray(values, dtype=np.float32), int(k), float(min_value)))


def count_terms(texts: Sequence[str], skip: np.ndarray, vocab: Sequence[str]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Per text not skipped, its distinct whitespace-separated terms in first-seen order with their counts:
    (int32 term ids, float32 counts, int32 text positions, the new terms). A term of ``vocab`` has its position
    there as id; a term first seen here takes the next id (``len(vocab)`` on), in the order of the new terms.
    Exactly ``Counter(text.split())`` per text with ids given on first sight, natively (``m1nd_core.termcount``)."""
    skip = np.ascontiguousarray(skip, dtype=np.uint8).reshape(-1)
    if len(skip) != len(texts):
        raise InvalidInputError(f"count_terms: {len(skip)} skip flags for {len(texts)} texts")
    try:
        return _termcount.count_terms(texts, skip, vocab)
    except (ValueError, TypeError) as e:
        raise InvalidInputError(f"count_terms: {e}") from None


def fold_forms(words: list[str], stop: frozenset[str], stem_words: Callable[[list[str]], list[str]],
               fallback: Callable[[str], list[str]], joined: bool) -> list[Any]:
    """Each word's distinct stemmed index parts, natively (``m1nd_core.wordfold.fold_forms``; the contract is
    :func:`m1nd.graph.lexicon.forms_many`'s): space-joined strings when ``joined``, else tuples."""
    return _wordfold.fold_forms(words, stop, stem_words, fallback, bool(joined))


def word_folds(max_words: int) -> _wordfold.WordFolds:
    """An empty table of written words and their folded texts (``m1nd_core.wordfold``: one per extraction
    process, emptied when it holds more than ``max_words`` words)."""
    return _wordfold.WordFolds(int(max_words))


class PostingLists:
    """Posting lists over values in ``[0, n)``: ``flat`` grouped by key through ``offsets``, optional per-posting
    ``weights``; ``accumulate`` is the native scatter-sum (the lexical and trigram indexes' inner loop)."""

    def __init__(self, flat: np.ndarray, offsets: np.ndarray, n: int, weights: np.ndarray | None = None) -> None:
        self.flat = np.ascontiguousarray(flat, dtype=np.int32)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.weights = None if weights is None else np.ascontiguousarray(weights, dtype=np.float32)
        self.n = int(n)
        self._scratch = ScratchPool(lambda: _postings.AccumulatorScratch(self.n))

    def accumulate(self, keys, key_weights: np.ndarray | None = None, min_sum: float | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(values with a posting, ascending int32; float64 sums of ``weights[p]·key_weights[k]``; int32 counts);
        with ``min_sum``, only the values whose float32 sum reaches it."""
        keys = np.ascontiguousarray(keys, dtype=np.int64).reshape(-1)
        kw = None if key_weights is None else np.ascontiguousarray(key_weights, dtype=np.float32).reshape(-1)
        if kw is not None and kw.shape != keys.shape:
            raise InvalidInputError("keys and key_weights must have the same length")
        with self._scratch.borrow() as sc:
            try:
                return _postings.accumulate(self.flat, self.offsets, keys, sc, self.weights, kw, min_sum)
            except ValueError as e:
                raise InvalidInputError(f"posting lists: {e}") from None
