"""``trail_merge`` (learning.md §10): several trails fused into a new one. Equal statements (normalised text) are
fused, conflicting hypotheses (one negates the other) are resolved by confidence and recency or left
``unresolved`` when too close to call, and graph edges that bridge the merged investigations are reported."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from m1nd.codegraph.results import TrailMerged
from m1nd.errors import InvalidInputError
from m1nd.codegraph.trail_input import (MAX_BOOSTS, MAX_CONCLUSIONS, MAX_HYPOTHESES, MAX_QUESTIONS, MAX_TAGS,
                                        MAX_VISITED, bad_input, max_merge)
from m1nd.codegraph.trail_input import normalise_text
from m1nd.codegraph.trails import (Trail, check_trail_id, insert_trail, load_trail, next_trail_id, summarise,
                                   trail_not_found)
from m1nd.graph.model import Graph, relation_name
from m1nd.timeutil import MS_PER_DAY, now_ms

if TYPE_CHECKING:
    from m1nd.codegraph.service import CodeGraph

CONFLICT_DELTA = 0.15
RECENCY_HALF_LIFE_DAYS = 7.0
MAX_CONNECTIONS = 20
NEGATIONS = frozenset({"not", "no", "never", "none", "cannot", "cant", "doesnt", "dont", "isnt", "arent", "wont",
                       "without"})


def _recency(now: int, last_modified_ms: int) -> float:
    age_days = max(0.0, (now - last_modified_ms) / MS_PER_DAY)
    return 2.0 ** (-age_days / RECENCY_HALF_LIFE_DAYS)


def _words(norm: str) -> set[str]:
    return set(norm.split())


def _is_conflict(a: dict[str, Any], b: dict[str, Any]) -> bool:
    wa, wb = _words(a["_norm"]), _words(b["_norm"])
    neg_a, neg_b = bool(wa & NEGATIONS), bool(wb & NEGATIONS)
    ca, cb = wa - NEGATIONS, wb - NEGATIONS
    jac = len(ca & cb) / len(ca | cb) if (ca | cb) else 0.0
    sa, sb = set(a["supporting_nodes"]), set(b["supporting_nodes"])
    xa, xb = set(a["contradicting_nodes"]), set(b["contradicting_nodes"])
    overlap = len(sa & sb) / max(len(sa), len(sb)) if sa and sb else 0.0
    signal = bool(sa & xb) or bool(sb & xa) or (neg_a != neg_b and jac >= 0.5)
    return signal and (overlap >= 0.3 or jac >= 0.5)


def _union(*lists: Iterable[str]) -> list[str]:
    out: dict[str, None] = {}
    for lst in lists:
        for x in lst:
            out.setdefault(x, None)
    return list(out)


def _fuse(items: list[tuple[Trail, dict[str, Any]]], kind: str) -> list[dict[str, Any]]:
    """Fuse hypotheses (or conclusions) with equal normalised statements; keep first-seen order."""
    fused: dict[str, dict[str, Any]] = {}
    for t, h in items:
        key = normalise_text(h["statement"]) or h["statement"]
        f = fused.get(key)
        if f is None:
            f = {"statement": h["statement"], "confidence": float(h.get("confidence", 0.5)),
                 "supporting_nodes": list(h.get("supporting_nodes", []))}
            if kind == "hypotheses":
                f["contradicting_nodes"] = list(h.get("contradicting_nodes", []))
                f["_unsupported"] = bool(h.get("unsupported"))
            else:
                f["from_hypotheses"] = list(h.get("from_hypotheses", []))
            f["sources"] = [t.trail_id]
            f["_norm"] = key
            f["_trails"] = {t.trail_id: float(h.get("confidence", 0.5))}
            fused[key] = f
            continue
        f["confidence"] = max(f["confidence"], float(h.get("confidence", 0.5)))
        f["supporting_nodes"] = _union(f["supporting_nodes"], h.get("supporting_nodes", []))
        if kind == "hypotheses":
            f["contradicting_nodes"] = _union(f["contradicting_nodes"], h.get("contradicting_nodes", []))
            f["_unsupported"] = f["_unsupported"] and bool(h.get("unsupported"))
        else:
            f["from_hypotheses"] = _union(f["from_hypotheses"], h.get("from_hypotheses", []))
        if t.trail_id not in f["sources"]:
            f["sources"].append(t.trail_id)
        f["_trails"][t.trail_id] = max(f["_trails"].get(t.trail_id, 0.0), float(h.get("confidence", 0.5)))
    return list(fused.values())


def _connections(g: Graph, trails: list[Trail]) -> list[dict[str, Any]]:
    idx = g.nodes.index
    t_nodes = [{idx[n] for n in t.nodes() if n in idx} for t in trails]
    labels = g.nodes.label
    ext = g.nodes.ext_id
    w = g.engine.weights
    rel = g.engine.csr.relations
    found: list[tuple[float, int, str, dict[str, Any]]] = []
    for i in range(len(trails)):
        for j in range(i + 1, len(trails)):
            a_only = t_nodes[i] - t_nodes[j]
            b_only = t_nodes[j] - t_nodes[i]
            if not a_only or not b_only:
                continue
            seen: set[int] = set()
            for u in sorted(a_only):
                for forward, (pos, nbr) in ((True, g.engine.out_edges(u)), (False, g.engine.in_edges(u))):
                    for p, v in zip(pos.tolist(), nbr.tolist()):
                        if v not in b_only or p in seen:
                            continue
                        seen.add(p)
                        r = relation_name(int(rel[p]), forward=forward)
                        found.append((float(w[p]), 0, f"{ext[u]}\0{ext[v]}", {
                            "type": "bridge_edge",
                            "detail": f"{labels[u]} ({trails[i].label}) {r} {labels[v]} ({trails[j].label}) links "
                                      "the two investigations",
                            "from_node": ext[u], "to_node": ext[v], "weight": round(float(w[p]), 4)}))
    counts: dict[int, int] = {}
    for s in t_nodes:
        for n in s:
            counts[n] = counts.get(n, 0) + 1
    for n, k in counts.items():
        if k >= 2:
            wt = k / len(trails)
            found.append((wt, 1, ext[n], {"type": "shared_node",
                                          "detail": f"{labels[n]} is in {k} of the {len(trails)} merged trails",
                                          "from_node": ext[n], "to_node": ext[n], "weight": round(wt, 4)}))
    found.sort(key=lambda x: (-x[0], x[1], x[2]))
    return [x[3] for x in found[:MAX_CONNECTIONS]]


def merge(cg: CodeGraph, agent_id: str, trail_ids: list[str], *, label: str | None = None) -> TrailMerged:
    if not isinstance(trail_ids, list) or not (2 <= len(trail_ids) <= 10):
        n = len(trail_ids) if isinstance(trail_ids, list) else 0
        raise bad_input(f"trail_merge needs 2 to 10 trail ids (got {n})", "trail_ids")
    for tid in trail_ids:
        check_trail_id(tid, "trail_ids")
    dup = next((x for i, x in enumerate(trail_ids) if x in trail_ids[:i]), None)
    if dup is not None:
        raise bad_input(f"trail id '{dup}' is listed twice; pass distinct trail ids", "trail_ids")
    if label is not None and (not label.strip() or len(label) > 200):
        raise bad_input("label must be 1..200 characters", "label")
    with cg.lock:
        g = cg.graph()
        db, repo = cg.shared, cg.shared.trails
        with db.write():
            trails: list[Trail] = []
            for tid in trail_ids:
                t = load_trail(repo, tid)
                if t is None:
                    raise trail_not_found(tid)
                if t.status == "merged":
                    raise InvalidInputError(f"trail {tid} was already merged into {t.merged_into}",
                                            details={"argument": "trail_ids", "merged_into": t.merged_into},
                                            recover=f"merge {t.merged_into} instead")
                trails.append(t)
            now = now_ms()
            if label is None:
                label = "merge: " + " + ".join(t.label for t in trails)
                if len(label) > 200:
                    label = label[:199] + "…"
            # visited nodes, boosts, tags, questions
            visited: dict[str, dict[str, Any]] = {}
            boosts: dict[str, float] = {}
            tags: list[str] = []
            questions: dict[str, str] = {}
            for t in trails:
                for v in t.visited:
                    nid = v["node_external_id"]
                    old = visited.get(nid)
                    if old is None:
                        visited[nid] = {"node_external_id": nid, "annotation": v.get("annotation", ""),
                                        "relevance": float(v.get("relevance", 0.5))}
                    else:
                        old["relevance"] = max(old["relevance"], float(v.get("relevance", 0.5)))
                        ann = v.get("annotation", "")
                        if ann and ann not in old["annotation"].split(" | "):
                            old["annotation"] = " | ".join(x for x in (old["annotation"], ann) if x)
                for k, b in t.boosts.items():
                    max_merge(boosts, k, float(b))
                for tag in t.tags:
                    if tag not in tags:
                        tags.append(tag)
                for q in t.open_questions:
                    questions.setdefault(normalise_text(q) or q, q)
            recency = {t.trail_id: _recency(now, t.last_modified_ms) for t in trails}
            hyps = _fuse([(t, h) for t in trails for h in t.hypotheses], "hypotheses")
            concl = _fuse([(t, c) for t in trails for c in t.conclusions], "conclusions")
            # conflicts between hypotheses of different source trails
            conflicts = []
            status: dict[int, set[str]] = {}
            for ia, a in enumerate(hyps):
                for ib in range(ia + 1, len(hyps)):
                    b = hyps[ib]
                    if len(a["sources"]) == 1 and a["sources"] == b["sources"]:
                        continue  # both from the same trail: not a merge conflict
                    if not _is_conflict(a, b):
                        continue
                    ta = max(a["_trails"], key=lambda x: (recency[x], a["_trails"][x]))
                    tb = max(b["_trails"], key=lambda x: (recency[x], b["_trails"][x]))
                    if ta == tb:  # pick distinct trails when both hypotheses appear in several
                        others = [x for x in b["_trails"] if x != ta]
                        if others:
                            tb = max(others, key=lambda x: (recency[x], b["_trails"][x]))
                    sa = 0.7 * a["confidence"] + 0.3 * recency[ta]
                    sb = 0.7 * b["confidence"] + 0.3 * recency[tb]
                    delta = abs(sa - sb)
                    if delta < CONFLICT_DELTA:
                        res, winner = "unresolved", None
                        status.setdefault(ia, set()).add("unresolved")
                        status.setdefault(ib, set()).add("unresolved")
                    else:
                        res = "resolved"
                        win, lose = (ia, ib) if sa > sb else (ib, ia)
                        winner = hyps[win]["statement"]
                        status.setdefault(win, set()).add("won")
                        status.setdefault(lose, set()).add("lost")
                    conflicts.append({"hypothesis_a": a["statement"], "hypothesis_b": b["statement"], "trail_a": ta,
                                      "trail_b": tb, "score_a": round(sa, 4), "score_b": round(sb, 4),
                                      "resolution": res, "winner": winner, "score_delta": round(delta, 4)})
            for k, h in enumerate(hyps):
                marks = status.get(k, set())
                if marks:
                    h["merge_status"] = ("unresolved" if "unresolved" in marks else "lost" if "lost" in marks
                                         else "won")
                if h.pop("_unsupported", False):
                    h["unsupported"] = True
                h["confidence"] = round(h["confidence"], 4)
            for h in (*hyps, *concl):
                h.pop("_norm", None)
                h.pop("_trails", None)
            visited_list = sorted(visited.values(), key=lambda v: -v["relevance"])[:MAX_VISITED]
            if len(boosts) > MAX_BOOSTS:
                boosts = dict(sorted(boosts.items(), key=lambda kv: -kv[1])[:MAX_BOOSTS])
            hyps = hyps[:MAX_HYPOTHESES]
            concl = concl[:MAX_CONCLUSIONS]
            q_list = list(questions.values())[:MAX_QUESTIONS]
            tags = tags[:MAX_TAGS]
            new = Trail(trail_id=next_trail_id(repo, agent_id), agent_id=agent_id, label=label, status="saved",
                        summary="",
                        tags=tags, visited=visited_list, hypotheses=hyps, conclusions=concl, open_questions=q_list,
                        boosts=boosts, graph_generation=cg.store.generations()[0], created_ms=now,
                        last_modified_ms=now, source_trails=list(trail_ids))
            n_nodes = len(new.nodes())
            new.summary = summarise(label, n_nodes, hyps, len(concl), len(q_list))
            insert_trail(repo, new)
            repo.mark_merged(trail_ids, into=new.trail_id, modified_ms=now)
        connections = _connections(g, trails)
    return TrailMerged(merged_trail_id=new.trail_id, label=label, source_trails=list(trail_ids),
                       nodes_merged=n_nodes, hypotheses_merged=len(hyps), conclusions_merged=len(concl),
                       conflicts=conflicts, connections_discovered=connections)
