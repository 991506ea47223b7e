"""``hypothesize`` (spec activation.md §13): test a natural-language claim about the code against the graph.

The claim is classified by trigger phrases, its entities resolved to nodes (ids/paths first, then seed
selection on each side of the trigger), and a structural test per claim type yields evidence with likelihood
factors; ``confidence = odds / (1 + odds)`` with ``odds = Π factors`` from a 0.5 prior.

One deliberate refinement: "A depends on B" is tested from A *and everything A contains* to B *and everything B
contains*, because dependency edges start at the innermost enclosing symbol (a class's methods call, not the
class) — testing only the container itself would call almost every class-level claim false.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

from m1nd.defaults import HYPOTHESIS_MAX_HOPS, HYPOTHESIS_PATH_BUDGET
from m1nd.errors import M1ndError
from m1nd.graph.activation import query_seeds
from m1nd.graph.model import Graph, relation_name
from m1nd.graph.results import ClaimEvidence, ClaimNode, HypothesisResult, PartialReach
from m1nd.graph.schema import (
    CALLS,
    CO_CHANGES,
    CONTAINS,
    DECLARES_MODULE,
    IMPLEMENTS,
    IMPORTS,
    INHERITS,
    REEXPORTS,
    REFERENCES,
    TESTS,
)

DEPENDENCY = frozenset({IMPORTS, CALLS, REFERENCES, INHERITS, IMPLEMENTS, REEXPORTS, DECLARES_MODULE})

# (claim type, negated, regex with named groups a / b / c); first match wins.
_S = r"(?P<a>.+?)"
_O = r"(?P<b>.+?)"
PATTERNS: list[tuple[str, bool, re.Pattern[str]]] = [(t, neg, re.compile(p, re.IGNORECASE)) for t, neg, p in [
    ("gateway", False, rf"^all paths from {_S} to {_O} (?:go|pass) through (?P<c>.+?)$"),
    ("gateway", False, rf"^(?P<c>.+?) is (?:a|the) (?:gateway|bottleneck|choke ?point) between {_S} and {_O}$"),
    ("circular", False, rf"^(?:there is a )?(?:circular dependency|cycle) between {_S} and {_O}$"),
    ("circular", False, rf"^{_S} and {_O} depend on each other$"),
    ("coupling", False, rf"^{_S} and {_O} (?:are (?:tightly )?(?:coupled|connected)|change together|co-?change)$"),
    ("no_dependency", False,
     (rf"^{_S} (?:never calls|never uses|never imports|does not (?:use|call|import|depend on)|doesn't (?:use|call|"
      rf"import|depend on)|is independent of|is decoupled from) {_O}$")),
    ("isolated", False, rf"^{_S} is (?:unused|dead(?: code)?|isolated|never called|not imported)$"),
    ("tested", True, rf"^{_S} (?:has no tests|is untested|is not tested|is not covered|lacks tests)$"),
    ("tested", False, rf"^{_S} (?:is tested|has tests|is covered(?: by tests)?)$"),
    ("depends_on", False,
     (rf"^{_S} (?:depends on|imports|calls|uses|requires|relies on|references) {_O}$")),
]]
FACTORS = {
    "depends_on": {"direct": 3.0, "path": 2.0, "none": 0.3},
    "no_dependency": {"direct": 0.1, "path": 0.2, "none": 2.0},
    "coupling": {"co_change": 2.5, "paths": 1.5, "none": 0.4},
    "circular": {"both": 3.0, "one": 0.5, "none": 0.2},
    "gateway": {"only_through": 3.0, "bypass": 0.2, "unreachable": 0.5},
    "isolated": {"none": 2.5, "only_tests": 1.5, "some": 0.2},
    "tested": {"edge": 2.5, "near": 1.5, "none": 0.3},
    "unknown": {"path": 1.5, "none": 0.5},
}
_QUOTED = re.compile(r"`([^`]+)`|\"([^\"]+)\"|'([^']+)'")


@dataclass
class Evidence:
    evidence_type: str
    description: str
    likelihood_factor: float
    nodes: list[int] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    path_strength: float | None = None


def classify(claim: str) -> tuple[str, bool, dict[str, str]]:
    text = claim.strip().rstrip(".?!")
    for kind, negated, pat in PATTERNS:
        m = pat.match(text)
        if m:
            return kind, negated, {k: v.strip() for k, v in m.groupdict().items() if v}
    return "unknown", False, {"a": text}


def resolve_entities(g: Graph, phrase: str) -> list[tuple[int, float]]:
    """Backticked/quoted ids or paths first; otherwise the top 3 seeds with seed ≥ 0.3."""
    for a, b, c in _QUOTED.findall(phrase):
        cand = (a or b or c).strip()
        i = g.seeds.ext_lookup.get(cand)
        if i is not None:
            return [(i, 1.0)]
    i = g.seeds.ext_lookup.get(phrase.strip().strip("`'\""))
    if i is not None:
        return [(i, 1.0)]
    s = query_seeds(g, phrase, max_seeds=3, per_file=3, min_score=0.3)
    return [(int(n), float(v)) for n, v in zip(s.nodes.tolist(), s.scores.tolist())]


class _Search:
    """Directed/undirected reachability over relation subsets with a pop budget (Python BFS/best-first)."""

    def __init__(self, g: Graph, budget: int) -> None:
        self.g = g
        self.budget = budget
        self.explored = 0
        self.exhausted = False
        self.rel = g.engine.csr.relations
        self.w = g.engine.weights

    def neighbours(self, u: int, relations: frozenset[int] | None, forward: bool, backward: bool):
        eng = self.g.engine
        if forward:
            pos, tgt = eng.out_edges(u)
            for p, v in zip(pos.tolist(), tgt.tolist()):
                r = int(self.rel[p])
                if relations is None or r in relations:
                    yield v, p, r, True
        if backward:
            pos, src = eng.in_edges(u)
            for p, v in zip(pos.tolist(), src.tolist()):
                r = int(self.rel[p])
                if relations is None or r in relations:
                    yield v, p, r, False

    def best_path(
        self,
        sources: set[int],
        targets: set[int],
        *,
        relations: frozenset[int] | None,
        directed: bool,
        max_hops: int,
        avoid: set[int] | None = None,
    ) -> tuple[list[int], list[tuple[int, bool]], float] | None:
        """Strongest path (product of weights) from any source to any target; None if none within max_hops."""
        import heapq

        avoid = avoid or set()
        best: dict[int, float] = {}
        heap: list[tuple[float, int, int, tuple]] = []
        counter = 0
        for s in sources:
            if s in avoid:
                continue
            heapq.heappush(heap, (-1.0, counter, s, (s, None, None, 0)))
            counter += 1
        while heap:
            if self.explored >= self.budget:
                self.exhausted = True
                return None
            neg, _, u, chain = heapq.heappop(heap)
            strength = -neg
            if best.get(u, -1.0) >= strength and chain[1] is not None:
                continue
            best[u] = strength
            self.explored += 1
            if u in targets and chain[1] is not None:
                nodes, edges = [], []
                c = chain
                while c is not None:
                    nodes.append(c[0])
                    if c[2] is not None:
                        edges.append(c[2])
                    c = c[1]
                return nodes[::-1], edges[::-1], strength
            if chain[3] >= max_hops:
                continue
            for v, p, _r, fwd in self.neighbours(u, relations, True, not directed):
                if v in avoid:
                    continue
                s2 = strength * float(self.w[p])
                if s2 > best.get(v, 0.0):
                    heapq.heappush(heap, (-s2, counter, v, (v, chain, (p, fwd), chain[3] + 1)))
                    counter += 1
        return None

    def reach(self, sources: set[int], *, relations: frozenset[int] | None, directed: bool,
              max_hops: int) -> dict[int, int]:
        dist = {s: 0 for s in sources}
        q = deque(sources)
        while q:
            u = q.popleft()
            if dist[u] >= max_hops:
                continue
            self.explored += 1
            for v, _p, _r, _f in self.neighbours(u, relations, True, not directed):
                if v not in dist:
                    dist[v] = dist[u] + 1
                    q.append(v)
        return dist


def descendants(g: Graph, roots: list[int], limit: int = 2000) -> set[int]:
    out = set(roots)
    q = deque(roots)
    rel = g.engine.csr.relations
    while q and len(out) < limit:
        u = q.popleft()
        pos, tgt = g.engine.out_edges(u)
        for p, v in zip(pos.tolist(), tgt.tolist()):
            if rel[p] == CONTAINS and v not in out:
                out.add(v)
                q.append(v)
    return out


def hypothesize(g: Graph, claim: str, *, max_hops: int = HYPOTHESIS_MAX_HOPS, path_budget: int = HYPOTHESIS_PATH_BUDGET,
                include_ghost_edges: bool = True, include_partial_flow: bool = True,
                ghost_pairs: set[tuple[int, int]] | None = None) -> HypothesisResult:
    kind, negated, parts = classify(claim)
    t = g.nodes
    binary = kind in ("depends_on", "no_dependency", "coupling", "circular", "gateway")

    def need(phrase_key: str) -> list[tuple[int, float]]:
        phrase = parts.get(phrase_key, "")
        got = resolve_entities(g, phrase) if phrase else []
        if not got:
            raise M1ndError(f"could not find code matching '{phrase}'; name it by path or external id, e.g. "
                            "file::src/pool.py", code="unresolved_claim",
                            recover="quote the code by external id or relpath (backticks)")
        return got

    subj: list[tuple[int, float]] = []
    obj: list[tuple[int, float]] = []
    via: list[tuple[int, float]] = []
    if kind == "unknown":
        s = query_seeds(g, claim, max_seeds=12, min_score=0.3)
        picks: list[tuple[int, float]] = []
        files: set[int] = set()
        for n, v in zip(s.nodes.tolist(), s.scores.tolist()):
            f = int(t.file_of[n]) if t.file_of[n] >= 0 else n
            if f not in files:
                picks.append((n, v))
                files.add(f)
            if len(picks) == 2:
                break
        if len(picks) < 2:
            raise M1ndError(f"could not find two pieces of code in '{claim}'; name them by path or external id, "
                            "e.g. file::src/pool.py", code="unresolved_claim",
                            recover="rephrase with a trigger such as 'A depends on B', or quote ids in backticks")
        subj, obj = [picks[0]], [picks[1]]
    else:
        subj = need("a")
        if binary:
            obj = need("b")
        if kind == "gateway":
            via = need("c")
    search = _Search(g, path_budget)
    S = {n for n, _ in subj}
    O = {n for n, _ in obj}
    S_all = descendants(g, sorted(S))
    O_all = descendants(g, sorted(O))
    support: list[Evidence] = []
    contra: list[Evidence] = []
    F = FACTORS[kind]

    def add(ev: Evidence) -> None:
        (support if ev.likelihood_factor > 1 else contra).append(ev)

    def path_ev(etype: str, desc: str, factor: float, found) -> Evidence:
        nodes, edges, strength = found
        rels = [relation_name(int(g.engine.csr.relations[p]), fwd) for p, fwd in edges]
        return Evidence(etype, desc, factor, nodes, rels, round(strength, 6))

    def direct_edge(a: set[int], b: set[int]) -> tuple[int, int, int] | None:
        for u in a:
            pos, tgt = g.engine.out_edges(u)
            for p, v in zip(pos.tolist(), tgt.tolist()):
                if v in b and int(g.engine.csr.relations[p]) in DEPENDENCY:
                    return u, v, p
        return None

    def dependency(a: set[int], b: set[int]):
        return search.best_path(a, b, relations=DEPENDENCY, directed=True, max_hops=max_hops)

    reached_for_partial: tuple[set[int], set[int]] | None = None
    if kind in ("depends_on", "no_dependency"):
        d = direct_edge(S_all, O_all)
        if d:
            u, v, p = d
            add(Evidence("direct_edge", f"{t.label[u]} {relation_name(int(g.engine.csr.relations[p]))} "
                         f"{t.label[v]}", F["direct"], [u, v], [relation_name(int(g.engine.csr.relations[p]))],
                         round(float(g.engine.weights[p]), 6)))
        else:
            found = dependency(S_all, O_all)
            if found:
                add(path_ev("dependency_path", f"{len(found[1])}-hop dependency path", F["path"], found))
            else:
                add(Evidence("no_path", f"no dependency path within {max_hops} hops", F["none"]))
                reached_for_partial = (S_all, O_all)
    elif kind == "coupling":
        fa = {int(t.file_of[n]) if t.file_of[n] >= 0 else n for n in S}
        fb = {int(t.file_of[n]) if t.file_of[n] >= 0 else n for n in O}
        co = None
        for u in fa | S:
            for v in fb | O:
                for p in g.engine.edges_between(u, v).tolist():
                    if int(g.engine.csr.relations[p]) == CO_CHANGES:
                        co = (u, v, p)
        if co:
            u, v, p = co
            add(Evidence("co_change", f"{t.label[u]} and {t.label[v]} change together in git history",
                         F["co_change"], [u, v], ["co_changes"], round(float(g.engine.weights[p]), 6)))
        n_paths = 0
        best = None
        for s in S:
            for o in O:
                if s == o:
                    continue
                paths, total, exhausted, _ = g.engine.k_paths(s, o, max_hops=3, max_paths=5,
                                                              budget=max(100, path_budget), min_strength=1e-4)
                search.explored += min(total, path_budget)
                search.exhausted |= exhausted
                n_paths += total
                if paths and (best is None or paths[0].strength > best.strength):
                    best = paths[0]
        if n_paths >= 2 and best is not None:
            add(Evidence("paths", f"{n_paths} paths within 3 hops", F["paths"], best.nodes.tolist(),
                         [relation_name(int(g.engine.csr.relations[e]), int(d_) > 0)
                          for e, d_ in zip(best.edges, best.dirs)], round(best.strength, 6)))
        if not co and n_paths < 2:
            add(Evidence("no_coupling", "no co-change edge and fewer than 2 short paths", F["none"]))
    elif kind == "circular":
        ab = dependency(S_all, O_all)
        ba = dependency(O_all, S_all)
        if ab and ba:
            ev = path_ev("cycle", "dependency paths both ways (forward leg, then the way back)", F["both"], ab)
            back = path_ev("cycle", "", 1.0, ba)
            ev.nodes += back.nodes[1:]
            ev.relations += back.relations
            ev.path_strength = round((ev.path_strength or 0) * (back.path_strength or 0), 6)
            add(ev)
        elif ab or ba:
            add(path_ev("one_way", "dependency path only one way", F["one"], ab or ba))
        else:
            add(Evidence("no_path", "no dependency path either way", F["none"]))
    elif kind == "gateway":
        C = descendants(g, [n for n, _ in via])
        with_c = dependency(S_all - C, O_all - C)
        if not with_c:
            add(Evidence("unreachable", f"{t.label[next(iter(S))]} never reaches {t.label[next(iter(O))]}",
                         F["unreachable"]))
        else:
            bypass = search.best_path(S_all - C, O_all - C, relations=DEPENDENCY, directed=True,
                                      max_hops=max_hops, avoid=C)
            if bypass:
                add(path_ev("bypass", "a dependency path avoids the gateway", F["bypass"], bypass))
            else:
                add(path_ev("only_through", "every dependency path found passes through the gateway",
                            F["only_through"], with_c))
    elif kind == "isolated":
        users: list[int] = []
        test_users: list[int] = []
        own_files = {int(t.file_of[n]) for n in S_all if t.file_of[n] >= 0}
        for u in S_all:
            pos, src = g.engine.in_edges(u)
            for p, v in zip(pos.tolist(), src.tolist()):
                if int(g.engine.csr.relations[p]) not in DEPENDENCY or v in S_all:
                    continue
                if int(t.file_of[v]) in own_files:
                    continue
                (test_users if t.is_test[v] else users).append(v)
        if users:
            add(Evidence("used_by", f"used by {len(set(users))} node(s) outside its file", F["some"],
                         sorted(set(users))[:10]))
        elif test_users:
            add(Evidence("only_tests", "only tests use it", F["only_tests"], sorted(set(test_users))[:10]))
        else:
            add(Evidence("no_users", "no incoming dependency from outside its file", F["none"]))
    elif kind == "tested":
        targets = S | {int(t.file_of[n]) for n in S if t.file_of[n] >= 0}
        edge = None
        for u in targets:
            pos, src = g.engine.in_edges(u)
            for p, v in zip(pos.tolist(), src.tolist()):
                if int(g.engine.csr.relations[p]) == TESTS:
                    edge = (v, u)
        near: list[int] = []
        if edge is None:
            dist = search.reach(targets, relations=None, directed=False, max_hops=2)
            near = [n for n in dist if t.is_test[n]]
        f_edge, f_near, f_none = F["edge"], F["near"], F["none"]
        if negated:
            f_edge, f_near, f_none = 1 / f_edge, 1 / f_near, 1 / f_none
        if edge is not None:
            add(Evidence("tests_edge", f"{t.label[edge[0]]} tests {t.label[edge[1]]}", f_edge, list(edge),
                         ["tests"]))
        elif near:
            add(Evidence("test_nearby", "a test within 2 hops", f_near, near[:5]))
        else:
            add(Evidence("no_tests", "no test edge and no test within 2 hops", f_none))
    else:  # unknown
        s, o = next(iter(S)), next(iter(O))
        paths, total, exhausted, _ = g.engine.k_paths(s, o, max_hops=max_hops, max_paths=1, budget=path_budget)
        search.explored += min(total, path_budget)
        search.exhausted |= exhausted
        if paths:
            p = paths[0]
            add(Evidence("path", f"{len(p.edges)}-hop path", F["path"], p.nodes.tolist(),
                         [relation_name(int(g.engine.csr.relations[e]), int(d_) > 0) for e, d_ in zip(p.edges, p.dirs)],
                         round(p.strength, 6)))
        else:
            add(Evidence("no_path", f"no path within {max_hops} hops", F["none"]))
    if include_ghost_edges and ghost_pairs and kind in ("depends_on", "coupling", "unknown"):
        for s in S:
            for o in O:
                if (s, o) in ghost_pairs or (o, s) in ghost_pairs:
                    add(Evidence("ghost_edge", "strongly co-activated without a direct edge", 1.2, [s, o]))
                    break
    odds = 1.0
    for ev in support + contra:
        odds *= ev.likelihood_factor
    confidence = min(0.99, max(0.01, odds / (1.0 + odds)))
    verdict = "likely_true" if confidence >= 0.8 else "likely_false" if confidence <= 0.2 else "inconclusive"

    def ent(items: list[tuple[int, float]]) -> list[ClaimNode]:
        return [ClaimNode(node_id=t.ext_id[n], label=t.label[n], relevance=round(v, 4)) for n, v in items]

    def evd(ev: Evidence) -> ClaimEvidence:
        return ClaimEvidence(evidence_type=ev.evidence_type, description=ev.description,
                            likelihood_factor=round(ev.likelihood_factor, 4), nodes=[t.ext_id[n] for n in ev.nodes],
                            relations=ev.relations, path_strength=ev.path_strength)

    partial = None
    if include_partial_flow and reached_for_partial is not None:
        a, b = reached_for_partial
        dist = search.reach(a, relations=DEPENDENCY, directed=True, max_hops=max_hops)
        to_obj = search.reach(b, relations=None, directed=False, max_hops=max_hops)
        closest = min(((to_obj[n], n) for n in dist if n in to_obj), default=None)
        partial = PartialReach(
            nodes_reached=len(dist), max_depth_reached=max(dist.values(), default=0),
            closest_to_object=({"node_id": t.ext_id[closest[1]], "hops": int(closest[0])} if closest else None))
    return HypothesisResult(
        claim=claim, claim_type=kind, negated=negated, subject_nodes=ent(subj), object_nodes=ent(obj),
        via_nodes=ent(via), verdict=verdict, confidence=round(confidence, 4),
        supporting_evidence=[evd(e) for e in support], contradicting_evidence=[evd(e) for e in contra],
        partial_reach=partial, paths_explored=search.explored, budget_exhausted=search.exhausted)


