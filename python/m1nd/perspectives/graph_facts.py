"""What perspectives know about one graph generation: cached per-graph facts, the semantic backends, adjacency
and the local activation used to score routes (perspectives.md §2–§3).

Everything here is a pure function of a :class:`~m1nd.graph.model.Graph` (facts are cached on the graph object, so
a new generation starts fresh). Local activation fuses with :func:`m1nd.graph.ranking.fuse`, the one ranking that
``activate`` uses too. A :class:`SemanticBackend` handed to the perspective service by the composition root
(``backend(graph, node_index) -> (similarity float32[N] in [0, 1], name) | None``) replaces the trigram backend.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from m1nd.defaults import DECAY, THRESHOLD
from m1nd.graph.activation import DIMENSIONS, co_change_partners, ranking_priors, scatter_dense
from m1nd.graph.model import CAUSAL, CAUSAL_MASK, CAUSAL_RHO, RHO, STRUCTURAL_MASK, Graph
from m1nd.graph.nodes import KIND_CODE
from m1nd.graph.ranking import fuse, query_prior
from m1nd.graph.schema import (
    CONTAINS,
)
from m1nd.graph.seeds import lookup_sorted, run_starts, sorted_unique
from m1nd.identifiers import identifier_parts
from m1nd.lru import LRU
from m1nd.timeutil import MS_PER_DAY


ALL = 0xFFFFFFFF
SEMANTIC_FLOOR = 0.15
HUB_DEGREE = 50
HUB_TOP_SHARE = 0.02
DIR, FILE, SECTION = KIND_CODE["dir"], KIND_CODE["file"], KIND_CODE["section"]



class SemanticBackend(Protocol):
    """Code-node embeddings for perspectives (issue 6; :class:`m1nd.codegraph.vectors.CodeAffinity`): called with
    (graph, node i), the similarity of every node to node i in [0, 1] and the backend's name, or None when it has no
    vector for node i (the trigram backend answers then)."""

    @property
    def epoch(self) -> int:
        """Changes when its answers may change (its vectors appeared), so cached similarities are recomputed."""
        ...

    def __call__(self, g: Graph, i: int, /) -> tuple[np.ndarray, str] | None: ...


_WORD = re.compile(r"[A-Za-z0-9]+")


def node_words(label: str, qname: str, doc: str) -> list[str]:
    """Identifier words of a node's text (label, qname, first doc line) for the trigram backend."""
    words = identifier_parts(label) + identifier_parts(qname)
    if doc:
        words += [w.lower() for w in _WORD.findall(doc.split("\n", 1)[0])]
    return [w for w in words if len(w) >= 2]


# -- per-graph facts (cached on the Graph object, so a new generation starts fresh) ------------------------------
class GraphFacts:
    def __init__(self, g: Graph) -> None:
        t = g.nodes
        eng = g.engine
        self.n = g.n
        self.deg = (eng.degree("out", STRUCTURAL_MASK).astype(np.int64)
                    + eng.degree("in", STRUCTURAL_MASK).astype(np.int64))
        pr = t.pagerank
        thr = float(np.quantile(pr, 1.0 - HUB_TOP_SHARE)) if g.n else 0.0
        self.hub_by_rank = (pr >= thr) & (pr > 0)
        self.hub = self.hub_by_rank | (self.deg >= HUB_DEGREE)
        kind = t.kind
        group = np.full(g.n, 1, np.int8)  # symbols
        group[kind == DIR] = 0
        group[kind == FILE] = 2
        group[kind == SECTION] = 3
        self.group = group
        self._recency: np.ndarray | None = None
        self._nsum: tuple[np.ndarray, np.ndarray] | None = None
        self._test_fns: np.ndarray | None = None
        # per node: the full similarity array (N floats each: only the last few) and the above-floor part
        # (keyed by node, backend and the backend's epoch)
        self.sim_cache: LRU[tuple[int, int, int], tuple[np.ndarray, str]] = LRU(8)
        # (a node has ~2k nodes above the floor on the stdlib, up to ~25k: bounded by total entries, ~12 MB)
        self.floor_cache: LRU[tuple[int, int, int], tuple[np.ndarray, np.ndarray, str]] = LRU(
            1024, max_weight=1_000_000, weigh=lambda v: len(v[0]))

    def drop_query_caches(self) -> None:
        self.sim_cache.clear()
        self.floor_cache.clear()

    def recency(self, g: Graph) -> np.ndarray:
        """r(n) = 0.6·recency + 0.4·churn (activation.md §4), once per generation."""
        if self._recency is None:
            t = g.nodes
            newest = int(t.last_change_ms.max(initial=0))
            age = np.maximum(0, newest - t.last_change_ms).astype(np.float64) / MS_PER_DAY
            self._recency = (0.6 * np.exp(-math.log(2) * age / 14.0) + 0.4 * t.churn).astype(np.float32)
        return self._recency

    def test_functions(self, g: Graph) -> np.ndarray:
        """Per node: test functions among its contains-children and grandchildren (one pass over the edges, once
        per generation; route reasons read it for every test file they name)."""
        if self._test_fns is None:
            t = g.nodes
            src, dst = g.edge_endpoints()
            sel = g.engine.csr.relations == CONTAINS
            src, dst = src[sel].astype(np.int64), dst[sel].astype(np.int64)
            is_fn = (t.is_test & (t.kind == KIND_CODE["fn"])).astype(np.int64)
            level1 = np.bincount(src, is_fn[dst], minlength=g.n)
            level2 = np.bincount(src, level1[dst], minlength=g.n)
            self._test_fns = (level1 + level2).astype(np.int64)
        return self._test_fns

    def neighbourhood_sums(self, g: Graph) -> tuple[np.ndarray, np.ndarray]:
        """Per node: Σ ŵ and count over its distinct structural neighbours (max ŵ per neighbour pair)."""
        if self._nsum is None:
            src, dst = g.edge_endpoints()
            rel = g.engine.csr.relations
            keep = ((STRUCTURAL_MASK >> rel.astype(np.int64)) & 1).astype(bool) & (src != dst)
            a = np.minimum(src[keep], dst[keep]).astype(np.int64)
            b = np.maximum(src[keep], dst[keep]).astype(np.int64)
            w = g.engine.weights[keep].astype(np.float64)
            key = a * max(1, g.n) + b
            order = np.lexsort((-w, key))
            key, a, b, w = key[order], a[order], b[order], w[order]
            first = run_starts(key)
            a, b, w = a[first], b[first], w[first]
            s = np.bincount(a, w, minlength=g.n) + np.bincount(b, w, minlength=g.n)
            c = np.bincount(a, minlength=g.n) + np.bincount(b, minlength=g.n)
            self._nsum = (s, c)
        return self._nsum


def facts(g: Graph) -> GraphFacts:
    f = g.extra.get("perspective_facts")
    if f is None:
        f = g.extra["perspective_facts"] = GraphFacts(g)
    return f


def _focus_words(g: Graph, i: int) -> list[str]:
    t = g.nodes
    # files and dirs: their qname is the relpath, whose directory words would make every sibling "similar"
    qname = "" if int(t.kind[i]) in (FILE, DIR) else t.qname[i]
    return node_words(t.label[i], qname, t.doc[i])


def _provided(g: Graph, i: int, backend: SemanticBackend | None) -> tuple[np.ndarray, str] | None:
    r = backend(g, i) if backend is not None else None
    return (np.asarray(r[0], np.float32), r[1]) if r is not None else None


def _cache_key(i: int, backend: SemanticBackend | None) -> tuple[int, int, int]:
    return (i, 0, 0) if backend is None else (i, id(backend), backend.epoch)


def semantic_similarity(g: Graph, i: int, backend: SemanticBackend | None = None) -> tuple[np.ndarray, str]:
    """Similarity of every node to node i by the semantic backend (float32[N]; self included); trigram similarity
    without one, or when it has no vector for node i."""
    fx = facts(g)
    key = _cache_key(i, backend)
    hit = fx.sim_cache.get(key)
    if hit is None:
        hit = _provided(g, i, backend)
        if hit is None:
            words = _focus_words(g, i)
            hit = (g.trigram.similarity(words) if words else np.zeros(g.n, np.float32), "trigram")
        fx.sim_cache.put(key, hit)
    return hit


def similar_above_floor(g: Graph, i: int, backend: SemanticBackend | None = None
                        ) -> tuple[np.ndarray, np.ndarray, str]:
    """The nodes at least SEMANTIC_FLOOR similar to node i (ascending), their similarities and the backend: what
    the semantic family and D2 of the local activation read. The trigram backend computes only the non-zero
    similarities, never an N-sized array."""
    fx = facts(g)
    key = _cache_key(i, backend)
    hit = fx.floor_cache.get(key)
    if hit is None:
        cached = fx.sim_cache.get(key)
        dense = cached if cached is not None else _provided(g, i, backend)
        if dense is not None and dense[1] != "trigram":
            if cached is None:
                fx.sim_cache.put(key, dense)
            idx = np.flatnonzero(dense[0] >= SEMANTIC_FLOOR)
            hit = (idx, dense[0][idx], dense[1])
        else:
            words = _focus_words(g, i)
            idx, val = (g.trigram.similarity_sparse(words, SEMANTIC_FLOOR) if words
                        else (np.zeros(0, np.int32), np.zeros(0, np.float32)))
            hit = (idx.astype(np.int64), val, "trigram")
        fx.floor_cache.put(key, hit)
    return hit


# -- adjacency helpers ------------------------------------------------------------------------------------------
@dataclass
class Adj:
    nbr: np.ndarray  # int32 neighbour node
    pos: np.ndarray  # int64 forward edge position
    rel: np.ndarray  # uint8 relation
    fwd: np.ndarray  # bool: True when the edge goes node -> nbr

    def sub(self, mask: int) -> Adj:
        keep = ((mask >> self.rel.astype(np.int64)) & 1).astype(bool)
        return Adj(self.nbr[keep], self.pos[keep], self.rel[keep], self.fwd[keep])


def adjacency(g: Graph, u: int, mask: int = ALL) -> Adj:
    eng = g.engine
    rel_all = eng.csr.relations
    po, tgt = eng.out_edges(u)
    pi, src = eng.in_edges(u)
    nbr = np.concatenate([tgt, src]).astype(np.int32)
    pos = np.concatenate([po, pi]).astype(np.int64)
    fwd = np.concatenate([np.ones(len(po), bool), np.zeros(len(pi), bool)])
    rel = rel_all[pos]
    if mask != ALL:
        keep = ((mask >> rel.astype(np.int64)) & 1).astype(bool)
        nbr, pos, rel, fwd = nbr[keep], pos[keep], rel[keep], fwd[keep]
    return Adj(nbr, pos, rel, fwd)


# -- local activation ---------------------------------------------------------------------------------------------
class Fused:
    """D1–D4 of one spreading run. Structural and semantic are dense arrays; causal is kept as its two runs and
    temporal as its sparse parts, both evaluated only at the nodes asked for (``at``) unless a full array is needed
    (``dim``, for compare)."""

    def __init__(self, g: Graph, want: set[str]) -> None:
        self.g = g
        self.want = want
        self.d1: np.ndarray | None = None
        self.d2: np.ndarray | None = None
        self.fwd: np.ndarray | None = None
        self.rev: np.ndarray | None = None
        self.r: np.ndarray | None = None  # temporal: recency·churn per node
        self.seed_idx = np.zeros(0, np.int64)
        self.seed_val = np.zeros(0, np.float64)
        self.cc_idx = np.zeros(0, np.int64)  # sorted co-change partners of the seeds' files
        self.cc_val = np.zeros(0, np.float64)
        self.rel_idx = np.zeros(0, np.int64)  # the seeds (ascending, unique) and their amplitudes: the relevance term
        self.rel_val = np.zeros(0, np.float32)
        self.used: list[str] = []

    def value_at(self, d: str, idx: np.ndarray) -> np.ndarray:
        z = np.zeros(len(idx), np.float64)
        if d == "structural":
            return z if self.d1 is None else self.d1[idx].astype(np.float64)
        if d == "semantic":
            return z if self.d2 is None else self.d2[idx].astype(np.float64)
        if d == "causal":
            if self.fwd is None or self.rev is None:
                return z
            return np.maximum(self.fwd[idx], 0.7 * self.rev[idx]).astype(np.float64)
        if self.r is None:
            return z
        d1 = self.value_at("structural", idx)
        base = np.maximum(np.maximum(lookup_sorted(self.seed_idx, self.seed_val, idx),
                                     lookup_sorted(self.cc_idx, self.cc_val, idx)), 0.5 * d1)
        return self.r[idx].astype(np.float64) * base

    def dim(self, d: str) -> np.ndarray:
        """The full float32[N] array of one dimension."""
        return self.value_at(d, np.arange(self.g.n, dtype=np.int64)).astype(np.float32)

    def at(self, g: Graph, idx: np.ndarray) -> np.ndarray:
        """Fused activation at the given nodes, by the same formula as ``activate`` (graph/ranking.py ``fuse``: the
        seeds' amplitudes as relevance plus the weighted dimensions, path priors, no priming)."""
        idx = np.asarray(idx, np.int64)
        if (not self.used and not len(self.rel_idx)) or len(idx) == 0:
            return np.zeros(len(idx), np.float32)
        rel = lookup_sorted(self.rel_idx, self.rel_val, idx)
        dims = {d: self.value_at(d, idx) for d in self.used}
        p = query_prior(ranking_priors(g), idx, tests_wanted=False, docs_wanted=False)
        return fuse(rel, dims, self.used, g.nodes.pagerank[idx], p)


def fused_activation(g: Graph, seeds: np.ndarray, amps: np.ndarray, dimensions: list[str] | tuple[str, ...], *,
                     max_hops: int, semantic: np.ndarray | None = None,
                     semantic_floor: tuple[np.ndarray, np.ndarray] | None = None) -> Fused:
    """D1–D4 of activation.md §2–§5 from explicit seeds (no query, no priming, no learning).

    ``semantic`` is the similarity array of the caller's backend for D2 (the 200 best ≥ 0.15 are kept);
    ``semantic_floor`` gives the same as (nodes ≥ 0.15, similarities) when the caller already has them.
    """
    eng = g.engine
    seeds = np.asarray(seeds, np.int32)
    amps = np.minimum(1.0, np.asarray(amps, np.float32))
    fu = Fused(g, set(dimensions))
    if len(seeds) == 0:
        return fu
    want = fu.want
    used = []
    by_node = np.lexsort((-amps, seeds))
    first = run_starts(seeds[by_node])
    fu.rel_idx = seeds[by_node][first].astype(np.int64)
    fu.rel_val = amps[by_node][first].astype(np.float32)
    d1_nz = np.zeros(0, np.int64)
    spread = {"decay": DECAY, "threshold": THRESHOLD, "max_hops": max_hops}
    if "structural" in want:  # D3 uses 0.5·D1 only when the structural dimension runs (as activate does)
        d1_nz, v1, _ = eng.spread_sparse(seeds, amps, mode="both", mask=STRUCTURAL_MASK, rev_mult=RHO, **spread)
        fu.d1 = scatter_dense(g.n, d1_nz, v1)
        if len(v1) and float(v1.max()) > 0:
            used.append("structural")
    if "semantic" in want and (semantic is not None or semantic_floor is not None):
        if semantic_floor is None:
            keep = np.flatnonzero(semantic >= SEMANTIC_FLOOR)
            semantic_floor = (keep, semantic[keep])
        keep, vals = semantic_floor
        if len(keep) > 200:
            best = np.argpartition(-vals, 200)[:200]
            keep, vals = keep[best], vals[best]
        if len(keep):
            fu.d2 = scatter_dense(g.n, keep, vals)
            used.append("semantic")
    causal = False
    if "causal" in want:
        fi, fv, _ = eng.spread_sparse(seeds, amps, mode="forward", mask=CAUSAL_MASK, fwd_mult=CAUSAL, **spread)
        ri, rv, _ = eng.spread_sparse(seeds, amps, mode="reverse", mask=CAUSAL_MASK, rev_mult=CAUSAL_RHO, **spread)
        fu.fwd, fu.rev = scatter_dense(g.n, fi, fv), scatter_dense(g.n, ri, rv)
        causal = len(fv) > 0 or len(rv) > 0  # spread values are > 0
    if "temporal" in want and g.has_git:
        order = np.argsort(seeds, kind="stable")
        fu.seed_idx = seeds[order].astype(np.int64)
        fu.seed_val = amps[order].astype(np.float64)
        fu.cc_idx, cc_val = co_change_partners(g, seeds, amps)
        fu.cc_val = cc_val.astype(np.float64)
        fu.r = facts(g).recency(g)
        support = sorted_unique(np.concatenate([fu.seed_idx, fu.cc_idx, d1_nz.astype(np.int64)]))
        if float(fu.value_at("temporal", support).max(initial=0.0)) > 0:
            used.append("temporal")
    if causal:
        used.append("causal")
    fu.used = [d for d in DIMENSIONS if d in used]
    return fu
