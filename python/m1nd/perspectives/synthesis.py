"""Route synthesis (perspectives.md §2) and probable connections (§6 affinity) on one graph generation.

Pure functions of a :class:`~m1nd.graph.model.Graph` plus a small :class:`SynthesisInput`; nothing here touches the
store or per-agent state, so the same input always gives the same routes, ids and order.

Pipeline for a focus ``f``:

1. Eight families propose candidates (at most 4 each, strongest by *family strength*: the product of ŵ along the
   path — times ``c`` for the causal families —, the similarity for ``semantic_affinity``, pagerank for ``hub``).
   Lens filters (kinds, path prefix, tests) are applied before the per-family cap so a filtered family still
   proposes its best admissible targets.
2. Every candidate gets the five real score terms (local activation, path coherence, novelty, anchor relevance,
   continuity) and ``score = Σ weight · term``.
3. A target proposed by several families keeps its best route and lists the others in ``also_families``; the set
   is sorted (score, family order, ext id), capped at ``top_k`` and given content-addressed ids.

The semantic backend is the trigram index (activation.md §3) until code-node embeddings exist; a provider registered
with :func:`register_semantic_backend` (``fn(graph, node_index) -> (similarity float32[N] in [0, 1], name) | None``)
takes over without changing anything else.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from m1nd.defaults import DECAY, THRESHOLD
from m1nd.graph.activation import DIMENSIONS, co_change_partners, ranking_priors, scatter_dense
from m1nd.graph.model import CAUSAL, CAUSAL_MASK, CAUSAL_RHO, RHO, STRUCTURAL_MASK, Graph, relation_name
from m1nd.graph.nodes import KIND_CODE
from m1nd.graph.ranking import fuse, query_prior
from m1nd.graph.schema import (
    CALLS,
    CO_CHANGES,
    CONTAINS,
    DECLARES_MODULE,
    IMPLEMENTS,
    IMPORTS,
    INHERITS,
    MENTIONS,
    REEXPORTS,
    REFERENCES,
    RELATIONS,
    TESTS,
    USES_CONFIG,
)
from m1nd.graph.seeds import identifier_parts, lookup_sorted, run_starts, sorted_unique
from m1nd.lru import LRU
from m1nd.perspectives.lens import FAMILIES, TERMS, Lens

ALL = 0xFFFFFFFF
STRUCT_FAMILY_MASK = sum(1 << r for r in (CONTAINS, INHERITS, IMPLEMENTS, REFERENCES, REEXPORTS, DECLARES_MODULE,
                                          MENTIONS))
CAUSAL_FAMILY_MASK = sum(1 << r for r in (IMPORTS, CALLS, INHERITS, IMPLEMENTS, REFERENCES, REEXPORTS))
FAMILY_ORDER = {f: k for k, f in enumerate(FAMILIES)}
PER_FAMILY = 4
SIBLINGS = 5
SEMANTIC_POOL = 10
SEMANTIC_FLOOR = 0.15
CAUSAL_MIN = 0.1
LOCAL_HOPS = 3
ANCHOR_HOPS = 8
HUB_DEGREE = 50
HUB_TOP_SHARE = 0.02
DIR, FILE, SECTION = KIND_CODE["dir"], KIND_CODE["file"], KIND_CODE["section"]

VERB = {
    "contains": "contains", "imports": "imports", "calls": "calls", "inherits": "inherits from",
    "implements": "implements", "references": "references", "tests": "tests", "co_changes": "changes together with",
    "reexports": "re-exports", "declares_module": "declares module", "uses_config": "reads configuration",
    "mentions": "mentions",
}
FAMILY_EXPLANATION = {
    "structural_neighbor": "Direct structural neighbour (contains, inherits, implements, references, re-exports, "
                           "mentions) or a sibling in the same container",
    "causal_downstream": "Code that depends on the focus (imports, calls, inherits or references it), up to 2 hops",
    "causal_upstream": "Code the focus depends on (what it imports, calls, inherits or references), up to 2 hops",
    "semantic_affinity": "Not connected within one hop but similar in name and purpose (semantic backend)",
    "co_change": "Files changed together with the focus's file in the git history",
    "test_coverage": "Tests exercising the focus, or the subject a test focus exercises",
    "configuration": "Configuration files read by the focus's code, or documentation sections that mention it",
    "hub": "A highly connected node (top 2 % by rank, or 50+ connections) within 2 hops",
}

SemanticProvider = Callable[[Graph, int], "tuple[np.ndarray, str] | None"]
_SEMANTIC_PROVIDERS: list[SemanticProvider] = []


_WORD = re.compile(r"[A-Za-z0-9]+")


def node_words(label: str, qname: str, doc: str) -> list[str]:
    """Identifier words of a node's text (label, qname, first doc line) for the trigram backend."""
    words = identifier_parts(label) + identifier_parts(qname)
    if doc:
        words += [w.lower() for w in _WORD.findall(doc.split("\n", 1)[0])]
    return [w for w in words if len(w) >= 2]


_PROVIDER_EPOCH = [0]  # bumped when providers change, so cached similarities are recomputed


def register_semantic_backend(fn: SemanticProvider) -> None:
    """Hook for code-node embeddings (issue 6): ``fn(g, i)`` returns (similarity to node i in [0, 1], backend name)
    or None when it has no vector for node i (the trigram backend answers then)."""
    if fn not in _SEMANTIC_PROVIDERS:
        _SEMANTIC_PROVIDERS.append(fn)
        _PROVIDER_EPOCH[0] += 1


def unregister_semantic_backend(fn: SemanticProvider) -> None:
    if fn in _SEMANTIC_PROVIDERS:
        _SEMANTIC_PROVIDERS.remove(fn)
        _PROVIDER_EPOCH[0] += 1


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
        self.sim_cache: LRU[tuple[int, int], tuple[np.ndarray, str]] = LRU(8)
        # (a node has ~2k nodes above the floor on the stdlib, up to ~25k: bounded by total entries, ~12 MB)
        self.floor_cache: LRU[tuple[int, int], tuple[np.ndarray, np.ndarray, str]] = LRU(
            1024, max_weight=1_000_000, weigh=lambda v: len(v[0]))

    def drop_query_caches(self) -> None:
        self.sim_cache.clear()
        self.floor_cache.clear()

    def recency(self, g: Graph) -> np.ndarray:
        """r(n) = 0.6·recency + 0.4·churn (activation.md §4), once per generation."""
        if self._recency is None:
            t = g.nodes
            newest = int(t.last_change_ms.max(initial=0))
            age = np.maximum(0, newest - t.last_change_ms).astype(np.float64) / 86_400_000.0
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


def _provided(g: Graph, i: int) -> tuple[np.ndarray, str] | None:
    for fn in _SEMANTIC_PROVIDERS:
        r = fn(g, i)
        if r is not None:
            return np.asarray(r[0], np.float32), r[1]
    return None


def semantic_similarity(g: Graph, i: int) -> tuple[np.ndarray, str]:
    """Similarity of every node to node i by the semantic backend (float32[N]; self included)."""
    fx = facts(g)
    key = (i, _PROVIDER_EPOCH[0])
    hit = fx.sim_cache.get(key)
    if hit is None:
        hit = _provided(g, i)
        if hit is None:
            words = _focus_words(g, i)
            hit = (g.trigram.similarity(words) if words else np.zeros(g.n, np.float32), "trigram")
        fx.sim_cache.put(key, hit)
    return hit


def similar_above_floor(g: Graph, i: int) -> tuple[np.ndarray, np.ndarray, str]:
    """The nodes at least SEMANTIC_FLOOR similar to node i (ascending), their similarities and the backend: what
    the semantic family and D2 of the local activation read. The trigram backend computes only the non-zero
    similarities, never an N-sized array."""
    fx = facts(g)
    key = (i, _PROVIDER_EPOCH[0])
    hit = fx.floor_cache.get(key)
    if hit is None:
        cached = fx.sim_cache.get(key)
        dense = cached if cached is not None else _provided(g, i)
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
        prior, testy, docsy = ranking_priors(g)
        p = query_prior(prior, testy, docsy, idx, tests_wanted=False, docs_wanted=False)
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


# -- candidates -------------------------------------------------------------------------------------------------
@dataclass
class Candidate:
    target: int
    family: str
    path: list[int]
    steps: list[tuple[int, bool]]  # per edge: (forward edge position, traversed forward?)
    strength: float
    reason: str | Callable[[], str]  # a callable is evaluated only for candidates that survive the family cap
    similarity: float | None = None  # virtual (semantic) paths


@dataclass
class SynthesisInput:
    focus: int
    lens: Lens
    anchored: bool  # mode_effective == anchored
    anchor_act: np.ndarray | None  # dense, None without anchor
    query_act: np.ndarray | None  # dense
    visited: list[int]
    seen_targets: set[int] = field(default_factory=set)
    last_family: str | None = None


@dataclass
class RouteSet:
    routes: list[dict[str, Any]]
    diagnostic: dict[str, Any] | None
    semantic_backend: str


def _label(g: Graph, i: int) -> str:
    return g.nodes.label[i]


def _edge_reason(g: Graph, u: int, v: int, pos: int) -> str:
    """Sentence for the edge at ``pos`` read in its stored direction, whichever end u/v is its source."""
    c = g.engine.csr
    rel = RELATIONS[int(c.relations[pos])].name
    src = u if int(c.indices[pos]) == v else v
    dst = v if src == u else u
    return f"{_label(g, src)} {VERB[rel]} {_label(g, dst)}"


def _best_per_target(cands: list[Candidate]) -> dict[int, Candidate]:
    best: dict[int, Candidate] = {}
    for c in cands:
        o = best.get(c.target)
        if o is None or c.strength > o.strength:
            best[c.target] = c
    return best


def _top(g: Graph, cands: list[Candidate], admissible: Callable[[int], bool], k: int = PER_FAMILY) -> list[Candidate]:
    best = [c for c in _best_per_target(cands).values() if admissible(c.target)]
    pr = g.nodes.pagerank
    best.sort(key=lambda c: (-round(c.strength, 9), -float(pr[c.target]), c.target))
    return best[:k]


def _structural(g: Graph, f: int, A: Adj) -> list[Candidate]:
    out: list[Candidate] = []
    w = g.engine.weights
    ad = A.sub(STRUCT_FAMILY_MASK)
    for v, p, fw in zip(ad.nbr.tolist(), ad.pos.tolist(), ad.fwd.tolist()):
        if v == f:
            continue
        out.append(Candidate(v, "structural_neighbor", [f, v], [(p, fw)], float(w[p]), _edge_reason(g, f, v, p)))
    # siblings: other children of f's container, by pagerank
    up = A.sub(1 << CONTAINS)
    parents = [(p, pp) for p, pp, fw in zip(up.nbr.tolist(), up.pos.tolist(), up.fwd.tolist()) if not fw]
    if parents:
        parent, ppos = parents[0]
        down = adjacency(g, parent, 1 << CONTAINS)
        sel = down.fwd & (down.nbr != f)
        kids, kpos = down.nbr[sel], down.pos[sel]
        if len(kids):
            order = np.lexsort((kids, -g.nodes.pagerank[kids]))[:SIBLINGS]
            for v, p in zip(kids[order].tolist(), kpos[order].tolist()):
                out.append(Candidate(v, "structural_neighbor", [f, parent, v], [(ppos, False), (p, True)],
                                     float(w[ppos]) * float(w[p]), f"Sibling of {_label(g, f)} in {_label(g, parent)}"))
    return out


def _causal(g: Graph, f: int, A: Adj, downstream: bool) -> list[Candidate]:
    """downstream: nodes depending on f (edges traversed backwards); upstream: what f depends on (forward)."""
    family = "causal_downstream" if downstream else "causal_upstream"
    w = g.engine.weights
    rel_all = g.engine.csr.relations
    out: list[Candidate] = []
    a1 = A.sub(CAUSAL_FAMILY_MASK)
    sel = (a1.fwd != downstream) & (a1.nbr != f)
    x1, p1 = a1.nbr[sel], a1.pos[sel]
    s1 = CAUSAL[rel_all[p1]] * w[p1]
    keep = s1 >= CAUSAL_MIN
    x1, p1, s1 = x1[keep], p1[keep], s1[keep]
    names = [RELATIONS[int(r)].name for r in rel_all[p1].tolist()]
    for x, p, s, r1 in zip(x1.tolist(), p1.tolist(), s1.tolist(), names):
        reason = (f"{_label(g, x)} {VERB[r1]} {_label(g, f)}" if downstream
                  else f"{_label(g, f)} {VERB[r1]} {_label(g, x)}")
        out.append(Candidate(x, family, [f, x], [(p, not downstream)], s, reason))
    if len(x1):
        own, x2, p2, fw2 = g.engine.incident(x1, CAUSAL_FAMILY_MASK)
        s2 = s1[own] * CAUSAL[rel_all[p2]] * w[p2]
        ok = (fw2 != downstream) & (s2 >= CAUSAL_MIN) & (x2 != f) & (x2 != x1[own])
        for k, t2, p, s in zip(own[ok].tolist(), x2[ok].tolist(), p2[ok].tolist(), s2[ok].tolist()):
            r1, r2 = names[k], RELATIONS[int(rel_all[p])].name
            rels = f"{r1}, {r2}" if r1 != r2 else r1
            reason = (f"Depends on {_label(g, f)} through {rels} (2 hops)" if downstream
                      else f"{_label(g, f)} depends on it through {rels} (2 hops)")
            x = int(x1[k])
            out.append(Candidate(t2, family, [f, x, t2], [(int(p1[k]), not downstream), (p, not downstream)],
                                 float(s), reason))
    return out


def _semantic(g: Graph, f: int, floor: tuple[np.ndarray, np.ndarray], near: np.ndarray) -> list[Candidate]:
    fx = facts(g)
    cand, val = floor
    ok = (fx.group[cand] == fx.group[f]) & (cand != f) & ~near[cand]
    cand, val = cand[ok], val[ok]
    if len(cand) > SEMANTIC_POOL:
        best = np.lexsort((cand, -val))[:SEMANTIC_POOL]
        cand, val = cand[best], val[best]
    return [Candidate(t, "semantic_affinity", [f, t], [], v, f"Similar purpose (similarity {v:.2f})", similarity=v)
            for t, v in zip(cand.tolist(), val.tolist())]


def _file(g: Graph, f: int) -> int:
    k = int(g.nodes.kind[f])
    if k in (FILE, DIR):
        return f
    fo = int(g.nodes.file_of[f])
    return fo if fo >= 0 else f


def _co_change(g: Graph, f: int, A: Adj) -> list[Candidate]:
    if int(g.nodes.kind[f]) == DIR:
        return []
    F = _file(g, f)
    t = g.nodes
    w = g.engine.weights
    base = g.engine.csr.base_weights
    ad = A.sub(1 << CO_CHANGES) if F == f else adjacency(g, F, 1 << CO_CHANGES)
    out = []
    for v, p, fw in zip(ad.nbr.tolist(), ad.pos.tolist(), ad.fwd.tolist()):
        if v == F:
            continue
        s = max(0.0, (float(base[p]) - 0.2) / 0.6)
        m = int(min(int(t.commit_count[F]), int(t.commit_count[v])))
        if m > 0 and s > 0:
            reason = f"Changed together in {max(1, round(s * m))} of {m} commits"
        else:
            reason = f"Changed together with {_label(g, F)} (strength {s:.2f})"
        out.append(Candidate(v, "co_change", [F, v], [(p, fw)], float(w[p]), reason))
    return out


def _test_functions(g: Graph, u: int) -> int:
    """Test functions a test file holds (within two levels of contains: module functions and class methods)."""
    if int(g.nodes.kind[u]) != FILE:
        return 1
    return int(facts(g).test_functions(g)[u])


def _tests(g: Graph, f: int, A: Adj) -> list[Candidate]:
    t = g.nodes
    w = g.engine.weights
    out = []
    if bool(t.is_test[f]):
        ad = A.sub(1 << TESTS)
        for v, p, fw in zip(ad.nbr.tolist(), ad.pos.tolist(), ad.fwd.tolist()):
            if fw and v != f:
                out.append(Candidate(v, "test_coverage", [f, v], [(p, True)], float(w[p]),
                                     f"Subject of test {_label(g, f)}"))
        return out
    subjects = [(f, A.sub(1 << TESTS))]
    F = _file(g, f)
    if F != f and int(t.kind[f]) != DIR:
        subjects.append((F, adjacency(g, F, 1 << TESTS)))
    for s, ad in subjects:
        for v, p, fw in zip(ad.nbr.tolist(), ad.pos.tolist(), ad.fwd.tolist()):
            if fw or v == f:
                continue
            def reason(v: int = v, s: int = s) -> str:
                k = _test_functions(g, v)
                return f"Tests {_label(g, s)} ({k} test function{'s' if k != 1 else ''})"

            out.append(Candidate(v, "test_coverage", [v, s], [(p, True)], float(w[p]), reason))
    return out


def _configuration(g: Graph, f: int, A: Adj) -> list[Candidate]:
    t = g.nodes
    w = g.engine.weights
    out = []
    cfg = 1 << USES_CONFIG
    F = _file(g, f)
    if int(t.kind[f]) != DIR:
        ad = A.sub(cfg) if F == f else adjacency(g, F, cfg)
        for v, p, fw in zip(ad.nbr.tolist(), ad.pos.tolist(), ad.fwd.tolist()):
            if fw and v != f:
                out.append(Candidate(v, "configuration", [F, v], [(p, True)], float(w[p]),
                                     f"Reads configuration {_label(g, v)}"))
            elif not fw and v != f and t.lang[F] == "config":
                out.append(Candidate(v, "configuration", [v, F], [(p, True)], float(w[p]),
                                     f"{_label(g, v)} reads configuration {_label(g, F)}"))
    # configuration reached within 2 hops: a neighbour of f that reads a config file (strongest first step each)
    xs, xp, xfw, xw = best_edges(g, f, STRUCTURAL_MASK & ~cfg, A)
    if len(xs):
        own, v2, p2, fw2 = g.engine.incident(xs, cfg)
        ok = fw2 & (v2 != f)
        for k, v, p in zip(own[ok].tolist(), v2[ok].tolist(), p2[ok].tolist()):
            x = int(xs[k])
            out.append(Candidate(v, "configuration", [f, x, v], [(int(xp[k]), bool(xfw[k])), (p, True)],
                                 float(xw[k]) * float(w[p]), f"{_label(g, x)} reads configuration {_label(g, v)}"))
    # documentation sections that mention f
    ad = A.sub(1 << MENTIONS)
    for v, p, fw in zip(ad.nbr.tolist(), ad.pos.tolist(), ad.fwd.tolist()):
        if not fw and v != f:
            out.append(Candidate(v, "configuration", [v, f], [(p, True)], float(w[p]), f"Documented in {_label(g, v)}"))
    return out


def best_edges(g: Graph, u: int, mask: int = STRUCTURAL_MASK, A: Adj | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """u's distinct neighbours (sorted) with the strongest edge to each: (nbr, position, u->nbr?, ŵ)."""
    ad = A.sub(mask) if A is not None else adjacency(g, u, mask)
    keep = ad.nbr != u
    nb, pos, fw = ad.nbr[keep].astype(np.int64), ad.pos[keep], ad.fwd[keep]
    wv = g.engine.weights[pos].astype(np.float64)
    if len(nb) == 0:
        return nb, pos, fw, wv
    order = np.lexsort((pos, -wv, nb))
    nb, pos, fw, wv = nb[order], pos[order], fw[order], wv[order]
    first = run_starts(nb)
    return nb[first], pos[first], fw[first], wv[first]


def _hubs(g: Graph, f: int, A: Adj) -> list[Candidate]:
    fx = facts(g)
    fn, fp, ffw, fwv = best_edges(g, f, STRUCTURAL_MASK, A)
    one = fn[fx.hub[fn]]
    own2, nb2, pos2, fw2 = g.engine.incident(fn, STRUCTURAL_MASK)
    hub2 = fx.hub[nb2]
    own2, nb2, pos2, fw2 = own2[hub2], nb2[hub2], pos2[hub2], fw2[hub2]
    cand = sorted_unique(np.concatenate([one, nb2.astype(np.int64)]))
    cand = cand[cand != f]
    if len(cand) == 0:
        return []
    pr = g.nodes.pagerank
    cand = cand[np.lexsort((cand, -pr[cand]))][: PER_FAMILY * 2]
    direct = set(one.tolist())
    out = []
    for t_ in cand.tolist():
        deg = int(fx.deg[t_])
        why = "top 2 % by rank" if fx.hub_by_rank[t_] else f"degree ≥ {HUB_DEGREE}"
        reason = f"Hub: {_label(g, t_)} connects to {deg} nodes ({why})"
        if t_ in direct:
            k = int(np.searchsorted(fn, t_))
            if k < len(fn) and fn[k] == t_:
                out.append(Candidate(t_, "hub", [f, t_], [(int(fp[k]), bool(ffw[k]))], float(pr[t_]), reason))
            continue
        rows = np.flatnonzero((nb2 == t_) & (fn[own2] != t_))
        if len(rows) == 0:
            continue
        s = fwv[own2[rows]] * g.engine.weights[pos2[rows]]
        j = int(rows[np.lexsort((fn[own2[rows]], -s))[0]])
        k = int(own2[j])
        out.append(Candidate(t_, "hub", [f, int(fn[k]), t_], [(int(fp[k]), bool(ffw[k])), (int(pos2[j]), bool(fw2[j]))],
                             float(pr[t_]), reason))
    return out


# -- scoring and assembly ---------------------------------------------------------------------------------------
def route_id(focus_ext: str, target_ext: str, family: str) -> str:
    return "R_" + hashlib.sha256(f"{focus_ext}\0{target_ext}\0{family}".encode()).hexdigest()[:8]


def peekable(g: Graph, i: int) -> bool:
    t = g.nodes
    return (int(t.kind[i]) != DIR and bool(t.source_path[i]) and int(t.line_start[i]) >= 1
            and int(t.line_end[i]) >= int(t.line_start[i]))


def path_coherence(weights: list[float], similarity: float | None) -> float:
    if similarity is not None:
        return 0.5 * similarity
    if not weights:
        return 0.0
    gm = math.exp(sum(math.log(max(1e-9, x)) for x in weights) / len(weights))
    return gm / (1.0 + 0.1 * (len(weights) - 1))


def synthesize(g: Graph, inp: SynthesisInput) -> RouteSet:
    f = inp.focus
    lens = inp.lens
    t = g.nodes
    w = g.engine.weights
    fams = [fam for fam in FAMILIES if fam in lens.route_families]
    floor_idx, floor_val, backend = similar_above_floor(g, f)
    floor = (floor_idx, floor_val)
    A = adjacency(g, f)
    near = np.zeros(g.n, bool)
    near[A.nbr] = True
    near[f] = True

    kind_codes = {KIND_CODE[k] for k in lens.node_kinds}
    prefix = lens.path_prefix

    def admissible_for(family: str) -> Callable[[int], bool]:
        def ok(i: int) -> bool:
            if kind_codes and int(t.kind[i]) not in kind_codes:
                return False
            if prefix and not t.source_path[i].startswith(prefix):
                return False
            return lens.include_tests or family == "test_coverage" or not bool(t.is_test[i])
        return ok

    raw_total = 0
    cands: list[Candidate] = []
    for fam in fams:
        if fam == "structural_neighbor":
            got = _structural(g, f, A)
        elif fam == "causal_downstream":
            got = _causal(g, f, A, True)
        elif fam == "causal_upstream":
            got = _causal(g, f, A, False)
        elif fam == "semantic_affinity":
            got = _semantic(g, f, floor, near)
        elif fam == "co_change":
            got = _co_change(g, f, A)
        elif fam == "test_coverage":
            got = _tests(g, f, A)
        elif fam == "configuration":
            got = _configuration(g, f, A)
        else:
            got = _hubs(g, f, A)
        got = [c for c in got if c.target != f]
        raw_total += len(got)
        for c in _top(g, got, admissible_for(fam)):
            if callable(c.reason):
                c.reason = c.reason()
            cands.append(c)

    if not cands:
        if g.n == 0:
            diag = {"reason": "graph_empty", "suggestion": "call ingest with path=<repo root>"}
        elif raw_total:
            diag = {"reason": "filtered_out", "suggestion": "the lens filters removed every route; start a perspective "
                    "with a wider lens (fewer node_kinds, no path_prefix, include_tests=true)"}
        else:
            diag = {"reason": "dead_end", "suggestion": "nothing connects to this focus; call perspective_back, or "
                    "perspective_start with other words"}
        return RouteSet([], diag, backend)

    targets = np.asarray([c.target for c in cands], np.int64)
    uniq = sorted_unique(targets)
    fused = fused_activation(g, np.asarray([f]), np.asarray([1.0]), lens.dimensions, max_hops=LOCAL_HOPS,
                             semantic_floor=floor)
    L = dict(zip(uniq.tolist(), fused.at(g, uniq).tolist()))
    lmax = max(L.values()) if L else 0.0
    visited = set(inp.visited)
    others = np.asarray(sorted(visited - {f}), np.int64)
    qa = inp.query_act
    qmax = float(qa.max(initial=0.0)) if qa is not None else 0.0
    weights = lens.weights(inp.anchored)

    beside = np.zeros(g.n, bool)  # adjacent to a visited node other than f
    if len(others):
        beside[g.engine.incident(others, ALL)[1]] = True
    novelty: dict[int, float] = {}
    for x in uniq.tolist():
        if x in visited:
            novelty[x] = 0.0
        elif x in inp.seen_targets or beside[x]:
            novelty[x] = 0.5
        else:
            novelty[x] = 1.0

    scored: list[tuple[float, Candidate, dict[str, float]]] = []
    for c in cands:
        ws = [float(w[p]) for p, _ in c.steps]
        terms = {
            "local_activation": (L[c.target] / lmax) if lmax > 0 else 0.0,
            "path_coherence": path_coherence(ws, c.similarity),
            "novelty": novelty[c.target],
            "anchor_relevance": float(inp.anchor_act[c.target]) if inp.anchor_act is not None else 0.0,
            "continuity": (0.7 * (float(qa[c.target]) / qmax if qmax > 0 else 0.0)
                           + 0.3 * (1.0 if inp.last_family == c.family else 0.0)),
        }
        score = round(sum(weights[k] * terms[k] for k in TERMS), 4)
        scored.append((score, c, terms))

    by_target: dict[int, list[tuple[float, Candidate, dict[str, float]]]] = {}
    for s in scored:
        by_target.setdefault(s[1].target, []).append(s)
    chosen = []
    for x, lst in by_target.items():
        lst.sort(key=lambda s: (-s[0], FAMILY_ORDER[s[1].family]))
        if t.is_test[x] or t.is_test[f]:
            # between a test and its subject, a route found both as a call and through the tests edge is reported
            # as test coverage: the more specific fact (receiver types now link a test's calls to what it tests)
            lst.sort(key=lambda s: s[1].family != "test_coverage")
        best = lst[0]
        also = sorted({s[1].family for s in lst[1:]} - {best[1].family}, key=FAMILY_ORDER.__getitem__)
        chosen.append((best, also))
    chosen.sort(key=lambda b: (-b[0][0], FAMILY_ORDER[b[0][1].family], t.ext_id[b[0][1].target]))
    chosen = chosen[: lens.top_k]

    fext = t.ext_id[f]
    routes: list[dict[str, Any]] = []
    used_ids: set[str] = set()
    rel_all = g.engine.csr.relations
    for k, ((score, c, terms), also) in enumerate(chosen, start=1):
        rid = route_id(fext, t.ext_id[c.target], c.family)
        base, n = rid, 2
        while rid in used_ids:
            rid = f"{base}_{n}"
            n += 1
        used_ids.add(rid)
        if c.similarity is not None:
            rels = ["similar_to"]
        else:
            rels = [relation_name(int(rel_all[p]), forward=fw) for p, fw in c.steps]
        routes.append({
            "route_id": rid, "index": k, "target_node": t.ext_id[c.target], "target_label": t.label[c.target],
            "target_kind": t.kind_name(c.target), "family": c.family, "score": score,
            "path": [t.ext_id[i] for i in c.path], "path_labels": [t.label[i] for i in c.path],
            "path_relations": rels, "reason": c.reason, "peek_available": peekable(g, c.target),
            "also_families": also, "strength": round(c.strength, 6),
            "breakdown": {k2: round(v, 4) for k2, v in terms.items()},
            "weights": {k2: round(v, 4) for k2, v in weights.items()},
        })
    return RouteSet(routes, None, backend)


def path_preview(labels: list[str]) -> list[str]:
    return labels if len(labels) <= 6 else [*labels[:2], "…", *labels[-2:]]


def public_route(r: dict[str, Any]) -> dict[str, Any]:
    """The route object of every route list (perspectives.md §2)."""
    return {"route_id": r["route_id"], "index": r["index"], "target_node": r["target_node"],
            "target_label": r["target_label"], "target_kind": r["target_kind"], "family": r["family"],
            "score": r["score"], "path_preview": path_preview(r["path_labels"]), "reason": r["reason"],
            "peek_available": r["peek_available"], "also_families": list(r["also_families"])}


# -- anchor caches ------------------------------------------------------------------------------------------------
def anchor_caches(g: Graph, anchor: int) -> tuple[np.ndarray, np.ndarray]:
    """anchor_act (§2 kernel from the anchor, 8 hops, threshold 0.01; 1.0 at the anchor) and undirected hop
    distances (≤ 9, -1 beyond)."""
    act, _ = g.engine.spread([anchor], [1.0], decay=DECAY, threshold=0.01, max_hops=ANCHOR_HOPS, mode="both",
                             mask=STRUCTURAL_MASK, rev_mult=RHO)
    act[anchor] = 1.0
    hops = g.engine.bfs_hops(anchor, max_hops=ANCHOR_HOPS + 1, mode="both", mask=STRUCTURAL_MASK)
    return act, hops


def region(g: Graph, anchor: int, limit: int = 2000) -> list[int]:
    """The anchor's 2-hop neighbourhood (undirected, structural), nearest first, at most ``limit`` nodes."""
    hops = g.engine.bfs_hops(anchor, max_hops=2, mode="both", mask=STRUCTURAL_MASK)
    idx = np.nonzero(hops >= 0)[0]
    idx = idx[np.lexsort((idx, hops[idx]))]
    return idx[:limit].tolist()


# -- affinity -----------------------------------------------------------------------------------------------------
MAX_TWO_HOP = 500
SEMANTIC_NEAREST = 20


def affinity(g: Graph, x: int, top_k: int) -> tuple[list[dict[str, Any]], str, dict[str, Any] | None]:
    """Probable connections of node x: same kind group, never directly connected (perspectives.md §6)."""
    fx = facts(g)
    t = g.nodes
    w = g.engine.weights
    nsum, ncount = fx.neighbourhood_sums(g)
    fl_idx, fl_val, backend = similar_above_floor(g, x)
    gx = fx.group[x]
    nb, _pos, _fw, pw = best_edges(g, x)
    direct = np.zeros(g.n, bool)  # fresh zero pages: only the touched ones cost anything
    direct[adjacency(g, x).nbr] = True
    direct[x] = True
    # candidates sharing a neighbour with x (same kind group, not x, not directly connected), with the number of
    # shared neighbours and Σ min(ŵ(x,s), ŵ(s,c)) over them — computed on the candidates only, never over N
    cand = np.zeros(0, np.int64)
    shared = np.zeros(0, np.int64)
    summin = np.zeros(0, np.float64)
    if len(nb):
        own, c, pos, _ = g.engine.incident(nb, STRUCTURAL_MASK)
        ok = (c != x) & (fx.group[c] == gx) & ~direct[c]
        own, c, wc = own[ok], c[ok].astype(np.int64), w[pos[ok]].astype(np.float64)
        # one contribution per (shared neighbour, candidate) pair: the strongest edge between them
        key = own.astype(np.int64) * max(1, g.n) + c
        order = np.lexsort((-wc, key))
        key, own, c, wc = key[order], own[order], c[order], wc[order]
        first = run_starts(key)
        own, c, wc = own[first], c[first], wc[first]
        cand, inv = np.unique(c, return_inverse=True)
        shared = np.bincount(inv, minlength=len(cand))
        summin = np.bincount(inv, np.minimum(pw[own], wc), minlength=len(cand))
    two_hop = cand
    if len(two_hop) > MAX_TWO_HOP:
        two_hop = two_hop[np.lexsort((cand, -summin, -shared))[:MAX_TWO_HOP]]
    sem_ok = (fx.group[fl_idx] == gx) & ~direct[fl_idx]
    sem_pool, sem_val = fl_idx[sem_ok], fl_val[sem_ok]
    if len(sem_pool) > SEMANTIC_NEAREST:
        sem_pool = sem_pool[np.lexsort((sem_pool, -sem_val))[:SEMANTIC_NEAREST]]
    pool = sorted_unique(np.concatenate([two_hop, sem_pool.astype(np.int64)]))
    sx = float(pw.sum()) if len(nb) else 0.0
    inter, sh_pool = lookup_sorted(cand, summin, pool), lookup_sorted(cand, shared, pool)
    union = sx + nsum[pool] - inter
    s_nb = np.where((union > 0) & (inter > 0), inter / np.where(union > 0, union, 1.0), 0.0)
    s_sem = lookup_sorted(fl_idx, fl_val, pool).astype(np.float64)  # 0 below the floor
    both = (s_nb > 0) & (s_sem > 0)
    strength = 1.0 - (1.0 - s_nb) * (1.0 - s_sem)
    strength = np.minimum(0.85, np.where(both, strength, np.minimum(0.6, strength)))
    keep = strength >= 0.15
    pool, strength, s_nb, s_sem, sh_pool = pool[keep], strength[keep], s_nb[keep], s_sem[keep], sh_pool[keep]
    rank = sorted(range(len(pool)), key=lambda k: (-round(float(strength[k]), 6), t.ext_id[int(pool[k])]))
    cands = []
    for k in rank[:top_k]:
        c_, a_, b_ = int(pool[k]), float(s_nb[k]), float(s_sem[k])
        reasons = []
        if a_ > 0:
            sh = int(sh_pool[k])
            reasons.append(f"Shares {sh} of {int(len(nb) + int(ncount[c_]) - sh)} neighbours (weighted {a_:.2f})")
        if b_ > 0:
            reasons.append(f"Similar purpose by embedding ({b_:.2f})" if backend == "embedding"
                           else f"Similar name and purpose ({backend} similarity {b_:.2f})")
        cands.append({"node_id": t.ext_id[c_], "label": t.label[c_], "kind": t.kind_name(c_),
                      "strength": round(float(strength[k]), 4), "reason": "; ".join(reasons),
                      "sources": {"neighbourhood": round(a_, 4), "semantic": round(b_, 4)}, "is_hypothetical": True})
    diag = None
    if not cands:
        diag = {"reason": "no_affinity",
                "suggestion": ("no node of the same kind shares enough neighbours or purpose with this target; "
                               "try another route, or missing for structural holes")}
    return cands, backend, diag
