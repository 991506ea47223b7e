"""Read-only graph tools' logic: ``why`` (activation.md §11) and ``impact`` (§10), plus id resolution."""

from __future__ import annotations

from typing import Any

import numpy as np

from m1nd.defaults import (DECAY, IMPACT_MAX_CHAINS, IMPACT_MAX_HOPS, IMPACT_MIN_SIGNAL, IMPACT_TOP_K, WHY_MAX_HOPS,
                            WHY_MAX_PATHS, WHY_MIN_STRENGTH, WHY_PATH_BUDGET)
from m1nd.errors import InvalidInputError, UnknownNodeError
from m1nd.graph.activation import closest_ids
from m1nd.graph.engine import Path
from m1nd.graph.model import CAUSAL, RHO, STRUCTURAL_MASK, Graph, relation_name
from m1nd.graph.results import CausalChain, ImpactEntry, ImpactResult, WhyResult
from m1nd.graph.results import Path as GraphPath

ZERO = np.zeros(16, np.float32)


def resolve_node(g: Graph, node_id: str, *, argument: str = "node_id") -> int:
    """External id (or relpath / ``file::relpath``) → node index; unknown → ``unknown_node`` with suggestions."""
    i = g.seeds.ext_lookup.get(node_id.strip())
    if i is not None:
        return i
    close = closest_ids(g, node_id)
    hint = f"; closest: {', '.join(close)}" if close else ""
    raise UnknownNodeError(f"node '{node_id}' is not in the graph{hint}; use activate to find ids",
                           details={"argument": argument, "closest": close})


def _path(g: Graph, p: Path) -> GraphPath:
    t = g.nodes
    rels = [relation_name(int(g.engine.csr.relations[e]), forward=int(d) > 0) for e, d in zip(p.edges, p.dirs)]
    nodes = [int(x) for x in p.nodes]
    return GraphPath(nodes=[t.ext_id[i] for i in nodes], labels=[t.label[i] for i in nodes], relations=rels,
                     cumulative_strength=round(p.strength, 6), hops=len(rels))


def why(g: Graph, source: str, target: str, *, max_hops: int = WHY_MAX_HOPS, max_paths: int = WHY_MAX_PATHS,
        path_budget: int = WHY_PATH_BUDGET, min_strength: float = WHY_MIN_STRENGTH,
        relations_mask: int | None = None) -> WhyResult:
    s = resolve_node(g, source, argument="source")
    t_ = resolve_node(g, target, argument="target")
    if s == t_:
        raise InvalidInputError("source and target are the same node; pass two different ids",
                                details={"argument": "target"})
    mask = relations_mask if relations_mask is not None else 0xFFFFFFFF
    paths, total, exhausted, shortest = g.engine.k_paths(s, t_, max_hops=max_hops, max_paths=max_paths,
                                                         budget=path_budget, min_strength=min_strength, mask=mask)
    t = g.nodes
    return WhyResult(source=t.ext_id[s], target=t.ext_id[t_], source_label=t.label[s], target_label=t.label[t_],
                     paths=[_path(g, p) for p in paths], total_paths_found=total, budget_exhausted=exhausted,
                     shortest_hops=shortest if shortest >= 0 else None)


def _via(g: Graph, v: int, hops: np.ndarray, act: np.ndarray, forward: bool, mask: int) -> str | None:
    """Relation of the strongest edge that delivered the signal to v (from a node one hop closer)."""
    rel = g.engine.csr.relations
    w = g.engine.weights
    h = int(hops[v])
    best, best_rel = -1.0, None
    if forward:
        pos, nb = g.engine.in_edges(v)  # u -> v
    else:
        pos, nb = g.engine.out_edges(v)  # v -> u traversed backwards from u
    for p, u in zip(pos.tolist(), nb.tolist()):
        r = int(rel[p])
        if not (mask >> r) & 1 or hops[u] != h - 1 or act[u] <= 0:
            continue
        s = float(act[u]) * float(w[p])
        if s > best:
            best, best_rel = s, relation_name(r, forward)
    return best_rel


def impact(g: Graph, node_id: str, *, direction: str = "both", max_hops: int = IMPACT_MAX_HOPS,
           min_signal: float = IMPACT_MIN_SIGNAL, top_k: int = IMPACT_TOP_K, relations_mask: int | None = None,
           include_causal_chains: bool = True, max_chains: int = IMPACT_MAX_CHAINS) -> ImpactResult:
    src = resolve_node(g, node_id)
    mask = STRUCTURAL_MASK if relations_mask is None else relations_mask
    eng = g.engine
    runs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for d in (("forward", "reverse") if direction == "both" else (direction,)):
        act, _ = eng.spread([src], [1.0], decay=DECAY, threshold=min_signal, max_hops=max_hops, mode=d, mask=mask,
                            hub_ref=0.0, rev_mult=RHO)
        hops = eng.bfs_hops(src, max_hops=max_hops, mode=d, mask=mask)
        runs[d] = (act, hops)
    n = g.n
    best = np.zeros(n, np.float32)
    best_dir = np.zeros(n, np.int8)  # 0 forward, 1 reverse
    for k, (d, (act, _)) in enumerate(runs.items()):
        better = act > best
        best[better] = act[better]
        best_dir[better] = 0 if d == "forward" else 1
    best[src] = 0.0
    reached = np.nonzero(best > 0)[0]
    order = reached[np.lexsort((reached, -best[reached]))]
    t = g.nodes
    blast: list[ImpactEntry] = []
    by_hop: dict[str, int] = {}
    hop_of = np.full(n, -1, np.int32)
    for i in reached.tolist():
        d = "forward" if best_dir[i] == 0 else "reverse"
        hop_of[i] = int(runs[d][1][i])
    for i in reached.tolist():
        key = str(int(hop_of[i]))
        by_hop[key] = by_hop.get(key, 0) + 1
    for i in order[:top_k].tolist():
        d = "forward" if best_dir[i] == 0 else "reverse"
        act, hops = runs[d]
        blast.append(ImpactEntry(node_id=t.ext_id[i], label=t.label[i], kind=t.kind_name(i),
                                 signal_strength=round(float(best[i]), 5), hop_distance=int(hop_of[i]),
                                 direction=d, via_relation=_via(g, i, hops, act, d == "forward", mask)))
    files = {int(t.file_of[i]) for i in reached.tolist() if t.file_of[i] >= 0}
    tests = [t.ext_id[i] for i in order.tolist() if t.is_test[i]][:20]
    chains: list[CausalChain] = []
    if include_causal_chains and max_chains > 0:
        found = []
        for d in (("forward", "reverse") if direction == "both" else (direction,)):
            for p in eng.chains(src, mode=d, max_depth=6, min_strength=0.1, budget=10000, max_chains=max_chains,
                                mask=mask, fwd_mult=CAUSAL, rev_mult=CAUSAL):
                found.append((p, d))
        found.sort(key=lambda x: -x[0].strength)
        for p, d in found[:max_chains]:
            gp = _path(g, p)
            chains.append(CausalChain(path=gp.nodes, labels=gp.labels, relations=gp.relations,
                                      cumulative_strength=gp.cumulative_strength, direction=d))
    max_hop = int(hop_of[reached].max()) if len(reached) else 0
    return ImpactResult(source=t.ext_id[src], source_label=t.label[src], direction=direction, blast_radius=blast,
                        by_hop=dict(sorted(by_hop.items(), key=lambda kv: int(kv[0]))), files_affected=len(files),
                        tests_affected=tests, total_energy=round(float(best[reached].sum()), 4),
                        total_reached=len(reached), max_hops_reached=max_hop, causal_chains=chains)


def neighbourhood(g: Graph, node_id: str, *, depth: int = 1, max_nodes: int = 40,
                  relations_mask: int | None = None) -> dict[str, Any]:
    """The nodes within ``depth`` hops of ``node_id`` (edges followed both ways), nearest and strongest first, at
    most ``max_nodes``, and every edge among them: the picture of ``m1nd graph NODE`` (issue 15 item 7).

    Co-change edges are left out by default (they connect most of a busy file to everything else and would bury
    the structure)."""
    start = resolve_node(g, node_id)
    csr = g.engine.csr
    mask = STRUCTURAL_MASK if relations_mask is None else relations_mask
    rel = csr.relations
    weights = csr.weights
    hop = {start: 0}
    frontier = [start]
    dropped = False
    for level in range(1, depth + 1):
        found: dict[int, float] = {}
        for u in frontier:
            lo, hi = int(csr.indptr[u]), int(csr.indptr[u + 1])
            for pos in range(lo, hi):
                v = int(csr.indices[pos])
                if (mask >> int(rel[pos])) & 1 and v not in hop:
                    found[v] = max(found.get(v, 0.0), float(weights[pos]))
            lo, hi = int(csr.rev_indptr[u]), int(csr.rev_indptr[u + 1])
            for slot in range(lo, hi):
                pos = int(csr.rev_edge[slot])
                v = int(csr.rev_indices[slot])
                if (mask >> int(rel[pos])) & 1 and v not in hop:
                    found[v] = max(found.get(v, 0.0), float(weights[pos]))
        room = max(max_nodes - len(hop), 0)
        ranked = sorted(found, key=lambda v: (-found[v], g.nodes.ext_id[v]))
        dropped = dropped or len(ranked) > room
        frontier = ranked[:room]
        for v in frontier:
            hop[v] = level
        if not frontier:
            break
    kept = set(hop)
    edges = []
    for u in sorted(kept, key=lambda x: (hop[x], g.nodes.ext_id[x])):
        lo, hi = int(csr.indptr[u]), int(csr.indptr[u + 1])
        for pos in range(lo, hi):
            v = int(csr.indices[pos])
            if v in kept and (mask >> int(rel[pos])) & 1:
                edges.append({"source": g.nodes.ext_id[u], "target": g.nodes.ext_id[v],
                              "relation": relation_name(int(rel[pos])), "weight": round(float(weights[pos]), 4)})
    t = g.nodes
    nodes = [{**g.node_brief(i), "source_path": t.source_path[i], "hop": hop[i]}
             for i in sorted(kept, key=lambda x: (hop[x], t.ext_id[x]))]
    return {"center": t.ext_id[start], "depth": depth, "nodes": nodes, "edges": edges, "more_nodes": dropped}
