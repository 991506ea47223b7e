"""The twelve perspective operations (perspectives.md §4–§10): state per agent, persistence, versions, locks.

One :class:`PerspectiveService` per process and workspace, built by :class:`m1nd.workspace.Workspace`
(``ws.perspectives``). Every operation runs under the code
graph's lock (the graph must not change underneath a synthesis). State is read from ``graph.db`` whenever another
process wrote it since this one last did (the row's ``updated_ms`` is compared), and written back after every call
that changes it, so perspectives survive restarts and can be continued by another server on the same workspace.

Why one module of this size: the twelve operations share one per-agent state, its version checks, its persistence and
its locks; each operation is a short method over that state, and pulling them apart would spread one invariant (the
state on disk equals the state served) over several files.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from m1nd.errors import InvalidInputError, LimitReachedError, M1ndError, NotFoundError
from m1nd.graph.activation import DIMENSIONS, ActivationParams, run_activation
from m1nd.graph.model import Graph
from m1nd.graph.queries import resolve_node
from m1nd.graph.seeds import tokenize
from m1nd.perspectives import peek as pk
from m1nd.perspectives import graph_facts as gf
from m1nd.perspectives import synthesis as syn
from m1nd.perspectives.lens import FAMILIES, parse_lens, short_family
from m1nd.perspectives.results import (NodeBrief, PeekContent, PerspectiveBack, PerspectiveBranch, PerspectiveClosed,
                                       PerspectiveComparison, PerspectiveFollowed, PerspectiveList, PerspectiveRoutes,
                                       PerspectiveStarted, PerspectiveSummary, RouteAffinity, RouteInspection,
                                       RoutePeek, Suggestion)
from m1nd.perspectives.state import (
    BRANCH_NAME_RE,
    ID_RE,
    QUERY_ACT_TOP,
    Perspective,
    agent_slug,
    pack_activation,
    unpack_activation,
)
from m1nd.timeutil import now_ms

if TYPE_CHECKING:
    from m1nd.codegraph.service import CodeGraph

MAX_PERSPECTIVES = 8
MAX_BRANCHES = 10
MAX_TOTAL_BYTES = 50 * 1024 * 1024
IDLE_MS = 24 * 3600 * 1000
FIRST_PAGE = 6
NOTICE = "Probable connections, not verified edges."
MODE_NOTE = ("the focus is more than 8 hops from the anchor (or cut off from it): routes are ranked locally, "
             "without anchor relevance, until navigation comes back within 8 hops")


@dataclass
class RegionLock:
    lock_id: str
    agent_id: str
    perspective_id: str
    anchor: str
    nodes: frozenset[str]


class PerspectiveService:
    def __init__(self, cg: CodeGraph, *, max_perspectives: int = MAX_PERSPECTIVES, max_branches: int = MAX_BRANCHES,
                 max_total_bytes: int = MAX_TOTAL_BYTES, idle_ms: int = IDLE_MS,
                 semantic: gf.SemanticBackend | None = None) -> None:
        self.cg = cg
        self.semantic = semantic  # code-node embeddings, from the composition root (None: the trigram backend)
        self.max_perspectives = max_perspectives
        self.max_branches = max_branches
        self.max_total_bytes = max_total_bytes
        self.idle_ms = idle_ms
        self.loaded: dict[str, Perspective] = {}
        self.stamps: dict[str, int] = {}
        self.sizes: dict[str, int] = {}
        self.locks: dict[str, RegionLock] = {}
        self.lock_seq: dict[str, int] = {}
        self._roots: tuple[int, dict[int, pk.RootInfo]] | None = None
        self._last_sweep_ms = 0

    @property
    def db(self) -> Any:
        return self.cg.store.db

    @property
    def repo(self) -> Any:
        return self.cg.store.perspectives

    # -- public counters (health, trails) ---------------------------------------------------------------------
    def count(self, agent_id: str) -> int:
        with self.cg.lock:
            return int(self.repo.count(agent_id))

    def lock_count(self) -> int:
        return len(self.locks)

    def visited_nodes(self, agent_id: str) -> list[str]:
        """Visited nodes of all the agent's open perspectives (first visit order, no repeats): trail capture."""
        out: dict[str, None] = {}
        with self.cg.lock:
            for p in self._agent_perspectives(agent_id):
                for e in p.visited:
                    out.setdefault(e, None)
        return list(out)

    # -- loading and saving --------------------------------------------------------------------------------------
    def _not_found(self, pid: str, agent: str, suffix: str = "; see perspective_list") -> NotFoundError:
        return NotFoundError(f"perspective '{pid}' not found for agent '{agent}'{suffix}",
                             recover="call perspective_list to see your open perspectives",
                             details={"perspective_id": pid})

    def _forget(self, pid: str) -> None:
        self.loaded.pop(pid, None)
        self.stamps.pop(pid, None)
        self.sizes.pop(pid, None)

    def _load(self, pid: str, agent: str, updated: int) -> Perspective:
        p = self.loaded.get(pid)
        if p is not None and self.stamps.get(pid) == updated:
            return p
        text = self.repo.state(pid)
        if text is None:
            self._forget(pid)
            raise self._not_found(pid, agent)
        q = Perspective.decode(text)
        if p is not None:
            q.last_accessed_ms = max(q.last_accessed_ms, p.last_accessed_ms)
            if q.lock_ids == p.lock_ids:
                q.cache = {k: v for k, v in p.cache.items() if k != "compare"} if (
                    q.seeds == p.seeds and q.anchor_node == p.anchor_node and q.query_act == p.query_act) else {}
        self.loaded[pid] = q
        self.stamps[pid] = updated
        self.sizes[pid] = len(text.encode("utf-8"))
        return q

    def _get(self, agent: str, pid: str, *, suffix: str = "; see perspective_list") -> Perspective:
        if not isinstance(pid, str) or not ID_RE.match(pid):
            raise self._not_found(pid, agent, suffix)
        row = self.repo.owner_and_stamp(pid)
        if row is None:
            self._release_locks_of(pid)
            self._forget(pid)
            raise self._not_found(pid, agent, suffix)
        if row[0] != agent:
            raise self._not_found(pid, agent, suffix)
        p = self._load(pid, agent, int(row[1]))
        p.last_accessed_ms = now_ms()
        return p

    def _save(self, p: Perspective, *, new_for: str | None = None) -> None:
        """Write the state (one transaction). ``new_for``: allocate the perspective's id for this agent in the
        same transaction (start, branch), so a failed write leaves neither a row nor a used number behind."""
        with self.db.write():
            if new_for is not None:
                p.perspective_id = self._next_id(new_for)
                for lid in p.lock_ids:
                    if lid in self.locks:
                        self.locks[lid].perspective_id = p.perspective_id
            text = p.encode()
            stamp = max(now_ms(), self.stamps.get(p.perspective_id, 0) + 1)
            self.repo.save(p.perspective_id, p.agent_id, text, stamp)
        self.loaded[p.perspective_id] = p
        self.stamps[p.perspective_id] = stamp
        self.sizes[p.perspective_id] = len(text)

    def _agent_perspectives(self, agent: str) -> list[Perspective]:
        rows = self.repo.stamps_of(agent)
        out = []
        for pid, upd in rows:
            try:
                out.append(self._load(pid, agent, int(upd)))
            except NotFoundError:
                continue
        out.sort(key=lambda p: (p.created_ms, p.perspective_id))
        return out

    def _next_id(self, agent: str) -> str:
        """Next ``persp_<agent>_<NNN>`` from ``meta.perspective_seq:<agent>`` (inside the caller's transaction)."""
        slug = agent_slug(agent)
        key = f"perspective_seq:{slug}"
        cur = int(self.cg.store.meta(key, "0") or 0) + 1
        self.cg.store.set_meta(key, cur)
        return f"persp_{slug}_{cur:03d}"

    def _sweep_idle(self) -> None:
        # at most every minute (a tenth of the idle limit when that is shorter): a close 24 h after the last use
        # may come a minute late, and start/branch skip a table scan
        now = now_ms()
        if now - self._last_sweep_ms < min(60_000, self.idle_ms // 10):
            return
        self._last_sweep_ms = now
        cutoff = now - self.idle_ms
        rows = self.repo.idle_since(cutoff)
        doomed = [pid for pid in rows
                  if not (pid in self.loaded and self.loaded[pid].last_accessed_ms >= cutoff)]
        if not doomed:
            return
        with self.db.write():
            for pid in doomed:
                self.repo.delete(pid)
        for pid in doomed:
            self._release_locks_of(pid)
            self._forget(pid)

    def _check_capacity(self, agent: str) -> None:
        n = int(self.repo.count(agent))
        if n >= self.max_perspectives:
            raise LimitReachedError(f"agent '{agent}' has {n} open perspectives; close one (see perspective_list)",
                                    recover="call perspective_close on a perspective you no longer need",
                                    details={"limit": "max_perspectives", "open": n})
        total = sum(self.sizes.values())
        if total >= self.max_total_bytes:
            raise LimitReachedError(f"perspectives in this process use {total} bytes (limit {self.max_total_bytes}); "
                                    "close some (see perspective_list)",
                                    recover="call perspective_close on perspectives you no longer need",
                                    details={"limit": "max_total_bytes", "bytes": total})

    # -- caches, modes, locks ------------------------------------------------------------------------------------
    def _caches(self, p: Perspective, g: Graph) -> dict[str, Any]:
        c = p.cache
        if c.get("gen") != g.graph_generation or c.get("n") != g.n:
            idx = g.nodes.index
            qa = np.zeros(g.n, np.float32)
            if p.query_act.get("gen") == g.graph_generation:
                qi, qv = unpack_activation(p.query_act)
                ok = qi < g.n
                qa[qi[ok]] = qv[ok]
            c.clear()
            c.update(gen=g.graph_generation, n=g.n, query_act=qa, anchor_act=None, anchor_hops=None)
            a = idx.get(p.anchor_node) if p.anchor_node else None
            if a is not None:
                c["anchor_act"], c["anchor_hops"] = syn.anchor_caches(g, a)
        return c

    def _mode_effective(self, p: Perspective, g: Graph) -> str:
        if p.mode != "anchored":
            return "local"
        hops = self._caches(p, g)["anchor_hops"]
        i = g.nodes.index.get(p.focus_node)
        if hops is None or i is None:
            return "local"
        d = int(hops[i])
        return "anchored" if 0 <= d <= syn.ANCHOR_HOPS else "local"

    def _synthesize(self, p: Perspective, g: Graph) -> None:
        c = self._caches(p, g)
        idx = g.nodes.index
        inp = syn.SynthesisInput(
            focus=idx[p.focus_node], lens=p.lens, anchored=p.mode_effective == "anchored",
            anchor_act=c["anchor_act"], query_act=c["query_act"],
            visited=[idx[e] for e in p.visited if e in idx],
            seen_targets={idx[e] for e in p.seen_targets if e in idx}, last_family=p.last_family,
            semantic=self.semantic)
        rs = syn.synthesize(g, inp)
        p.routes, p.diagnostic, p.semantic_backend = rs.routes, rs.diagnostic, rs.semantic_backend

    def _take_lock(self, p: Perspective, g: Graph) -> tuple[str | None, list[dict[str, Any]]]:
        a = g.nodes.index.get(p.anchor_node) if p.anchor_node else None
        if p.mode != "anchored" or a is None:
            return None, []
        slug = agent_slug(p.agent_id)
        n = self.lock_seq.get(slug, 0) + 1
        self.lock_seq[slug] = n
        lock_id = f"lock_{slug}_{n:03d}"
        nodes = frozenset(g.nodes.ext_id[i] for i in syn.region(g, a))
        overlapping = []
        for other in sorted(self.locks.values(), key=lambda lk: lk.lock_id):
            if other.agent_id == p.agent_id or not nodes:
                continue
            ov = len(nodes & other.nodes) / len(nodes)
            if ov >= 0.2:
                overlapping.append({"lock_id": other.lock_id, "agent_id": other.agent_id, "overlap": round(ov, 3)})
        self.locks[lock_id] = RegionLock(lock_id, p.agent_id, p.perspective_id, p.anchor_node or "", nodes)
        p.lock_ids = [lock_id]
        return lock_id, overlapping

    def _ensure_lock(self, p: Perspective, g: Graph) -> None:
        """An anchored perspective reloaded after a restart takes its lock again on its next call."""
        if p.mode == "anchored" and not any(lid in self.locks for lid in p.lock_ids):
            self._take_lock(p, g)

    def _release_locks_of(self, pid: str) -> list[str]:
        gone = [lid for lid, lk in self.locks.items() if lk.perspective_id == pid]
        for lid in gone:
            del self.locks[lid]
        return gone

    def _relock_regions(self, p: Perspective, g: Graph) -> None:
        a = g.nodes.index.get(p.anchor_node) if p.anchor_node else None
        for lid in p.lock_ids:
            lk = self.locks.get(lid)
            if lk is not None:
                lk.nodes = frozenset(g.nodes.ext_id[i] for i in syn.region(g, a)) if a is not None else frozenset()

    # -- query activation, refresh -------------------------------------------------------------------------------
    def _query_activation(self, g: Graph, agent: str, query: str, dims: list[str]) -> tuple[Any, dict[str, Any]]:
        run = run_activation(g, query, ActivationParams(dimensions=tuple(dims)), boosts=self.cg.boosts_for(g, agent),
                             semantic_scores=self.cg.query_semantic(g, query))
        act = run.activation
        nz = run.support[act[run.support] > 0]
        if len(nz) > QUERY_ACT_TOP:
            nz = np.sort(nz[np.argpartition(-act[nz], QUERY_ACT_TOP)[:QUERY_ACT_TOP]])
        return run, pack_activation(g.graph_generation, nz, act[nz])

    def _rebase(self, p: Perspective, g: Graph, agent: str, preferred: str | None) -> None:
        """Move a perspective onto the current graph generation: new query activation, a surviving focus."""
        idx = g.nodes.index
        run, qa = self._query_activation(g, agent, p.query, p.lens.dimensions) if (
            tokenize(p.query) or g.seeds.ext_lookup.get(p.query.strip()) is not None) else (None, {})
        p.query_act = qa
        if run is not None:
            t = g.nodes
            p.seeds = [[t.ext_id[i], round(float(s), 4)] for i, s in zip(run.seeds.nodes.tolist(),
                                                                         run.seeds.scores.tolist())]
        order = [preferred] if preferred else []
        order += [cp["focus"] for cp in reversed(p.history)]
        if p.anchor_node:
            order.append(p.anchor_node)
        if p.seeds:
            order.append(p.seeds[0][0])
        focus = next((e for e in order if e and e in idx), None)
        if focus is None:
            raise M1ndError("the focus and its history no longer exist; close this perspective and start again",
                            code="perspective_broken", recover="call perspective_close, then perspective_start",
                            details={"perspective_id": p.perspective_id})
        p.focus_node = focus
        p.visit(focus)
        p.cache.clear()
        p.cache_generation = g.graph_generation
        p.mode_effective = self._mode_effective(p, g)
        self._relock_regions(p, g)

    def _refresh_if_stale(self, p: Perspective, g: Graph, agent: str) -> bool:
        if p.cache_generation == g.graph_generation:
            return False
        p.remember_targets()
        self._rebase(p, g, agent, p.focus_node)
        self._synthesize(p, g)
        p.route_set_version += 1
        p.refresh_version = p.route_set_version
        self._save(p)
        return True

    def _check_version(self, p: Perspective, g: Graph, agent: str, version: int) -> bool:
        refreshed = self._refresh_if_stale(p, g, agent)
        cur = p.route_set_version
        if version != cur:
            if refreshed or version < p.refresh_version:
                why = "the graph changed"
            elif version > cur:
                why = "no such version yet"
            else:
                why = "the focus moved since"
            raise M1ndError(f"route set version {version} is stale ({why}; current version is {cur}). Call "
                            f"perspective_routes with route_set_version={cur} to see the current routes, then retry",
                            code="stale_route_set",
                            recover=f"call perspective_routes with route_set_version={cur}, then retry",
                            details={"current_version": cur, "refreshed": refreshed})
        return refreshed

    @staticmethod
    def _select(p: Perspective, route_id: str | None, route_index: int | None) -> dict[str, Any]:
        if (route_id is None) == (route_index is None):
            raise InvalidInputError("pass exactly one of route_id or route_index", details={"argument": "route_id"},
                                    recover="pass route_id (from a route list) or route_index (its index), not both")
        v = p.route_set_version
        if route_id is not None:
            r = next((r for r in p.routes if r["route_id"] == route_id), None)
            if r is None:
                raise NotFoundError(f"route '{route_id}' is not in route set {v}; call perspective_routes",
                                    recover=f"call perspective_routes with route_set_version={v}",
                                    details={"route_id": route_id, "route_set_version": v})
            return r
        n = len(p.routes)
        if not 1 <= int(route_index) <= n:  # type: ignore[arg-type]
            rng = f"1..{n}" if n else "the route set is empty"
            raise NotFoundError(f"route index {route_index} is out of range ({rng}); call perspective_routes",
                                recover=f"call perspective_routes with route_set_version={v}",
                                details={"route_index": route_index, "route_set_version": v})
        return p.routes[int(route_index) - 1]  # type: ignore[arg-type]

    # -- response pieces -----------------------------------------------------------------------------------------
    def _page(self, p: Perspective, page: int, size: int) -> tuple[list[dict[str, Any]], int, int, bool]:
        total = len(p.routes)
        pages = max(1, math.ceil(total / size))
        clamped = page > pages
        page = min(page, pages)
        chunk = p.routes[(page - 1) * size: page * size]
        return [syn.public_route(r) for r in chunk], page, pages, clamped

    @staticmethod
    def _mode_note(p: Perspective) -> str | None:
        """Why an anchored perspective answers in local mode (its anchor is out of reach), or None."""
        return MODE_NOTE if p.mode == "anchored" and p.mode_effective == "local" else None

    def _suggested(self, p: Perspective) -> str | None:
        s = self.suggestion(p)
        act = s["suggestion"]
        short = act.get("short") or act["reason"]
        if len(short) > 60:
            short = short[:59] + "…"
        head = f"{act['action']} {act['route_id']}" if act.get("route_id") else act["action"]
        return f"{head} — {short}"

    def _roots_map(self) -> dict[int, pk.RootInfo]:
        gen = self.cg.store.generations()[0]
        if self._roots is None or self._roots[0] != gen:
            self._roots = (gen, {r.id: pk.RootInfo(r.id, r.path, r.namespace) for r in self.cg.store.roots()})
        return self._roots[1]

    def _provenance(self, g: Graph, x: int) -> dict[str, Any]:
        t = g.nodes
        root = self._roots_map().get(int(t.root_id[x]))
        sp = t.source_path[x]
        stale = False
        if root is not None and sp and int(t.kind[x]) != syn.DIR:
            rec = self.repo.file_record(root.id, sp)
            try:
                stale = pk.file_stale(pk.resolve_inside(root.path, sp), rec)
            except M1ndError:
                stale = True
        return {"source_path": sp or None, "line_start": int(t.line_start[x]), "line_end": int(t.line_end[x]),
                "namespace": root.namespace if root else None, "signature": t.signature[x] or None,
                "provenance_stale": stale}

    # -- suggest (pure on the state) -------------------------------------------------------------------------------
    def suggestion(self, p: Perspective) -> dict[str, Any]:
        visited = set(p.visited)
        followed = set(p.follows)
        last_two = p.follows[-2:]

        def adj(r: dict[str, Any]) -> float:
            a = float(r["score"])
            if r["family"] not in followed:
                a *= 1.2
            if len(last_two) == 2 and last_two[0] == last_two[1] == r["family"]:
                a *= 0.8
            return round(a, 6)

        cands = sorted(((adj(r), r) for r in p.routes if r["target_node"] not in visited),
                       key=lambda ar: (-ar[0], ar[1]["index"]))
        based_on = "navigation_history" if p.follows else "initial_ranking"
        if not cands:
            if p.history:
                prev = p.history[-1]["focus"]
                sugg = {"action": "back", "route_id": None, "target_node": prev, "target_label": _tail(prev),
                        "reason": f"Every route from here leads to a visited node; go back to {_tail(prev)}",
                        "confidence": 0.5, "short": "every route leads to a visited node"}
            else:
                sugg = {"action": "close", "route_id": None, "target_node": None, "target_label": None,
                        "reason": "Nothing unexplored is reachable from this focus; close this perspective or "
                                  "start one with other words", "confidence": 0.3, "short": "nothing left to explore"}
            return {"suggestion": sugg, "alternatives": [], "based_on": "exhaustion_recovery"}
        a1, best = cands[0]
        a2 = cands[1][0] if len(cands) > 1 else 0.0
        conf = min(0.95, max(0.05, min(0.9, a1) * (0.7 + 0.3 * min(1.0, (a1 - a2) / 0.2))))
        fam = best["family"]
        fresh = "Unexplored" if fam not in followed else "Continued"
        if len(cands) > 1 and a1 - a2 <= 0.05 and cands[1][1]["family"] != fam:
            other = cands[1][1]
            action = "branch"
            reason = (f"Two routes of different families score within 0.05: {short_family(fam)} to "
                      f"{best['target_label']} ({a1:.2f}) and {short_family(other['family'])} to "
                      f"{other['target_label']} ({a2:.2f}); branch to explore both")
            short = f"{best['target_label']} and {other['target_label']} are close"
        elif a1 >= 0.35:
            action = "follow"
            reason = f"{fresh} {short_family(fam)} route with the best score ({a1:.2f}): {best['reason']}"
            short = best["reason"]
        else:
            action = "inspect"
            reason = (f"The best route scores only {a1:.2f} ({short_family(fam)}: {best['reason']}); inspect it "
                      "before following")
            short = f"best score only {a1:.2f}"
        sugg = {"action": action, "route_id": best["route_id"], "target_node": best["target_node"],
                "target_label": best["target_label"], "reason": reason, "confidence": round(conf, 4), "short": short}
        alts = [{"action": "follow" if a >= 0.35 else "inspect", "route_id": r["route_id"],
                 "target_node": r["target_node"], "score": r["score"]} for a, r in cands[1:4]]
        return {"suggestion": sugg, "alternatives": alts, "based_on": based_on}

    # ================================================================================================ the tools
    def start(self, agent: str, query: str, anchor_node: str | None = None,
              lens: dict[str, Any] | None = None) -> PerspectiveStarted:
        lz = parse_lens(lens)
        with self.cg.lock:
            g = self.cg.require_graph()
            self._sweep_idle()
            self._check_capacity(agent)
            anchor_i = resolve_node(g, anchor_node, argument="anchor_node") if anchor_node else None
            has_words = bool(tokenize(query)) or g.seeds.ext_lookup.get(query.strip()) is not None
            run, qa = self._query_activation(g, agent, query, lz.dimensions) if has_words else (None, {})
            seeds = run.seeds.nodes.tolist() if run is not None else []
            if anchor_i is None and not seeds:
                raise M1ndError(f"nothing in the graph matches '{query}'; pass anchor_node=<external id> or use "
                                "other words", code="no_focus",
                                recover="use identifiers or file names, or pass anchor_node (see activate)")
            t = g.nodes
            focus = anchor_i if anchor_i is not None else int(seeds[0])
            now = now_ms()
            p = Perspective(
                perspective_id="", agent_id=agent, query=query,
                seeds=[[t.ext_id[i], round(float(s), 4)] for i, s in zip(seeds, run.seeds.scores.tolist())]
                if run is not None else [],
                mode="anchored" if anchor_i is not None else "local", mode_effective="local",
                anchor_node=t.ext_id[anchor_i] if anchor_i is not None else None, focus_node=t.ext_id[focus],
                lens=lz, routes=[], route_set_version=1, cache_generation=g.graph_generation, visited=[t.ext_id[focus]],
                query_act=qa, created_ms=now, last_accessed_ms=now)
            p.mode_effective = self._mode_effective(p, g)
            self._synthesize(p, g)
            lock_id, overlapping = self._take_lock(p, g)
            try:
                self._save(p, new_for=agent)
            except BaseException:
                if lock_id:
                    self.locks.pop(lock_id, None)
                raise
            pid = p.perspective_id
            routes, _, pages, _ = self._page(p, 1, FIRST_PAGE)
            return PerspectiveStarted(
                perspective_id=pid, mode=p.mode, mode_effective=p.mode_effective, mode_note=self._mode_note(p),
                anchor_node=p.anchor_node, focus_node=p.focus_node, focus_label=t.label[focus],
                seeds=[NodeBrief(node_id=t.ext_id[i], label=t.label[i], relevance=round(float(s), 4))
                       for i, s in zip(seeds[:5], run.seeds.scores.tolist()[:5])] if run is not None else [],
                routes=routes, total_routes=len(p.routes), page=1, total_pages=pages,
                route_set_version=p.route_set_version, cache_generation=p.cache_generation,
                lens_summary=lz.summary(), lock_id=lock_id, overlapping_locks=overlapping,
                suggested=self._suggested(p), semantic_backend=p.semantic_backend, diagnostic=p.diagnostic)

    def routes(self, agent: str, pid: str, page: int = 1, page_size: int = FIRST_PAGE,
               route_set_version: int | None = None) -> PerspectiveRoutes:
        if page < 1:
            raise InvalidInputError(
                f"argument 'page' must be an integer ≥ 1 (got {page})", details={"argument": "page"}
            )
        size = min(10, max(1, page_size))
        with self.cg.lock:
            p = self._get(agent, pid)
            g = self.cg.require_graph()
            self._ensure_lock(p, g)
            refreshed = self._refresh_if_stale(p, g, agent)
            routes, page_out, pages, page_clamped = self._page(p, page, size)
            counts: dict[str, int] = {}
            for r in p.routes:
                counts[r["family"]] = counts.get(r["family"], 0) + 1
            return PerspectiveRoutes(
                perspective_id=pid, mode=p.mode, mode_effective=p.mode_effective, mode_note=self._mode_note(p),
                anchor=p.anchor_node, focus=p.focus_node, lens_summary=p.lens.summary(), routes=routes,
                total_routes=len(p.routes), page=page_out, total_pages=pages, page_size=size,
                page_size_clamped=size != page_size, page_clamped=page_clamped,
                route_set_version=p.route_set_version, cache_generation=p.cache_generation, refreshed=refreshed,
                version_mismatch=route_set_version is None or route_set_version != p.route_set_version,
                family_counts={f: counts[f] for f in FAMILIES if f in counts},
                suggested=self._suggested(p) if page_out == 1 else None, diagnostic=p.diagnostic)

    def _current(self, agent: str, pid: str, route_set_version: int) -> tuple[Perspective, Graph]:
        """The prologue of every route-addressed tool (caller holds the graph lock): the agent's perspective, the
        current graph, its region lock refreshed, and the caller's ``route_set_version`` checked."""
        p = self._get(agent, pid)
        g = self.cg.require_graph()
        self._ensure_lock(p, g)
        self._check_version(p, g, agent, route_set_version)
        return p, g

    def inspect(self, agent: str, pid: str, route_set_version: int, route_id: str | None = None,
                route_index: int | None = None) -> RouteInspection:
        with self.cg.lock:
            p, g = self._current(agent, pid, route_set_version)
            r = self._select(p, route_id, route_index)
            x = g.nodes.index[r["target_node"]]
            t = g.nodes
            eng = g.engine
            aff, backend, _ = syn.affinity(g, x, 3, self.semantic)
            return RouteInspection(
                route=syn.public_route(r), target_type=r["target_kind"],
                family_explanation=syn.FAMILY_EXPLANATION[r["family"]], path=list(r["path"]),
                path_relations=list(r["path_relations"]), score_breakdown=dict(r["breakdown"]),
                score_weights=dict(r["weights"]), provenance=self._provenance(g, x),
                affinity_candidates=[{"node_id": a["node_id"], "label": a["label"], "strength": a["strength"],
                                      "reason": a["reason"]} for a in aff],
                target_metrics={"in_degree": int(eng.degree("in")[x]), "out_degree": int(eng.degree("out")[x]),
                                "pagerank": round(float(t.pagerank[x]), 5), "churn": round(float(t.churn[x]), 4),
                                "last_change_ms": int(t.last_change_ms[x])},
                perspective_id=pid, mode_effective=p.mode_effective, route_set_version=p.route_set_version,
                semantic_backend=backend)

    def peek(self, agent: str, pid: str, route_set_version: int, route_id: str | None = None,
             route_index: int | None = None, max_lines: int = 40, max_chars: int = 2000,
             context_lines: int = 0) -> RoutePeek:
        with self.cg.lock:
            p, g = self._current(agent, pid, route_set_version)
            r = self._select(p, route_id, route_index)
            x = g.nodes.index[r["target_node"]]
            t = g.nodes
            kind = int(t.kind[x])
            sp = t.source_path[x]
            if kind == syn.DIR:
                raise pk.not_peekable("directories have no content; follow a file or symbol route")
            pk.check_relpath(sp)
            if not syn.peekable(g, x):
                raise pk.not_peekable("this node has no source line span")
            root = self._roots_map().get(int(t.root_id[x]))
            if root is None:
                raise pk.denied(sp, "it is not inside an ingested root")
            real = pk.resolve_inside(root.path, sp)
            rec = self.repo.file_record(root.id, sp)
        text, replaced = pk.read_file(real, sp)
        ex = pk.excerpt(text, is_file=kind == syn.FILE, line_start=int(t.line_start[x]), line_end=int(t.line_end[x]),
                        max_lines=max_lines, max_chars=max_chars, context=context_lines)
        return RoutePeek(perspective_id=pid, route_id=r["route_id"], target_node=r["target_node"],
                         content=PeekContent(excerpt=ex["excerpt"], file_path=sp, line_start=ex["line_start"],
                                             line_end=ex["line_end"], truncated=ex["truncated"],
                                             span_lines=ex["span_lines"], encoding_replaced=replaced),
                         provenance_stale=pk.file_stale(real, rec), route_set_version=route_set_version)

    def follow(self, agent: str, pid: str, route_set_version: int, route_id: str | None = None,
               route_index: int | None = None) -> PerspectiveFollowed:
        with self.cg.lock:
            p, g = self._current(agent, pid, route_set_version)
            r = self._select(p, route_id, route_index)
            prev = p.focus_node
            p.push(p.checkpoint(r))
            p.remember_targets()
            p.focus_node = r["target_node"]
            p.visit(p.focus_node)
            p.follows.append(r["family"])
            p.nav_event_count += 1
            p.mode_effective = self._mode_effective(p, g)
            self._synthesize(p, g)
            p.route_set_version += 1
            self._save(p)
            routes, _, pages, _ = self._page(p, 1, FIRST_PAGE)
            return PerspectiveFollowed(
                perspective_id=pid, previous_focus=prev, new_focus=p.focus_node,
                new_focus_label=g.nodes.label[g.nodes.index[p.focus_node]],
                followed={"route_id": r["route_id"], "family": r["family"], "target_node": r["target_node"]},
                mode=p.mode, mode_effective=p.mode_effective, mode_note=self._mode_note(p), routes=routes,
                total_routes=len(p.routes), page=1, total_pages=pages, route_set_version=p.route_set_version,
                cache_generation=p.cache_generation, suggested=self._suggested(p), diagnostic=p.diagnostic)

    def suggest(self, agent: str, pid: str, route_set_version: int) -> Suggestion:
        with self.cg.lock:
            p, _ = self._current(agent, pid, route_set_version)
            s = self.suggestion(p)
        sugg = {k: v for k, v in s["suggestion"].items() if k != "short"}
        return Suggestion(perspective_id=pid, suggestion=sugg, alternatives=s["alternatives"], based_on=s["based_on"],
                          route_set_version=p.route_set_version)

    def affinity(self, agent: str, pid: str, route_set_version: int, route_id: str | None = None,
                 route_index: int | None = None, top_k: int = 8) -> RouteAffinity:
        with self.cg.lock:
            p, g = self._current(agent, pid, route_set_version)
            r = self._select(p, route_id, route_index)
            cands, backend, diag = syn.affinity(g, g.nodes.index[r["target_node"]], top_k, self.semantic)
        return RouteAffinity(perspective_id=pid, route_id=r["route_id"], target_node=r["target_node"], notice=NOTICE,
                             candidates=cands, semantic_backend=backend, route_set_version=p.route_set_version,
                             diagnostic=diag)

    def branch(self, agent: str, pid: str, branch_name: str | None = None) -> PerspectiveBranch:
        if branch_name is not None and not BRANCH_NAME_RE.match(branch_name):
            raise InvalidInputError(f"branch_name '{branch_name}' must match ^[A-Za-z0-9][A-Za-z0-9 _.-]{{0,63}}$ "
                                    "(letters, digits, space, _ . -; at most 64 characters)",
                                    details={"argument": "branch_name"})
        with self.cg.lock:
            p = self._get(agent, pid)
            self._sweep_idle()
            root = p.tree_root or p.perspective_id
            mine = self._agent_perspectives(agent)
            tree = [q for q in mine if (q.tree_root or q.perspective_id) == root]
            branches = [q for q in tree if q.perspective_id != root]
            if len(branches) >= self.max_branches:
                raise LimitReachedError(f"perspective tree '{root}' has {len(branches)} branches (limit "
                                        f"{self.max_branches}); close one (see perspective_list)",
                                        recover="call perspective_close on a branch you no longer need",
                                        details={"limit": "max_branches"})
            self._check_capacity(agent)
            names = {q.branch_name for q in tree if q.branch_name}
            if branch_name is None:
                n = len(branches) + 1
                while f"branch_{n}" in names:
                    n += 1
                branch_name = f"branch_{n}"
            elif branch_name in names:
                raise InvalidInputError(f"branch name '{branch_name}' is already used in this perspective tree; "
                                        "pick another", details={"argument": "branch_name"})
            q = p.clone("")
            now = now_ms()
            q.branch_of, q.branch_name, q.tree_root = p.perspective_id, branch_name, root
            q.lock_ids, q.created_ms, q.last_accessed_ms = [], now, now
            lock_id = None
            if q.mode == "anchored":
                g = self.cg.graph()
                if g.n:
                    lock_id, _ = self._take_lock(q, g)
            try:
                self._save(q, new_for=agent)
            except BaseException:
                if lock_id:
                    self.locks.pop(lock_id, None)
                raise
            new_id = q.perspective_id
        return PerspectiveBranch(perspective_id=pid, branch_perspective_id=new_id, branch_name=branch_name,
                                 branched_from_focus=p.focus_node, route_set_version=q.route_set_version,
                                 lock_id=lock_id)

    def back(self, agent: str, pid: str) -> PerspectiveBack:
        with self.cg.lock:
            p = self._get(agent, pid)
            if not p.history:
                raise M1ndError("nothing to go back to; this perspective has no follow to undo",
                                code="navigation_at_root",
                                recover="call perspective_routes to see the current routes, or perspective_follow")
            g = self.cg.require_graph()
            self._ensure_lock(p, g)
            cp = p.history.pop()
            gen = g.graph_generation
            if p.cache_generation != gen or cp.get("generation") != gen:
                graph_moved = p.cache_generation != gen
                p.remember_targets()
                if graph_moved:
                    self._rebase(p, g, agent, cp["focus"])
                else:
                    p.focus_node = cp["focus"]
                    p.mode_effective = self._mode_effective(p, g)
                self._synthesize(p, g)
                p.route_set_version += 1
                if graph_moved:
                    p.refresh_version = p.route_set_version
            else:
                p.focus_node = cp["focus"]
                p.routes = cp["routes"]
                p.mode_effective = cp["mode_effective"]
                p.diagnostic = cp.get("diagnostic")
                p.route_set_version += 1
            p.nav_event_count += 1
            self._save(p)
            routes, _, pages, _ = self._page(p, 1, FIRST_PAGE)
            return PerspectiveBack(
                perspective_id=pid, restored_focus=p.focus_node, restored_mode=p.mode_effective, mode=p.mode,
                routes=routes, total_routes=len(p.routes), page=1, total_pages=pages,
                route_set_version=p.route_set_version, cache_generation=p.cache_generation,
                nav_event_count=p.nav_event_count, suggested=self._suggested(p), mode_note=self._mode_note(p))

    def _compare_dims(self, p: Perspective, g: Graph) -> dict[str, np.ndarray]:
        hit = p.cache.get("compare")
        if hit is not None and hit[0] == g.graph_generation:
            return hit[1]
        idx = g.nodes.index
        seeds: dict[int, float] = {}
        for ext, s in p.seeds:
            i = idx.get(ext)
            if i is not None:
                seeds[i] = max(seeds.get(i, 0.0), float(s))
        a = idx.get(p.anchor_node) if p.anchor_node else None
        if a is not None:
            seeds[a] = 1.0
        if not seeds:
            dims = {d: np.zeros(g.n, np.float32) for d in DIMENSIONS}
        else:
            toks = tokenize(p.query)
            sem = g.trigram.similarity(toks) if toks else np.zeros(g.n, np.float32)
            if a is not None:
                sem = np.maximum(sem, gf.semantic_similarity(g, a, self.semantic)[0])
            order = sorted(seeds)
            fused = gf.fused_activation(g, np.asarray(order), np.asarray([seeds[i] for i in order]), DIMENSIONS,
                                         max_hops=5, semantic=sem)
            dims = {d: fused.dim(d) for d in DIMENSIONS}
        p.cache["compare"] = (g.graph_generation, dims)
        return dims

    def compare(self, agent: str, pid_a: str, pid_b: str, dimensions: list[str] | None = None
                ) -> PerspectiveComparison:
        if pid_a == pid_b:
            raise InvalidInputError("perspective_id_b must differ from perspective_id_a",
                                    details={"argument": "perspective_id_b"})
        suffix = " (compare works on your own perspectives only)"
        with self.cg.lock:
            pa = self._get(agent, pid_a, suffix=suffix)
            pb = self._get(agent, pid_b, suffix=suffix)
            g = self.cg.require_graph()
            idx = g.nodes.index
            t = g.nodes

            def brief(e: str) -> NodeBrief:
                i = idx.get(e)
                return NodeBrief(node_id=e, label=t.label[i] if i is not None else _tail(e))

            sa, sb = set(pa.visited), set(pb.visited)
            dims = [d for d in DIMENSIONS if d in (dimensions or DIMENSIONS)]
            da, db_ = self._compare_dims(pa, g), self._compare_dims(pb, g)

            def mean(acts: dict[str, np.ndarray], visited: list[str], d: str) -> float:
                ii = [idx[e] for e in visited if e in idx]
                return float(acts[d][ii].mean()) if ii else 0.0

            deltas = []
            for d in dims:
                a_, b_ = mean(da, pa.visited, d), mean(db_, pb.visited, d)
                deltas.append({"dimension": d, "score_a": round(a_, 4), "score_b": round(b_, 4),
                               "delta": round(a_ - b_, 4)})
            union = sa | sb
            return PerspectiveComparison(
                perspective_id_a=pid_a, perspective_id_b=pid_b,
                shared_nodes=[brief(e) for e in pa.visited if e in sb],
                unique_to_a=[brief(e) for e in pa.visited if e not in sb],
                unique_to_b=[brief(e) for e in pb.visited if e not in sa],
                overlap=round(len(sa & sb) / len(union), 4) if union else 0.0,
                dimension_deltas=deltas,
                generation_warning=(f"the perspectives were synthesised in different graph generations "
                                    f"({pa.cache_generation} vs {pb.cache_generation}); call perspective_routes on "
                                    "the older one to refresh it")
                if pa.cache_generation != pb.cache_generation else None)

    def list(self, agent: str) -> PerspectiveList:
        with self.cg.lock:
            gen = self.cg.store.generations()[0]
            items: list[PerspectiveSummary] = []
            total = 0
            for p in self._agent_perspectives(agent):
                size = self.sizes.get(p.perspective_id) or p.memory_bytes()
                total += size
                items.append(PerspectiveSummary(
                    perspective_id=p.perspective_id, mode=p.mode, mode_effective=p.mode_effective,
                    anchor_node=p.anchor_node, focus_node=p.focus_node, branch_of=p.branch_of,
                    branch_name=p.branch_name, route_count=len(p.routes), nav_event_count=p.nav_event_count,
                    stale=p.cache_generation != gen, route_set_version=p.route_set_version,
                    created_at_ms=p.created_ms, last_accessed_ms=p.last_accessed_ms, memory_bytes=size))
        return PerspectiveList(perspectives=items, total_memory_bytes=total,
                               limits={"max_perspectives": self.max_perspectives,
                                       "max_total_bytes": self.max_total_bytes})

    def close(self, agent: str, pid: str) -> PerspectiveClosed:
        with self.cg.lock:
            self._get(agent, pid)
            with self.db.write():
                self.repo.delete(pid, agent)
            released = self._release_locks_of(pid)
            self._forget(pid)
        return PerspectiveClosed(perspective_id=pid, closed=True, locks_released=released)


def _tail(ext: str) -> str:
    """A readable label for an external id whose node is gone."""
    return ext.rsplit("::", 1)[-1].rsplit("/", 1)[-1] if ext else ext


def service_for(ws: Any) -> PerspectiveService:
    """The process's perspective service for a workspace (built by the workspace, :attr:`Workspace.perspectives`)."""
    return ws.perspectives  # type: ignore[no-any-return]
