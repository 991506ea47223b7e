"""Investigation trails: save, resume, list, show, archive (learning.md §6–§12; merge is in ``trail_merge``).

A trail is an agent's investigation written down: visited nodes (with annotations and relevance), hypotheses and
conclusions (with supporting / contradicting nodes), open questions, tags and the activation boosts to re-inject
later. Trails are shared by every agent of the workspace and live in ``graph.db`` (table ``trails`` plus
``trail_tags``; ids come from the per-agent sequence ``trail_seq``), so they survive restarts and several processes
on one store never lose each other's trails: every write is one ``BEGIN IMMEDIATE`` transaction that re-reads what
it changes.

Staleness is computed at read time from the *current* graph: a trail whose nodes are mostly gone (``missing_ratio >
0.5``) is reported ``stale`` and resuming it needs ``force``. Resuming re-injects the surviving boosts into the
calling agent's priming store (they bias that agent's next activations and decay like warmup boosts) and downgrades
hypotheses whose supporting nodes vanished. Merging (:mod:`m1nd.codegraph.trail_merge`) fuses equal statements,
resolves conflicting hypotheses by confidence and recency (``unresolved`` when too close to call) and reports graph
edges that bridge the merged investigations. What ``trail_save`` accepts, and its limits, is
:mod:`m1nd.codegraph.trail_input`.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from m1nd.defaults import TRAIL_LIST_LIMIT
from m1nd.errors import InvalidInputError, LimitReachedError, M1ndError, NotFoundError, graph_empty_error
from m1nd.graph.model import Graph
from m1nd.codegraph.learning import unknown_nodes_error
from m1nd.codegraph.results import (TrailArchived, TrailDetail, TrailList, TrailResumed, TrailSaved,
                                    TrailSummary)
from m1nd.codegraph.trail_input import (MAX_BOOSTS, MAX_JSON_BYTES, MAX_QUESTION, MAX_QUESTIONS, MAX_STATEMENT,
                                        MAX_VISITED, TAG_PATTERN, bad_input, canonical_ids, max_merge,
                                        normalise_text, parse_boosts, parse_conclusions, parse_hypotheses,
                                        parse_strings, parse_tags, parse_visited)
from m1nd.store.team_contract import TrailRepository as TrailRepo
from m1nd.store.trails_repo import TRAIL_COLUMNS
from m1nd.timeutil import now_ms

if TYPE_CHECKING:
    from m1nd.codegraph.service import CodeGraph

TRAIL_ID_PATTERN = r"^trail_[a-z0-9]{1,16}_[0-9]{3,}_[0-9a-f]{6}$"
TRAIL_ID_RE = re.compile(TRAIL_ID_PATTERN)
STATUSES = ("active", "saved", "archived", "stale", "merged")

STALE_RATIO = 0.5


# -- ids and text ------------------------------------------------------------------------------------------------
def agent_slug(agent_id: str) -> str:
    """Case-folded agent id with characters outside ``[a-z0-9]`` removed, first 16 characters, ``agent`` if empty."""
    slug = "".join(c for c in agent_id.casefold() if c in "abcdefghijklmnopqrstuvwxyz0123456789")
    return slug[:16] or "agent"


def check_trail_id(trail_id: Any, argument: str = "trail_id") -> str:
    if not isinstance(trail_id, str) or not TRAIL_ID_RE.match(trail_id):
        raise InvalidInputError(f"'{trail_id}' is not a trail id (expected trail_<agent>_<NNN>_<hex6>)",
                                details={"argument": argument},
                                recover="copy the id from trail_save or trail_list")
    return trail_id


def trail_not_found(trail_id: str) -> NotFoundError:
    return NotFoundError(f"no trail '{trail_id}'; call trail_list", recover="call trail_list to see existing trails")


# -- the stored record -------------------------------------------------------------------------------------------
@dataclass
class Trail:
    trail_id: str
    agent_id: str
    label: str
    status: str
    summary: str
    tags: list[str]
    visited: list[dict[str, Any]]
    hypotheses: list[dict[str, Any]]
    conclusions: list[dict[str, Any]]
    open_questions: list[str]
    boosts: dict[str, float]
    graph_generation: int
    created_ms: int
    last_modified_ms: int
    source_trails: list[str] = field(default_factory=list)
    merged_into: str | None = None
    resumed_by: list[str] = field(default_factory=list)

    def nodes(self) -> list[str]:
        """Trail nodes: union of visited nodes, boost keys, hypothesis and conclusion nodes (first-seen order)."""
        out: dict[str, None] = {}
        for v in self.visited:
            out.setdefault(v["node_external_id"], None)
        for k in self.boosts:
            out.setdefault(k, None)
        for h in self.hypotheses:
            for n in (*h.get("supporting_nodes", ()), *h.get("contradicting_nodes", ())):
                out.setdefault(n, None)
        for c in self.conclusions:
            for n in c.get("supporting_nodes", ()):
                out.setdefault(n, None)
        return list(out)

    def json_columns(self) -> dict[str, str]:
        def dump(x: Any) -> str:
            return json.dumps(x, separators=(",", ":"), ensure_ascii=False)

        return {"tags_json": dump(self.tags), "visited_json": dump(self.visited),
                "hypotheses_json": dump(self.hypotheses), "conclusions_json": dump(self.conclusions),
                "open_questions_json": dump(self.open_questions), "boosts_json": dump(self.boosts),
                "source_trails_json": dump(self.source_trails), "resumed_by_json": dump(self.resumed_by)}


_COLUMNS = TRAIL_COLUMNS


def _from_row(r: tuple[Any, ...]) -> Trail:
    d = dict(zip(_COLUMNS, r))

    def load(k: str, default: Any) -> Any:
        return json.loads(d[k]) if d[k] else default

    return Trail(trail_id=d["trail_id"], agent_id=d["agent_id"], label=d["label"], status=d["status"],
                 summary=d["summary"] or "", tags=load("tags_json", []), visited=load("visited_json", []),
                 hypotheses=load("hypotheses_json", []), conclusions=load("conclusions_json", []),
                 open_questions=load("open_questions_json", []), boosts=load("boosts_json", {}),
                 graph_generation=int(d["graph_generation"] or 0), created_ms=int(d["created_ms"] or 0),
                 last_modified_ms=int(d["last_modified_ms"] or 0), source_trails=load("source_trails_json", []),
                 merged_into=d["merged_into"], resumed_by=load("resumed_by_json", []))


def load_trail(repo: TrailRepo, trail_id: str) -> Trail | None:
    r = repo.row(trail_id)
    return _from_row(r) if r else None


def insert_trail(repo: TrailRepo, t: Trail) -> None:
    cols = t.json_columns()
    size = sum(len(v.encode("utf-8")) for v in cols.values()) + len(t.summary.encode("utf-8"))
    if size > MAX_JSON_BYTES:
        raise LimitReachedError(f"trail is too large: {size} bytes of JSON (at most {MAX_JSON_BYTES})",
                                recover="save fewer nodes, shorter statements or fewer open questions")
    repo.insert((t.trail_id, t.agent_id, t.label, t.status, t.summary, cols["tags_json"], cols["visited_json"],
                 cols["hypotheses_json"], cols["conclusions_json"], cols["open_questions_json"], cols["boosts_json"],
                 t.graph_generation, t.created_ms, t.last_modified_ms, cols["source_trails_json"], t.merged_into,
                 cols["resumed_by_json"]), t.tags)


def next_trail_id(repo: TrailRepo, agent_id: str) -> str:
    """Next ``trail_<agent>_<NNN>_<hex6>`` (inside the caller's write transaction)."""
    slug = agent_slug(agent_id)
    n = repo.take_sequence_number(slug)
    while True:
        tid = f"trail_{slug}_{n:03d}_{secrets.token_hex(3)}"
        if not repo.exists(tid):
            return tid


def summarise(label: str, n_nodes: int, hyps: list[dict[str, Any]], n_concl: int, n_q: int) -> str:
    s = f"{label}: {n_nodes} nodes, {len(hyps)} hypotheses, {n_concl} conclusions, {n_q} open questions"
    if hyps:
        first = hyps[0]["statement"]
        s += " — " + (first if len(first) <= 80 else first[:79] + "…")
    return s


# -- staleness ---------------------------------------------------------------------------------------------------
@dataclass
class Staleness:
    nodes: list[str]
    missing: list[str]
    ratio: float
    stale: bool
    generations_behind: int


def staleness(g: Graph, current_generation: int, t: Trail) -> Staleness:
    nodes = t.nodes()
    idx = g.nodes.index
    missing = [n for n in nodes if n not in idx]
    ratio = len(missing) / len(nodes) if nodes else 0.0
    return Staleness(nodes, missing, ratio, ratio > STALE_RATIO, int(current_generation) - t.graph_generation)


def reported_status(status: str, stale: bool) -> str:
    return "stale" if stale and status in ("saved", "active") else status


def _summary(t: Trail, st: Staleness) -> TrailSummary:
    return TrailSummary(trail_id=t.trail_id, agent_id=t.agent_id, label=t.label,
                        status=reported_status(t.status, st.stale), stale=st.stale, created_at_ms=t.created_ms,
                        last_modified_ms=t.last_modified_ms, node_count=len(st.nodes),
                        hypothesis_count=len(t.hypotheses), conclusion_count=len(t.conclusions),
                        open_question_count=len(t.open_questions), tags=list(t.tags), summary=t.summary)


# -- trail_save --------------------------------------------------------------------------------------------------
def save(cg: CodeGraph, agent_id: str, label: str, *, hypotheses: list[Any] | None = None,
         conclusions: list[Any] | None = None, open_questions: list[Any] | None = None,
         tags: list[Any] | None = None, summary: str | None = None, visited_nodes: list[Any] | None = None,
         activation_boosts: dict[str, Any] | None = None, captured_nodes: list[str] | None = None) -> TrailSaved:
    """Save a new trail (never overwrites). ``captured_nodes``: visited nodes of the caller's open perspectives,
    used when ``visited_nodes`` is not given."""
    if not isinstance(label, str) or not label.strip() or len(label) > 200:
        raise bad_input("label must be 1..200 characters", "label")
    hyps = parse_hypotheses(list(hypotheses or []))
    concl = parse_conclusions(list(conclusions or []), hyps)
    questions = parse_strings(list(open_questions or []), "open_questions", MAX_QUESTIONS, MAX_QUESTION)
    tag_list = parse_tags(list(tags or []))
    if summary is not None and len(summary) > MAX_STATEMENT:
        raise bad_input(f"summary is too long: {len(summary)} characters (at most {MAX_STATEMENT})", "summary")
    visited = parse_visited(list(visited_nodes)) if visited_nodes is not None else None
    given_boosts = parse_boosts(activation_boosts) if activation_boosts is not None else None

    with cg.lock:
        g = cg.graph()
        # resolve every id to its canonical external id; unknown ids anywhere -> unknown_node (nothing saved)
        every: list[str] = []
        for h in hyps:
            every += h["supporting_nodes"] + h["contradicting_nodes"]
        for c in concl:
            every += c["supporting_nodes"]
        if visited is not None:
            every += [v["node_external_id"] for v in visited]
        if given_boosts is not None:
            every += list(given_boosts)
        if every and g.n == 0:
            raise graph_empty_error(cg.settings.workspace_key)
        mapping, unknown = canonical_ids(g, every)
        if unknown:
            raise unknown_nodes_error(g, unknown, argument="node ids", max_listed=10)

        def canon(ids: list[str]) -> list[str]:
            return list(dict.fromkeys(mapping[x] for x in ids))

        for h in hyps:
            h["supporting_nodes"] = canon(h["supporting_nodes"])
            h["contradicting_nodes"] = canon(h["contradicting_nodes"])
        for c in concl:
            c["supporting_nodes"] = canon(c["supporting_nodes"])

        # visited nodes: given, or captured (perspectives + hypothesis/conclusion nodes)
        if visited is not None:
            merged_v: dict[str, dict[str, Any]] = {}
            for v in visited:
                cid = mapping[v["node_external_id"]]
                old = merged_v.get(cid)
                if old is None:
                    merged_v[cid] = {**v, "node_external_id": cid}
                else:
                    old["relevance"] = max(old["relevance"], v["relevance"])
            visited_out = list(merged_v.values())
        else:
            rel: dict[str, float] = {}
            idx = g.nodes.index
            for n in captured_nodes or []:
                if n in idx:
                    max_merge(rel, n, 0.5)
            for h in hyps:
                for n in h["supporting_nodes"]:
                    max_merge(rel, n, max(h["confidence"], 0.6))
                for n in h["contradicting_nodes"]:
                    max_merge(rel, n, max(0.8 * h["confidence"], 0.45))
            for c in concl:
                for n in c["supporting_nodes"]:
                    max_merge(rel, n, max(c["confidence"], 0.7))
            ranked = sorted(rel.items(), key=lambda kv: -kv[1])[:MAX_VISITED]
            visited_out = [{"node_external_id": n, "annotation": "", "relevance": round(r, 4)} for n, r in ranked]

        # boosts: given as given, or derived
        if given_boosts is not None:
            boosts: dict[str, float] = {}
            for k, b in given_boosts.items():
                max_merge(boosts, mapping[k], b)
        else:
            boosts = {}
            for v in visited_out:
                max_merge(boosts, v["node_external_id"], round(0.2 + 0.5 * v["relevance"], 4))
            for h in hyps:
                for n in h["supporting_nodes"]:
                    max_merge(boosts, n, 0.7)
                for n in h["contradicting_nodes"]:
                    max_merge(boosts, n, 0.45)
            for c in concl:
                for n in c["supporting_nodes"]:
                    max_merge(boosts, n, 0.8)
            if len(boosts) > MAX_BOOSTS:
                boosts = dict(sorted(boosts.items(), key=lambda kv: -kv[1])[:MAX_BOOSTS])

        ts = now_ms()
        t = Trail(trail_id="", agent_id=agent_id, label=label, status="saved", summary="", tags=tag_list,
                  visited=visited_out, hypotheses=hyps, conclusions=concl, open_questions=questions, boosts=boosts,
                  graph_generation=0, created_ms=ts, last_modified_ms=ts)
        n_nodes = len(t.nodes())
        t.summary = summary if summary is not None else summarise(label, n_nodes, hyps, len(concl), len(questions))
        db, repo = cg.shared, cg.shared.trails
        with db.write():
            t.trail_id = next_trail_id(repo, agent_id)
            t.graph_generation = cg.store.generations()[0]
            insert_trail(repo, t)
    return TrailSaved(trail_id=t.trail_id, label=label, agent_id=agent_id, nodes_saved=n_nodes,
                      hypotheses_saved=len(hyps), conclusions_saved=len(concl), open_questions_saved=len(questions),
                      boosts_saved=len(boosts), graph_generation_at_creation=t.graph_generation,
                      created_at_ms=t.created_ms)


# -- trail_resume ------------------------------------------------------------------------------------------------
def resume(cg: CodeGraph, agent_id: str, trail_id: str, *, force: bool = False,
           max_listed: int = 20) -> TrailResumed:
    check_trail_id(trail_id)
    with cg.lock:
        g = cg.graph()
        db, repo = cg.shared, cg.shared.trails
        with db.write():
            t = load_trail(repo, trail_id)
            if t is None:
                raise trail_not_found(trail_id)
            if t.status == "merged":
                raise InvalidInputError(f"trail {trail_id} was merged into {t.merged_into}; resume that one",
                                        details={"argument": "trail_id", "merged_into": t.merged_into},
                                        recover=f"call trail_resume with trail_id={t.merged_into}")
            gen = cg.store.generations()[0]
            st = staleness(g, gen, t)
            if st.stale and not force:
                raise M1ndError(
                    f"trail {trail_id} is stale: {round(st.ratio * 100)}% of its {len(st.nodes)} nodes no longer "
                    f"exist (graph generation {t.graph_generation} → {gen}). Call trail_resume with force=true to "
                    "resume with the surviving nodes, or trail_list to pick another trail",
                    code="trail_stale", recover="pass force=true or pick another trail",
                    details={"missing_ratio": round(st.ratio, 4), "node_count": len(st.nodes)})
            idx = g.nodes.index
            downgraded = []
            for h in t.hypotheses:
                sup = h.get("supporting_nodes") or []
                if not sup:
                    continue
                gone = [n for n in sup if n not in idx]
                if not gone:
                    continue
                base = float(h.get("confidence_at_save", h.get("confidence", 0.5)))
                present = (len(sup) - len(gone)) / len(sup)
                new = round(base * present, 4)
                old = float(h.get("confidence", 0.5))
                if new < old:  # a repeated resume never downgrades twice for the same loss
                    h.setdefault("confidence_at_save", old)
                    h["confidence"] = new
                    if present == 0:
                        h["unsupported"] = True
                    downgraded.append({"statement": h["statement"], "old_confidence": old, "new_confidence": new,
                                       "missing_supporting_nodes": gone})
            ts = now_ms()
            resumed_by = list(t.resumed_by)
            if agent_id not in resumed_by:
                resumed_by.append(agent_id)
            repo.mark_resumed(trail_id, modified_ms=ts, resumed_by_json=json.dumps(resumed_by, ensure_ascii=False),
                              hypotheses_json=json.dumps(t.hypotheses, separators=(",", ":"), ensure_ascii=False))
            t.status, t.last_modified_ms, t.resumed_by = "active", ts, resumed_by
        surviving = {k: float(b) for k, b in t.boosts.items() if k in idx and b > 0}
        if surviving:
            cg.add_boosts(agent_id, surviving, f"trail:{trail_id}")
    focus = None
    if surviving:
        focus = min(surviving.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    return TrailResumed(trail_id=trail_id, stale=st.stale, generations_behind=st.generations_behind,
                        missing_ratio=round(st.ratio, 4), missing_nodes=st.missing[:max_listed],
                        missing_total=len(st.missing), nodes_reactivated=len(surviving),
                        hypotheses_downgraded=downgraded, trail=_summary(t, st),
                        open_questions=t.open_questions[:10], next_focus_node=focus)


# -- trail_list --------------------------------------------------------------------------------------------------
def list_trails(cg: CodeGraph, *, filter_agent_id: str | None = None, filter_status: str | None = None,
                filter_tags: list[str] | None = None, limit: int = TRAIL_LIST_LIMIT) -> TrailList:
    if filter_status is not None and filter_status not in STATUSES:
        raise bad_input(f"filter_status must be one of {', '.join(STATUSES)} (got '{filter_status}')", "filter_status")
    statuses: tuple[str, ...] = ()
    if filter_status in ("archived", "merged", "saved", "active"):
        statuses = (filter_status,)
    elif filter_status == "stale":
        statuses = ("saved", "active")
    filters: dict[str, Any] = {"agent_id": filter_agent_id or None, "tags": list(filter_tags or ()),
                               "statuses": statuses}
    # Staleness of every candidate is needed only when the status filter depends on it; otherwise only the page.
    needs_all = filter_status in ("saved", "active", "stale")
    with cg.lock:
        g = cg.graph()
        repo = cg.shared.trails
        with cg.shared.read():
            # sort the narrow rows first, then fetch the wide ones (sorting JSON columns costs ~10 ms per 3k trails)
            ids = repo.ids(**filters, limit=None if needs_all else limit)
            count = len(ids) if needs_all else repo.count(**filters)
            rows = repo.rows(ids)
            rank = {tid: k for k, tid in enumerate(ids)}
            rows.sort(key=lambda r: rank[r[0]])
            gen = cg.store.generations()[0]
        items: list[TrailSummary] = []
        total = 0
        for r in rows:
            t = _from_row(r)
            item = _summary(t, staleness(g, gen, t))
            if filter_status is not None and item.status != filter_status:
                continue
            total += 1
            if len(items) < limit:
                items.append(item)
    return TrailList(trails=items, total_count=total if needs_all else count)


# -- show / archive (CLI) ----------------------------------------------------------------------------------------
def show(cg: CodeGraph, trail_id: str) -> TrailDetail:
    check_trail_id(trail_id)
    with cg.lock:
        g = cg.graph()
        t = load_trail(cg.shared.trails, trail_id)
        if t is None:
            raise trail_not_found(trail_id)
        st = staleness(g, cg.store.generations()[0], t)
    hyps = [{k: v for k, v in h.items() if k != "confidence_at_save"} for h in t.hypotheses]
    return TrailDetail(trail_id=t.trail_id, agent_id=t.agent_id, label=t.label,
                       status=reported_status(t.status, st.stale), stale=st.stale, missing_ratio=round(st.ratio, 4),
                       generations_behind=st.generations_behind, summary=t.summary, tags=t.tags,
                       visited_nodes=t.visited, hypotheses=hyps, conclusions=t.conclusions,
                       open_questions=t.open_questions, activation_boosts=t.boosts,
                       graph_generation=t.graph_generation, created_at_ms=t.created_ms,
                       last_modified_ms=t.last_modified_ms, source_trails=t.source_trails, merged_into=t.merged_into,
                       resumed_by=t.resumed_by)


def archive(cg: CodeGraph, trail_id: str) -> TrailArchived:
    check_trail_id(trail_id)
    with cg.lock:
        db, repo = cg.shared, cg.shared.trails
        with db.write():
            t = load_trail(repo, trail_id)
            if t is None:
                raise trail_not_found(trail_id)
            if t.status == "merged":
                raise InvalidInputError(f"trail {trail_id} was merged into {t.merged_into}; archive that one",
                                        details={"argument": "trail_id"})
            repo.mark_archived(trail_id, modified_ms=now_ms())
    return TrailArchived(trail_id=trail_id)


__all__ = ["STATUSES", "TAG_PATTERN", "TRAIL_ID_PATTERN", "Trail", "agent_slug", "archive", "check_trail_id",
           "insert_trail", "list_trails", "load_trail", "next_trail_id", "normalise_text", "resume", "save", "show",
           "staleness", "summarise", "trail_not_found"]
