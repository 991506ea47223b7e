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

The semantic backend is the trigram index (activation.md §3) until code-node embeddings exist; the
:class:`~m1nd.perspectives.graph_facts.SemanticBackend` in the input (``backend(graph, node_index) -> (similarity
float32[N] in [0, 1], name) | None``) takes over without changing anything else.

Why one module of this size: the eight families, the five score terms and the assembly are one pipeline over one
focus, sharing its adjacency and lens; the per-graph facts they read live in :mod:`m1nd.perspectives.graph_facts`.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from m1nd.defaults import DECAY
from m1nd.graph.model import CAUSAL, RHO, STRUCTURAL_MASK, Graph, relation_name
from m1nd.graph.nodes import KIND_CODE
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
from m1nd.graph.seeds import lookup_sorted, run_starts, sorted_unique
from m1nd.perspectives.graph_facts import (
    ALL,
    DIR,
    FILE,
    HUB_DEGREE,
    Adj,
    SemanticBackend,
    adjacency,
    facts,
    fused_activation,
    similar_above_floor,
)
from m1nd.perspectives.lens import FAMILIES, TERMS, Lens

STRUCT_FAMILY_MASK = sum(1 << r for r in (CONTAINS, INHERITS, IMPLEMENTS, REFERENCES, REEXPORTS, DECLARES_MODULE,
                                          MENTIONS))
CAUSAL_FAMILY_MASK = sum(1 << r for r in (IMPORTS, CALLS, INHERITS, IMPLEMENTS, REFERENCES, REEXPORTS))
FAMILY_ORDER = {f: k for k, f in enumerate(FAMILIES)}
PER_FAMILY = 4
SIBLINGS = 5
SEMANTIC_POOL = 10
CAUSAL_MIN = 0.1
LOCAL_HOPS = 3
ANCHOR_HOPS = 8

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
    semantic: SemanticBackend | None = None  # code-node embeddings (None: the trigram backend)


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
    floor_idx, floor_val, backend = similar_above_floor(g, f, inp.semantic)
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


def affinity(g: Graph, x: int, top_k: int, semantic: SemanticBackend | None = None
             ) -> tuple[list[dict[str, Any]], str, dict[str, Any] | None]:
    """Probable connections of node x: same kind group, never directly connected (perspectives.md §6)."""
    fx = facts(g)
    t = g.nodes
    w = g.engine.weights
    nsum, ncount = fx.neighbourhood_sums(g)
    fl_idx, fl_val, backend = similar_above_floor(g, x, semantic)
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
