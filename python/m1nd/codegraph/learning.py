"""Explicit feedback learning (``learn``, learning.md §2) and learned-weight helpers (§1, §12).

``learn`` turns an agent's verdict on query results into bounded Hebbian updates on the *linking paths* between the
query's seeds and the reported nodes: ``correct`` strengthens every edge on those paths (plus direct edges among the
reported nodes), ``wrong`` weakens the edge through which each rejected node is reached, ``partial`` does both at
half rate for its confirmed / rejected lists. Nothing else changes: no global decay, no homeostasis, ``w0`` stays
untouched, and every update is soft-bounded in ``[W_MIN, W_MAX]`` by the native kernel.

Durability: the changed edges (as deltas, so concurrent processes compose), their ``n_ltp``/``n_ltd`` counters and a
``learn_log`` row are committed in one transaction before the response, and ``weights_generation`` is bumped.

Weight helpers used by the CLI (``m1nd weights stats|reset``) live here too.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from m1nd.defaults import LEARN_PATH_HOPS, LEARN_PATHS_PER_PAIR, LEARN_STRENGTH
from m1nd.errors import InvalidInputError, UnknownNodeError
from m1nd.graph.activation import closest_ids, query_seeds
from m1nd.graph.engine import W_MAX, W_MIN
from m1nd.graph.model import Graph, edge_label
from m1nd.graph.schema import RELATION_CODES
from m1nd.timeutil import now_ms
from m1nd.codegraph.results import (LearnResult, NodeRef, PersistResult, UnlinkedPair, WeightChange,
                                    WeightsReset, WeightStats)

if TYPE_CHECKING:
    from m1nd.codegraph.service import CodeGraph

log = logging.getLogger(__name__)

FEEDBACKS = ("correct", "wrong", "partial")
MAX_SEEDS = 10
PAIR_BUDGET = 2000
LEARN_LOG_KEEP = 10_000


# -- shared helpers ----------------------------------------------------------------------------------------------
def normalise_query(q: str) -> str:
    """Case-fold and collapse whitespace (the query-log key written by ``activate``)."""
    return " ".join(q.casefold().split())


def resolve_ids(g: Graph, ids: list[str], *, argument: str, max_listed: int = 10) -> list[int]:
    """External ids (or relpath / ``file::relpath``) → node indices, de-duplicated in order.

    Unknown ids raise ``unknown_node: node(s) not in the graph: <id>, …; closest: …`` listing at most
    ``max_listed`` ids and the closest known ids of the first one.
    """
    out: list[int] = []
    seen: set[int] = set()
    unknown: list[str] = []
    for raw in ids:
        i = g.seeds.ext_lookup.get(raw.strip()) if raw.strip() else None
        if i is None:
            if raw not in unknown:
                unknown.append(raw)
            continue
        if i not in seen:
            seen.add(i)
            out.append(int(i))
    if unknown:
        raise unknown_nodes_error(g, unknown, argument=argument, max_listed=max_listed)
    return out


def unknown_nodes_error(g: Graph, unknown: list[str], *, argument: str, max_listed: int = 10) -> UnknownNodeError:
    close = closest_ids(g, unknown[0]) if g.n else []
    listed = ", ".join(unknown[:max_listed]) + (f", … ({len(unknown)} in all)" if len(unknown) > max_listed else "")
    hint = f"; closest: {', '.join(close)}" if close else ""
    return UnknownNodeError(f"node(s) not in the graph: {listed}{hint}",
                            details={"argument": argument, "unknown": unknown[:max_listed], "closest": close})


# -- learn -------------------------------------------------------------------------------------------------------
def _query_seeds(cg: CodeGraph, g: Graph, agent_id: str, query: str) -> tuple[list[int], str]:
    key = normalise_query(query)
    st = cg.agent(agent_id)
    for q, seeds in reversed(st.query_log):
        if q == key:
            idx = g.nodes.index
            found = [idx[s] for s in seeds if s in idx]
            return found[:MAX_SEEDS], "query_log"
    s = query_seeds(g, query, max_seeds=MAX_SEEDS)
    return [int(i) for i in s.nodes.tolist()[:MAX_SEEDS]], "recomputed"


def validate_learn(feedback: str, strength: float, node_ids: list[str], wrong_node_ids: list[str] | None) -> None:
    """The argument checks of learning.md §2 that need no graph (messages exactly as the spec table)."""
    if feedback not in FEEDBACKS:
        raise InvalidInputError(f'feedback must be "correct", "wrong" or "partial" (got "{feedback}")',
                                details={"argument": "feedback", "allowed": list(FEEDBACKS)})
    if wrong_node_ids and feedback != "partial":
        raise InvalidInputError('wrong_node_ids is only valid with feedback="partial"',
                                details={"argument": "wrong_node_ids"})
    if isinstance(strength, bool) or not isinstance(strength, (int, float)) or not (0.0 <= strength <= 1.0):
        raise InvalidInputError(f"strength must be between 0.0 and 1.0 (got {strength})",
                                details={"argument": "strength"})
    if wrong_node_ids:
        confirmed = {n.strip() for n in node_ids}
        for n in wrong_node_ids:
            if n.strip() in confirmed:
                raise InvalidInputError(f"node '{n}' is both confirmed and rejected",
                                        details={"argument": "wrong_node_ids"})


def learn(cg: CodeGraph, agent_id: str, query: str, feedback: str, node_ids: list[str], *,
          strength: float = LEARN_STRENGTH, wrong_node_ids: list[str] | None = None,
          max_path_hops: int = LEARN_PATH_HOPS, paths_per_pair: int = LEARN_PATHS_PER_PAIR) -> LearnResult:
    """Apply explicit feedback (learning.md §2) and commit it before returning."""
    validate_learn(feedback, strength, node_ids, wrong_node_ids)
    wrong_node_ids = list(wrong_node_ids or [])
    with cg.lock:
        g = cg.require_graph()
        confirmed = resolve_ids(g, node_ids, argument="node_ids")
        rejected = resolve_ids(g, wrong_node_ids, argument="wrong_node_ids") if wrong_node_ids else []
        overlap = set(confirmed) & set(rejected)
        if overlap:  # same node through two spellings (relpath vs id)
            i = next(iter(overlap))
            raise InvalidInputError(f"node '{g.nodes.ext_id[i]}' is both confirmed and rejected",
                                    details={"argument": "wrong_node_ids"})
        seeds, seed_source = _query_seeds(cg, g, agent_id, query)
        eng = g.engine
        rate = float(strength) / 2.0 if feedback == "partial" else float(strength)

        ltp: dict[int, set[int]] = {}  # edge position -> reported nodes it serves
        ltd: dict[int, set[int]] = {}
        no_path: list[tuple[int, int]] = []

        def linking(s: int, r: int) -> list[Any]:
            paths, _total, _exh, _short = eng.k_paths(s, r, max_hops=max_path_hops, max_paths=paths_per_pair,
                                                      budget=PAIR_BUDGET)
            if not paths:
                no_path.append((s, r))
            return paths

        positive = confirmed if feedback in ("correct", "partial") else []
        negative = confirmed if feedback == "wrong" else rejected
        for r in positive:
            for s in seeds:
                if s == r:
                    continue
                for p in linking(s, r):
                    for e in p.edges.tolist():
                        ltp.setdefault(int(e), set()).add(r)
        if feedback == "correct":
            for a_i, a in enumerate(confirmed):
                for b in confirmed[a_i + 1:]:
                    for e in eng.edges_between(a, b).tolist():
                        ltp.setdefault(int(e), set()).update((a, b))
        for r in negative:
            for s in seeds:
                if s == r:
                    continue
                for p in linking(s, r):
                    if len(p.edges):
                        ltd.setdefault(int(p.edges[-1]), set()).add(r)
                for e in eng.edges_between(s, r).tolist():
                    ltd.setdefault(int(e), set()).add(r)
        both = set(ltp) & set(ltd)  # partial: selected for LTP and LTD -> unchanged
        for e in both:
            del ltp[e]
            del ltd[e]

        positions = np.asarray(sorted(ltp) + sorted(ltd), dtype=np.int64)
        signs = np.asarray([1] * len(ltp) + [-1] * len(ltd), dtype=np.int8)
        w = eng.weights
        before = w[positions].astype(np.float64) if len(positions) else np.zeros(0)
        if len(positions) and rate > 0:
            eng.hebbian(positions, signs, rate)
        after = w[positions].astype(np.float64) if len(positions) else np.zeros(0)
        changed_mask = after != before
        changed = positions[changed_mask]
        deltas = (after - before)[changed_mask]
        nodes_hit: set[int] = set()
        for p in changed.tolist():
            nodes_hit |= ltp.get(int(p)) or ltd.get(int(p)) or set()

        pending_ltp = getattr(cg, "_pending_ltp", {})  # co-activation counts of these edges travel with them
        pending_ltd = getattr(cg, "_pending_ltd", {})
        ltp_counts = {int(p): 1 + pending_ltp.pop(int(p), 0) for p in changed.tolist() if int(p) in ltp}
        ltd_counts = {int(p): 1 + pending_ltd.pop(int(p), 0) for p in changed.tolist() if int(p) in ltd}
        synced = getattr(cg, "_synced", None)  # write_weights marks the edges synced; undone if the commit fails
        synced_before = synced[changed].copy() if synced is not None and len(changed) else None
        try:
            with cg.shared.write():
                if len(changed):
                    cg.write_weights(g, changed, ltp=ltp_counts, ltd=ltd_counts)
                cg.shared.learning.append_event(
                    agent_id=agent_id, query=query, feedback=feedback, strength=float(strength),
                    node_ids_json=json.dumps({"node_ids": [g.nodes.ext_id[i] for i in confirmed],
                                              "wrong_node_ids": [g.nodes.ext_id[i] for i in rejected]},
                                             ensure_ascii=False),
                    edges_adjusted=len(changed), created_ms=now_ms(), keep=LEARN_LOG_KEEP)
                wgen = cg.shared.learning.bump_generation() if len(changed) else cg.shared.learning.generation()
        except BaseException:
            # Nothing was committed: undo the in-memory update so memory and database agree.
            if len(positions):
                w[positions] = before.astype(np.float32)
            if synced_before is not None:
                synced[changed] = synced_before
            raise

    t = g.nodes
    return LearnResult(
        edges_adjusted=len(changed), nodes_affected=len(nodes_hit), plasticity_delta=rate, query=query,
        feedback=feedback, seed_source=seed_source,
        seeds_used=[NodeRef(node_id=t.ext_id[s], label=t.label[s]) for s in seeds[:MAX_SEEDS]],
        strengthened=int(np.count_nonzero(deltas > 0)), weakened=int(np.count_nonzero(deltas < 0)),
        mean_weight_change=round(float(deltas.mean()), 6) if len(deltas) else 0.0,
        pairs_without_path=[UnlinkedPair(seed=t.ext_id[s], node=t.ext_id[r]) for s, r in no_path[:10]],
        pairs_without_path_total=len(no_path), weights_generation=int(wgen),
        reported_labels=[t.label[i] for i in confirmed[:3]])


# -- node feedback (ranking): every verdict also moves the reported nodes themselves -------------------------------
#: how far the accumulated verdicts on one node can move its score: factor ∈ [1/FEEDBACK_SPAN, FEEDBACK_SPAN]
FEEDBACK_SPAN = 2.0


@dataclass
class NodeFeedback:
    """Learned verdicts on nodes, for the ranking: ``factor`` scales a node's score for every query (global),
    ``lift`` moves it for the query it was given on (keyed by the normalised query)."""

    factor: dict[int, float]
    lift: dict[str, dict[int, float]]

    def for_query(self, query: str) -> tuple[dict[int, float], dict[int, float]]:
        return self.factor, self.lift.get(normalise_query(query), {})


def feedback_factors(rows: list[tuple[str, str, str, float, str]], agent_id: str, index: dict[str, int]
                     ) -> NodeFeedback:
    """Node feedback from the learn log: ``correct`` adds ``strength``, ``wrong`` subtracts it, ``partial`` adds /
    subtracts half for its confirmed / rejected lists. The agent's own verdicts count fully, other agents' half
    (global learning, as edge weights are global).

    Per node, the sum s over every query gives ``factor = FEEDBACK_SPAN ** tanh(2·s)`` (one ``correct`` at the
    default strength 0.2 raises a node ~1.3x in every query; a few verdicts saturate at 2x); the sum over the
    verdicts given *on the same query* gives ``lift = tanh(2·s_q)`` ∈ (−1, 1), which the ranking applies as a
    move toward 1 (or toward 0) of up to ``activation.LIFT_SPAN`` of the distance: an agent that confirms a result
    for a query
    sees it near the top when it asks that query again.

    Edge learning alone cannot move a node whose relevance comes from its own text (its score is pinned to the
    match); these can, and they survive restarts because the learn log is persisted with the edges."""
    total: dict[int, float] = {}
    per_query: dict[str, dict[int, float]] = {}
    for agent, query, feedback, strength, payload in rows:
        try:
            d = json.loads(payload)
        except ValueError:
            continue
        share = 1.0 if agent == agent_id else 0.5
        good = strength * (0.5 if feedback == "partial" else 1.0) * share
        sign = -1.0 if feedback == "wrong" else 1.0
        q = per_query.setdefault(normalise_query(query), {})
        for ids, sgn in ((d.get("node_ids") or (), sign), (d.get("wrong_node_ids") or (), -1.0)):
            for e in ids:
                i = index.get(e)
                if i is not None:
                    total[i] = total.get(i, 0.0) + sgn * good
                    q[i] = q.get(i, 0.0) + sgn * good
    return NodeFeedback(
        factor={i: float(FEEDBACK_SPAN ** np.tanh(2.0 * s)) for i, s in total.items() if s != 0.0},
        lift={k: {i: float(np.tanh(2.0 * s)) for i, s in v.items() if s != 0.0} for k, v in per_query.items()})


# -- persist (lifecycle tool, learning.md §4) ----------------------------------------------------------------------
PERSIST_ACTIONS = ("save", "status", "baseline")


def persist(cg: CodeGraph, action: str) -> PersistResult:
    """``save`` flushes dirty learned weights now, ``status`` only reports, ``baseline`` records a manual baseline."""
    from m1nd.codegraph.baselines import record_manual

    if action not in PERSIST_ACTIONS:
        raise InvalidInputError(f"action must be one of {', '.join(PERSIST_ACTIONS)} (got '{action}')",
                                details={"argument": "action"})
    baseline_id = None
    flushed = 0
    with cg.lock:
        cg.graph()
        if action == "save":
            flushed = cg.flush()
        elif action == "baseline":
            baseline_id = record_manual(cg)
        _, wgen = cg.generations()
        return PersistResult(action=action, baseline_id=baseline_id, flushed_edges=int(flushed),
                             dirty_weights=len(cg.dirty_positions()), weights_generation=int(wgen),
                             last_persist_ms_ago=now_ms() - int(cg.last_persist_ms))


# -- weight statistics and reset (CLI, learning.md §12) -----------------------------------------------------------
def weight_stats(cg: CodeGraph, top: int = 20) -> WeightStats:
    """Counts of the learned edges (above / below w0), the mean |w - w0| and the ``top`` largest changes."""
    with cg.lock:
        g = cg.graph()
        w = g.engine.weights.astype(np.float64)
        w0 = np.asarray(g.engine.csr.base_weights, dtype=np.float64)
        diff = w - w0
        changed = np.nonzero(np.abs(diff) > 1e-7)[0]
        order = changed[np.lexsort((changed, -np.abs(diff[changed])))][:top]
        rows = []
        for p in order.tolist():
            edge, s, d, rel = edge_label(g, p)
            rows.append(WeightChange(edge=edge, source=s, target=d, relation=rel, w0=round(float(w0[p]), 4),
                                     w=round(float(w[p]), 4), delta=round(float(diff[p]), 4)))
        _, wgen = cg.generations()
        return WeightStats(edges_total=int(g.e), strengthened=int(np.count_nonzero(diff > 1e-7)),
                           weakened=int(np.count_nonzero(diff < -1e-7)),
                           mean_abs_change=round(float(np.abs(diff).mean()), 6) if g.e else 0.0,
                           weights_generation=int(wgen), top=rows)


def weights_reset(cg: CodeGraph, *, relation: str | None = None, node: str | None = None,
                  apply: bool = False) -> WeightsReset:
    """``w ← w0`` for the selected edges (all, one relation, and/or the edges touching one node).

    The reset is absolute and runs on the database (so edges learned by other processes are reset too) in one
    transaction that bumps ``weights_generation``; every process picks it up at its next call.
    """
    code = None
    if relation is not None:
        code = RELATION_CODES.get(relation)
        if code is None:
            raise InvalidInputError(f"unknown relation '{relation}'; valid: {', '.join(RELATION_CODES)}",
                                    details={"argument": "relation"})
    with cg.lock:
        node_ext_id = None
        if node is not None:
            g = cg.graph()
            i = g.seeds.ext_lookup.get(node.strip())
            if i is None:
                raise unknown_nodes_error(g, [node], argument="node")
            node_ext_id = g.nodes.ext_id[i]
        repo = cg.shared.learning
        with cg.shared.write():
            rows = repo.learned_edges(relation=code, node_ext_id=node_ext_id)
            if apply and rows:
                repo.reset_to_base(rows, now_ms())
                wgen = repo.bump_generation()
            else:
                wgen = repo.generation()
        if apply and rows:
            cg.graph()  # patch the in-memory weights now
    return WeightsReset(applied=bool(apply and rows), edges_selected=len(rows),
                        mean_abs_change=round(sum(abs(r[4] - r[3]) for r in rows) / len(rows), 6) if rows else 0.0,
                        relation=relation, node=node, weights_generation=int(wgen))


__all__ = [
    "FEEDBACKS",
    "PERSIST_ACTIONS",
    "W_MAX",
    "W_MIN",
    "edge_label",
    "learn",
    "normalise_query",
    "persist",
    "resolve_ids",
    "unknown_nodes_error",
    "validate_learn",
    "weight_stats",
    "weights_reset",
]
