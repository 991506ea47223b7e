"""Four-dimension activation and fusion (spec activation.md §2–§7).

``run_activation`` computes everything ``activate``, ``warmup`` and ``missing`` need and returns plain arrays;
``activation_response`` shapes the ``activate`` result. Learning side effects (co-activation LTP) are the caller's
business, so ``missing`` and ``warmup`` reuse this without writing anything.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from m1nd.defaults import ACTIVATE_MAX_HOPS, ACTIVATE_MAX_SEEDS, ACTIVATE_TOP_K, DECAY, THRESHOLD
from m1nd.graph import ranking as R
from m1nd.graph.lexicon import TermIndex, fallback_terms
from m1nd.graph.model import CAUSAL, CAUSAL_MASK, CAUSAL_RHO, RHO, STRUCTURAL_MASK, Graph
from m1nd.graph.nodes import KIND_CODE
from m1nd.graph.schema import CO_CHANGES
from m1nd.graph.seeds import (
    SEED_POOL,
    Seeds,
    capped,
    direct_hits,
    lookup_sorted,
    run_starts,
    sorted_unique,
    tokenize,
)
from m1nd.timeutil import MS_PER_DAY

DIMENSIONS = ("structural", "semantic", "temporal", "causal")
ZERO16 = np.zeros(16, np.float32)


@dataclass
class ActivationParams:
    top_k: int = ACTIVATE_TOP_K
    dimensions: tuple[str, ...] = DIMENSIONS
    max_hops: int = ACTIVATE_MAX_HOPS
    decay: float = DECAY
    threshold: float = THRESHOLD
    max_seeds: int = ACTIVATE_MAX_SEEDS
    node_kinds: tuple[str, ...] = ()
    path_prefix: str | None = None
    history_before: int | None = None  # only commits older than this (s) feed the history field (evaluations)


@dataclass
class ActivationRun:
    seeds: Seeds
    dims: dict[str, np.ndarray]  # dimension -> float32[N] (zeros when inactive/disabled)
    used: list[str]
    score: np.ndarray  # fused score before priming
    activation: np.ndarray  # after priming
    primed: np.ndarray  # P(n)
    semantic_backend: str
    boosted_nodes: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    support: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # ascending nodes with score > 0


def priming_field(g: Graph, boosts: dict[int, float]) -> np.ndarray:
    """P(n) = max(b(n), max over neighbours m of b(m)·ŵ(m,n)·DECAY) (edges either way)."""
    p = np.zeros(g.n, np.float32)
    if not boosts:
        return p
    w = g.engine.weights
    for m, b in boosts.items():
        if m >= g.n:
            continue
        p[m] = max(p[m], b)
        pos, tgt = g.engine.out_edges(m)
        if len(tgt):
            np.maximum.at(p, tgt, (b * w[pos] * DECAY).astype(np.float32))
        pos, src = g.engine.in_edges(m)
        if len(src):
            np.maximum.at(p, src, (b * w[pos] * DECAY).astype(np.float32))
    return p


def scatter_dense(n: int, idx: np.ndarray, vals: np.ndarray) -> np.ndarray:
    # np.zeros maps fresh zero pages lazily: only the pages the scatter touches cost anything
    out = np.zeros(n, np.float32)
    out[idx] = vals
    return out


def ranking_priors(g: Graph) -> R.Priors:
    """Per-generation path priors (tests, docs, vendored, generated), cached on the graph."""
    pr = g.extra.get("priors")
    if pr is None:
        pr = g.extra["priors"] = R.priors(g.nodes)
    return pr


def dense_prior(g: Graph, tests_wanted: bool, docs_wanted: bool, decls_wanted: bool = False) -> np.ndarray:
    """prior(n) for every node, one array per (tests wanted, docs wanted) and generation: the semantic scores of a
    query cover every node, and this keeps that product off a per-query pass over the path priors."""
    key = ("dense_prior", tests_wanted, docs_wanted, decls_wanted)
    p = g.extra.get(key)
    if p is None:
        p = g.extra[key] = R.query_prior(ranking_priors(g), np.arange(g.n), tests_wanted=tests_wanted,
                                         docs_wanted=docs_wanted, decls_wanted=decls_wanted)
    return p


def lexicon_of(g: Graph) -> TermIndex:
    """The graph's BM25F index; a graph built without stored terms gets one over names, paths, signatures and
    docstrings."""
    if g.lexicon is None:
        g.lexicon = TermIndex.build(g.nodes, fallback_terms(g.nodes))
    return g.lexicon


def query_seeds(g: Graph, query: str, *, max_seeds: int = 24, per_file: int = 4, min_score: float = 0.0,
                semantic: np.ndarray | Callable[[], np.ndarray | None] | None = None,
                history_before: int | None = None) -> Seeds:
    """Relevance (ranking.py) on every node some query term reaches, and the seeds chosen from it: the best
    ``max_seeds`` (at most ``per_file`` per file), ordered by relevance, pagerank, id. ``semantic`` may be a callable
    resolved after the lexical stage (a query embedding computed meanwhile in another thread)."""
    t = g.nodes
    tokens = tokenize(query)
    direct = direct_hits(g.seeds, query)
    tests_wanted, docs_wanted = R.wants(query)
    decls_wanted = R.wants_declarations(query)
    rv = R.relevance(lexicon_of(g), t, ranking_priors(g), query, tests_wanted=tests_wanted, docs_wanted=docs_wanted,
                     history=g.history, before=history_before, decls_wanted=decls_wanted)
    if callable(semantic):
        semantic = semantic()
    cand, rel = rv.nodes, rv.values
    if direct:
        d = np.asarray(sorted(set(direct)), np.int64)
        cand = sorted_unique(np.concatenate([cand, d]))
        rel = (0.5 * lookup_sorted(rv.nodes, rv.values, cand)).astype(np.float32)
        rel[np.searchsorted(cand, d)] = 1.0
    lex = scatter_dense(g.n, cand, rel)
    if semantic is not None:
        sem = (semantic * dense_prior(g, tests_wanted, docs_wanted, decls_wanted)).astype(np.float32)
        seed = R.sem_join(lex, sem)
        cand = np.flatnonzero(seed > 0)
    else:
        seed = lex
    if min_score > 0:
        cand = cand[seed[cand] >= min_score]
    values = seed[cand]
    if len(cand) > SEED_POOL:
        kth = np.partition(values, len(values) - SEED_POOL)[len(values) - SEED_POOL]
        pools = [cand[values >= kth], cand]
    else:
        pools = [cand]
    chosen: list[int] = []
    for pool in pools:
        order = pool[np.lexsort((pool, -t.pagerank[pool], -seed[pool]))]
        chosen, exhausted = capped(t, order.tolist(), max_seeds, per_file)
        if not exhausted:
            break
    nodes = np.asarray(chosen, dtype=np.int32)
    via = []
    for i in chosen:
        has_lex = lex[i] > 0
        has_sem = semantic is not None and semantic[i] > 0
        via.append("both" if has_lex and has_sem else "semantic" if has_sem else "lexical")
    return Seeds(nodes=nodes, scores=seed[nodes].astype(np.float32), via=via, lex=seed.astype(np.float32),
                 tokens=tokens, direct=direct, semantic=semantic, history=rv.history)


def closest_ids(g: Graph, text: str, n: int = 5) -> list[str]:
    """'Did you mean' suggestions for an unknown id: the ranking's seeds for the id's words, then close ext ids."""
    import difflib

    t = g.nodes
    out: list[str] = []
    tail = text.split("::")[-1] if "::" in text else text
    if tokenize(tail) or tokenize(text):
        s = query_seeds(g, text.replace("::", " "), max_seeds=n * 2, per_file=n)
        out.extend(t.ext_id[i] for i in s.nodes.tolist())
    if len(out) < n and t.n < 300_000:
        out.extend(difflib.get_close_matches(text, t.ext_id, n=n, cutoff=0.6))
    return list(dict.fromkeys(out))[:n]


def run_activation(g: Graph, query: str, params: ActivationParams, *, boosts: dict[int, float] | None = None,
                   semantic_scores: np.ndarray | Callable[[], np.ndarray | None] | None = None,
                   semantic_backend: str | None = None,
                   feedback: tuple[dict[int, float], dict[int, float]] | None = None) -> ActivationRun:
    """Relevance → seeds → D1..D4 → fusion (ranking.py) → priming. ``semantic_scores`` (sem(n) from an embedding
    model) is optional; it may be a callable (e.g. the result of a query embedding running in another thread),
    resolved after the lexical stage.

    Every dimension is computed on the nodes it reaches (a query reaches a few thousand of 10^5 nodes) and fusion
    runs on the union of those supports; the dense arrays of the result are filled by scatter only."""
    t = g.nodes
    seeds = query_seeds(g, query, max_seeds=params.max_seeds, semantic=semantic_scores,
                        history_before=params.history_before)
    semantic_scores = seeds.semantic
    n = g.n
    backend = semantic_backend or ("embedding" if semantic_scores is not None else "trigram")
    if len(seeds.nodes) == 0:
        return ActivationRun(seeds, {d: np.zeros(n, np.float32) for d in DIMENSIONS}, [], np.zeros(n, np.float32),
                             np.zeros(n, np.float32), np.zeros(n, np.float32), backend)
    eng = g.engine
    want = set(params.dimensions)
    sparse: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # dimension -> (ascending nodes, values > 0)
    spread = {"decay": params.decay, "threshold": params.threshold, "max_hops": params.max_hops}
    # D1 structural: both directions, ρ on reverse edges, hub damping.
    if "structural" in want:
        i1, v1, _ = eng.spread_sparse(seeds.nodes, seeds.scores, mode="both", mask=STRUCTURAL_MASK, rev_mult=RHO,
                                      **spread)
        sparse["structural"] = (i1, v1)
    # D2 semantic: the 200 most similar nodes (≥ 0.15 for the trigram backend).
    if "semantic" in want:
        if semantic_scores is not None:
            top = np.sort(eng.top_k(semantic_scores, 200))  # values > 0, best first (kernel)
            sparse["semantic"] = (top, semantic_scores[top])
        else:
            sparse["semantic"] = g.trigram.top_similar(seeds.tokens, 200, 0.15)
    # D4 causal: forward with c, reverse with c·ρ.
    if "causal" in want:
        fi, fv, _ = eng.spread_sparse(seeds.nodes, seeds.scores, mode="forward", mask=CAUSAL_MASK, fwd_mult=CAUSAL,
                                      **spread)
        ri, rv, _ = eng.spread_sparse(seeds.nodes, seeds.scores, mode="reverse", mask=CAUSAL_MASK,
                                      rev_mult=CAUSAL_RHO, **spread)
        ci = sorted_unique(np.concatenate([fi, ri]))
        fwd, rev = np.zeros(len(ci), np.float32), np.zeros(len(ci), np.float32)
        fwd[np.searchsorted(ci, fi)] = fv
        rev[np.searchsorted(ci, ri)] = rv
        sparse["causal"] = (ci, np.maximum(fwd, 0.7 * rev).astype(np.float32))
    # D3 temporal (inactive without git data).
    if "temporal" in want and g.has_git:
        sparse["temporal"] = temporal_sparse(g, seeds, sparse.get("structural"))
    dims = {d: scatter_dense(n, *sparse[d]) if d in sparse else np.zeros(n, np.float32) for d in DIMENSIONS}
    used = [d for d in DIMENSIONS if d in sparse and float(sparse[d][1].max(initial=0.0)) > 0.0]
    rel_nodes = np.flatnonzero(seeds.lex > 0)
    hist_files = seeds.history[0] if seeds.history is not None else rel_nodes[:0]
    support = sorted_unique(np.concatenate([rel_nodes, hist_files, *[sparse[d][0] for d in used]]))
    tests_wanted, docs_wanted = R.wants(query)
    p = R.query_prior(ranking_priors(g), support, tests_wanted=tests_wanted, docs_wanted=docs_wanted,
                      decls_wanted=R.wants_declarations(query))
    h = None
    if seeds.history is not None:  # H of each node's file (a file node is its own file)
        fo = t.file_of[support].astype(np.int64)
        h = lookup_sorted(*seeds.history, np.where(fo >= 0, fo, support))
    sub = R.fuse(seeds.lex[support], {d: dims[d][support] for d in used}, used, t.pagerank[support], p, h)
    if feedback:  # learned verdicts on the nodes themselves (learning.feedback_factors)
        sub = apply_feedback(support, sub, *feedback)
    support = support[sub > 0]
    sub = sub[sub > 0]
    primed = priming_field(g, boosts or {})
    score = scatter_dense(n, support, sub)
    activation = scatter_dense(n, support, np.minimum(1.0, sub * (1.0 + primed[support])))  # priming never adds a node
    return ActivationRun(seeds, dims, used, score, activation, primed, backend,
                         boosted_nodes=int(np.count_nonzero(primed[support])), support=support.astype(np.int64))


LIFT_SPAN = 0.6


def _sparse(d: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    keys = np.fromiter(d, np.int64, count=len(d))
    vals = np.fromiter(d.values(), np.float32, count=len(d))
    order = np.argsort(keys)
    return keys[order], vals[order]


def apply_feedback(support: np.ndarray, sub: np.ndarray, factor: dict[int, float], lift: dict[int, float]
                   ) -> np.ndarray:
    """Scores after the learned verdicts: the global factor (lowering scales; raising is 1 − (1 − s)^factor,
    bounded by 1 so a lifted node never ties at a cap), then the same-query lift (a move of up to LIFT_SPAN of
    the distance toward 1, or toward 0)."""
    sub = sub.astype(np.float32)
    if factor:
        f = lookup_sorted(*_sparse(factor), support)
        raised = 1.0 - np.power(1.0 - np.minimum(sub, 1.0), np.maximum(f, 1.0))
        sub = np.where(f <= 0, sub, np.where(f < 1, sub * f, raised)).astype(np.float32)
    if lift:
        q = lookup_sorted(*_sparse(lift), support)
        up = sub + (1.0 - sub) * LIFT_SPAN * np.maximum(q, 0.0)
        sub = np.where(q < 0, sub * (1.0 + LIFT_SPAN * q), up).astype(np.float32)
    return sub


def recency_profile(g: Graph) -> np.ndarray:
    """r(n) = 0.6·recency + 0.4·churn, fixed per graph generation (cached on the graph)."""
    r = g.extra.get("recency")
    if r is None:
        t = g.nodes
        newest = int(t.last_change_ms.max(initial=0))
        age_days = np.maximum(0, newest - t.last_change_ms).astype(np.float64) / MS_PER_DAY
        recency = np.exp(-math.log(2) * age_days / 14.0)
        r = g.extra["recency"] = (0.6 * recency + 0.4 * t.churn).astype(np.float32)
    return r


def co_change_partners(g: Graph, nodes: np.ndarray, amps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """max over the given nodes n of amp(n)·ŵ(co_changes edge of n's file, either direction), per partner:
    (ascending partner nodes, values)."""
    t = g.nodes
    fo = t.file_of[nodes]
    files = np.where(fo >= 0, fo, nodes).astype(np.int64)
    own, nbr, pos, _ = g.engine.incident(files, 1 << CO_CHANGES)
    if len(nbr) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    val = (np.asarray(amps, np.float32)[own] * g.engine.weights[pos]).astype(np.float32)
    order = np.lexsort((-val, nbr))  # per partner, the strongest first
    nbr, val = nbr[order], val[order]
    first = run_starts(nbr)
    return nbr[first].astype(np.int64), val[first]


def temporal_sparse(g: Graph, seeds: Seeds, d1: tuple[np.ndarray, np.ndarray] | None
                    ) -> tuple[np.ndarray, np.ndarray]:
    """D3 = r(n)·max(seed(n), co-change(n), 0.5·D1(n)) on its support (seeds, co-change partners, D1's nodes)."""
    cc_i, cc_v = co_change_partners(g, seeds.nodes, seeds.scores)
    d1_i, d1_v = d1 if d1 is not None else (np.zeros(0, np.int64), np.zeros(0, np.float32))
    sup = sorted_unique(np.concatenate([seeds.nodes.astype(np.int64), cc_i, d1_i.astype(np.int64)]))
    base = np.zeros(len(sup), np.float32)
    np.maximum.at(base, np.searchsorted(sup, seeds.nodes), seeds.scores)  # a node may be a seed once only
    cc = np.zeros(len(sup), np.float32)
    cc[np.searchsorted(sup, cc_i)] = cc_v
    half = np.zeros(len(sup), np.float32)
    half[np.searchsorted(sup, d1_i)] = 0.5 * d1_v
    val = (recency_profile(g)[sup] * np.maximum(np.maximum(base, cc), half)).astype(np.float32)
    keep = val > 0
    return sup[keep], val[keep]


def result_order(g: Graph, values: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Sort candidate indices by value desc, pagerank desc, ext id (index) asc."""
    return candidates[np.lexsort((candidates, -g.nodes.pagerank[candidates], -values[candidates]))]


def implementation_mask(g: Graph) -> np.ndarray:
    """Per-generation mask of the nodes in implementation code (ranking.implementation_mask), cached on the graph."""
    m = g.extra.get("implementation")
    if m is None:
        m = g.extra["implementation"] = R.implementation_mask(g.nodes)
    return m


def filter_mask(g: Graph, node_kinds: tuple[str, ...], path_prefix: str | None, code_only: bool = False
                ) -> np.ndarray | None:
    if not node_kinds and not path_prefix and not code_only:
        return None
    keep = implementation_mask(g).copy() if code_only else np.ones(g.n, np.bool_)
    if node_kinds:
        codes = np.asarray([KIND_CODE[k] for k in node_kinds], np.uint8)
        keep &= np.isin(g.nodes.kind, codes)
    if path_prefix:
        pref = path_prefix.lstrip("./")
        keep &= np.fromiter((p.startswith(pref) for p in g.nodes.source_path), np.bool_, count=g.n)
    return keep


def ranked(g: Graph, run: ActivationRun, top_k: int, node_kinds: tuple[str, ...] = (),
           path_prefix: str | None = None, per_file: int = 0, code_only: bool = False) -> tuple[np.ndarray, int]:
    """Indices of the top results (after filters) and the total number activated. With ``per_file`` > 0, at most
    that many nodes of one file come before every other file has had its turn (the overflow follows, in order):
    ten methods of one file would otherwise hide the eleventh file, which is often the one wanted."""
    act = run.activation
    cand = run.support[act[run.support] > 0]
    keep = filter_mask(g, node_kinds, path_prefix, code_only)
    if keep is not None:
        cand = cand[keep[cand]]
    total = len(cand)
    pool_size = max(8 * top_k, 200) if per_file else 4 * top_k
    if total > pool_size:  # partial selection first: sorting 50k candidates per query is wasted work
        part = np.argpartition(-act[cand], pool_size)[:pool_size]
        cand = cand[part]
    order = result_order(g, act, cand)
    if per_file and len(order):
        fo = g.nodes.file_of[order].astype(np.int64)
        fo = np.where(fo >= 0, fo, order)
        # rank of each node within its file, in result order
        by_file = np.lexsort((np.arange(len(order)), fo))
        sf = fo[by_file]
        starts = np.flatnonzero(run_starts(sf))
        counts = np.diff(np.append(starts, len(sf)))
        within = np.empty(len(order), np.int64)
        within[by_file] = np.arange(len(order)) - np.repeat(starts, counts)
        order = np.concatenate([order[within < per_file], order[within >= per_file]])
    return order[:top_k], total


FILE_VIEW_NODES = 3


def file_view(g: Graph, run: ActivationRun, top_k: int, node_kinds: tuple[str, ...] = (),
              path_prefix: str | None = None, code_only: bool = False) -> list[dict[str, Any]]:
    """The top_k distinct files in order of their best node, each with up to FILE_VIEW_NODES of its best nodes (a
    file node itself is listed only when nothing inside it scored). ``score`` is the best node's activation."""
    order, _ = ranked(g, run, max(top_k * 40, 400), node_kinds, path_prefix, code_only=code_only)
    t = g.nodes
    groups: dict[int, list[int]] = {}
    for i in order.tolist():
        f = int(t.file_of[i])
        f = f if f >= 0 else i
        members = groups.get(f)
        if members is None:
            if len(groups) >= top_k:
                continue
            members = groups[f] = []
        if len(members) < FILE_VIEW_NODES:
            members.append(i)
    act = run.activation
    out = []
    for f, members in groups.items():
        inner = [i for i in members if i != f] or members
        out.append({
            "source_path": t.source_path[f], "file_node_id": t.ext_id[f],
            "score": round(float(act[members[0]]), 5),
            "nodes": [{"node_id": t.ext_id[i], "label": t.label[i], "kind": t.kind_name(i),
                       "activation": round(float(act[i]), 5), "line_start": int(t.line_start[i]),
                       "line_end": int(t.line_end[i])} for i in inner],
        })
    return out


def ghost_edges(g: Graph, run: ActivationRun, top: np.ndarray, limit: int = 5) -> list[dict[str, Any]]:
    """Pairs among the top 50 that share ≥ 2 active dimensions but have no direct edge."""
    cands = [int(i) for i in top[:50]]
    dimsets = {}
    for i in cands:
        ds = frozenset(d for d in run.used if run.dims[d][i] > 0.01)
        if len(ds) >= 2:
            dimsets[i] = ds
    keys = list(dimsets)
    out = []
    for a_i, a in enumerate(keys):
        for b in keys[a_i + 1:]:
            shared = dimsets[a] & dimsets[b]
            if len(shared) < 2:
                continue
            if len(g.engine.edges_between(a, b)):
                continue
            out.append((math.sqrt(float(run.activation[a]) * float(run.activation[b])), a, b, shared))
    out.sort(key=lambda x: (-x[0], x[1], x[2]))
    t = g.nodes
    return [{"source": t.ext_id[a], "target": t.ext_id[b],
             "shared_dimensions": [d for d in run.used if d in shared], "strength": round(s, 4)}
            for s, a, b, shared in out[:limit]]


def structural_holes(g: Graph, activation: np.ndarray, min_sibling: float, limit: int) -> list[dict[str, Any]]:
    """Nodes with activation ≤ 0.01 and ≥ 2 structural neighbours activated ≥ min_sibling."""
    src, dst = g.edge_endpoints()
    rel = g.engine.csr.relations
    structural = rel != CO_CHANGES
    hot = activation >= min_sibling
    # neighbour contributions in both directions
    s1 = structural & hot[src]
    s2 = structural & hot[dst]
    owners = np.concatenate([dst[s1], src[s2]])
    vals = np.concatenate([activation[src[s1]], activation[dst[s2]]])
    if owners.size == 0:
        return []
    cnt = np.bincount(owners, minlength=g.n)
    tot = np.bincount(owners, weights=vals, minlength=g.n)
    holes = np.nonzero((cnt >= 2) & (activation <= 0.01))[0]
    if holes.size == 0:
        return []
    mean = tot[holes] / cnt[holes]
    order = holes[np.lexsort((holes, -mean))][:limit]
    t = g.nodes
    out = []
    for i in order.tolist():
        k, m = int(cnt[i]), float(tot[i] / cnt[i])
        neigh = _hot_neighbours(g, i, hot, activation)
        out.append({"node_id": t.ext_id[i], "label": t.label[i], "kind": t.kind_name(i),
                    "sibling_avg_activation": round(m, 4),
                    "activated_neighbors": [t.ext_id[j] for j in neigh[:5]],
                    "reason": f"{k} activated neighbours (mean {m:.2f}) but not activated itself"})
    return out


def _hot_neighbours(g: Graph, i: int, hot: np.ndarray, act: np.ndarray) -> list[int]:
    rel = g.engine.csr.relations
    pos, tgt = g.engine.out_edges(i)
    a = [int(v) for p, v in zip(pos.tolist(), tgt.tolist()) if rel[p] != CO_CHANGES and hot[v]]
    pos, srcs = g.engine.in_edges(i)
    b = [int(v) for p, v in zip(pos.tolist(), srcs.tolist()) if rel[p] != CO_CHANGES and hot[v]]
    seen = sorted(set(a + b), key=lambda j: -act[j])
    return seen


def coactivation_edges(g: Graph, top: np.ndarray, activation: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Edges joining two of the given results and their LTP increments (learning.md §3)."""
    pos_out, inc_out = [], []
    w = g.engine.weights
    top_set = {int(i) for i in top}
    for u in top_set:
        pos, tgt = g.engine.out_edges(u)
        for p, v in zip(pos.tolist(), tgt.tolist()):
            if v in top_set:
                pos_out.append(p)
                inc_out.append(rate * float(activation[u]) * float(activation[v]) * (1.0 - float(w[p])))
    return np.asarray(pos_out, np.int64), np.asarray(inc_out, np.float32)
