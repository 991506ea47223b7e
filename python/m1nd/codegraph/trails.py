"""Investigation trails: save, resume, list, merge, show, archive (learning.md §6–§12).

A trail is an agent's investigation written down: visited nodes (with annotations and relevance), hypotheses and
conclusions (with supporting / contradicting nodes), open questions, tags and the activation boosts to re-inject
later. Trails are shared by every agent of the workspace and live in ``graph.db`` (table ``trails`` plus
``trail_tags``; ids come from the per-agent sequence ``trail_seq``), so they survive restarts and several processes
on one store never lose each other's trails: every write is one ``BEGIN IMMEDIATE`` transaction that re-reads what
it changes.

Staleness is computed at read time from the *current* graph: a trail whose nodes are mostly gone (``missing_ratio >
0.5``) is reported ``stale`` and resuming it needs ``force``. Resuming re-injects the surviving boosts into the
calling agent's priming store (they bias that agent's next activations and decay like warmup boosts) and downgrades
hypotheses whose supporting nodes vanished. Merging fuses equal statements, resolves conflicting hypotheses by
confidence and recency (``unresolved`` when too close to call) and reports graph edges that bridge the merged
investigations.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from m1nd.errors import InvalidInputError, LimitReachedError, M1ndError, NotFoundError, graph_empty_error
from m1nd.graph.model import Graph, relation_name
from m1nd.codegraph.learning import unknown_nodes_error
from m1nd.codegraph.results import TrailList, TrailMerged, TrailResumed, TrailSaved, TrailSummary
from m1nd.store.team_contract import TrailRepository as TrailRepo
from m1nd.store.trails_repo import TRAIL_COLUMNS
from m1nd.timeutil import MS_PER_DAY, now_ms

if TYPE_CHECKING:
    from m1nd.codegraph.service import CodeGraph

TRAIL_ID_PATTERN = r"^trail_[a-z0-9]{1,16}_[0-9]{3,}_[0-9a-f]{6}$"
TRAIL_ID_RE = re.compile(TRAIL_ID_PATTERN)
TAG_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_./:-]{0,63}$"
TAG_RE = re.compile(TAG_PATTERN)
STATUSES = ("active", "saved", "archived", "stale", "merged")

MAX_VISITED = 2000
MAX_BOOSTS = 2000
MAX_HYPOTHESES = 100
MAX_CONCLUSIONS = 100
MAX_QUESTIONS = 100
MAX_TAGS = 50
MAX_STATEMENT = 2000
MAX_ANNOTATION = 1000
MAX_QUESTION = 1000
MAX_JSON_BYTES = 1 << 20
STALE_RATIO = 0.5

CONFLICT_DELTA = 0.15
RECENCY_HALF_LIFE_DAYS = 7.0
MAX_CONNECTIONS = 20
NEGATIONS = frozenset({"not", "no", "never", "none", "cannot", "cant", "doesnt", "dont", "isnt", "arent", "wont",
                       "without"})
_PUNCT = re.compile(r"[^\w\s]")


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


def normalise_text(s: str) -> str:
    """Case-fold, strip punctuation, collapse whitespace (``can't`` → ``cant``)."""
    return " ".join(_PUNCT.sub("", s.casefold()).split())


def _not_found(trail_id: str) -> NotFoundError:
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


def _load(repo: TrailRepo, trail_id: str) -> Trail | None:
    r = repo.row(trail_id)
    return _from_row(r) if r else None


def _insert(repo: TrailRepo, t: Trail) -> None:
    cols = t.json_columns()
    size = sum(len(v.encode("utf-8")) for v in cols.values()) + len(t.summary.encode("utf-8"))
    if size > MAX_JSON_BYTES:
        raise LimitReachedError(f"trail is too large: {size} bytes of JSON (at most {MAX_JSON_BYTES})",
                                recover="save fewer nodes, shorter statements or fewer open questions")
    repo.insert((t.trail_id, t.agent_id, t.label, t.status, t.summary, cols["tags_json"], cols["visited_json"],
                 cols["hypotheses_json"], cols["conclusions_json"], cols["open_questions_json"], cols["boosts_json"],
                 t.graph_generation, t.created_ms, t.last_modified_ms, cols["source_trails_json"], t.merged_into,
                 cols["resumed_by_json"]), t.tags)


def _next_id(repo: TrailRepo, agent_id: str) -> str:
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


# -- input validation (trail_save) -------------------------------------------------------------------------------
def _bad(msg: str, argument: str) -> InvalidInputError:
    return InvalidInputError(msg, details={"argument": argument})


def _check_fields(obj: Any, where: str, argument: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise _bad(f"{where} must be an object", argument)
    for k in obj:
        if k not in allowed:
            raise _bad(f"{where}: unknown field '{k}' (allowed: {', '.join(allowed)})", argument)
    return obj


def _text(obj: dict[str, Any], key: str, where: str, argument: str, *, required: bool, max_len: int,
          default: str = "") -> str:
    if key not in obj or obj[key] is None:
        if required:
            raise _bad(f"{where}.{key} is required", argument)
        return default
    v = obj[key]
    if not isinstance(v, str):
        raise _bad(f"{where}.{key} must be a string", argument)
    if required and not v.strip():
        raise _bad(f"{where}.{key} must not be empty", argument)
    if len(v) > max_len:
        raise _bad(f"{where}.{key} is too long: {len(v)} characters (at most {max_len})", argument)
    return v


def _unit(obj: dict[str, Any], key: str, where: str, argument: str, default: float) -> float:
    v = obj.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= float(v) <= 1.0):
        raise _bad(f"{where}.{key} must be a number between 0 and 1 (got {v!r})", argument)
    return float(v)


def _id_list(obj: dict[str, Any], key: str, where: str, argument: str) -> list[str]:
    v = obj.get(key, [])
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _bad(f"{where}.{key} must be an array of node ids", argument)
    if len(v) > MAX_VISITED:
        raise _bad(f"{where}.{key} has {len(v)} ids (at most {MAX_VISITED})", argument)
    return list(dict.fromkeys(v))


def _parse_hypotheses(raw: list[Any]) -> list[dict[str, Any]]:
    if len(raw) > MAX_HYPOTHESES:
        raise _bad(f"hypotheses has {len(raw)} items (at most {MAX_HYPOTHESES})", "hypotheses")
    out = []
    for i, h in enumerate(raw):
        w = f"hypotheses[{i}]"
        _check_fields(h, w, "hypotheses", ("statement", "confidence", "supporting_nodes", "contradicting_nodes"))
        out.append({"statement": _text(h, "statement", w, "hypotheses", required=True, max_len=MAX_STATEMENT),
                    "confidence": _unit(h, "confidence", w, "hypotheses", 0.5),
                    "supporting_nodes": _id_list(h, "supporting_nodes", w, "hypotheses"),
                    "contradicting_nodes": _id_list(h, "contradicting_nodes", w, "hypotheses")})
    return out


def _parse_conclusions(raw: list[Any], hyps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if len(raw) > MAX_CONCLUSIONS:
        raise _bad(f"conclusions has {len(raw)} items (at most {MAX_CONCLUSIONS})", "conclusions")
    known = {normalise_text(h["statement"]): h["statement"] for h in hyps}
    out = []
    for i, c in enumerate(raw):
        w = f"conclusions[{i}]"
        _check_fields(c, w, "conclusions", ("statement", "confidence", "from_hypotheses", "supporting_nodes"))
        fh = c.get("from_hypotheses", []) or []
        if not isinstance(fh, list) or not all(isinstance(x, str) for x in fh):
            raise _bad(f"{w}.from_hypotheses must be an array of hypothesis statements", "conclusions")
        resolved = []
        for j, s in enumerate(fh):
            hit = known.get(normalise_text(s))
            if hit is None:
                raise _bad(f"{w}.from_hypotheses[{j}] matches no hypothesis statement of this call: '{s[:80]}'",
                           "conclusions")
            if hit not in resolved:
                resolved.append(hit)
        out.append({"statement": _text(c, "statement", w, "conclusions", required=True, max_len=MAX_STATEMENT),
                    "confidence": _unit(c, "confidence", w, "conclusions", 0.5), "from_hypotheses": resolved,
                    "supporting_nodes": _id_list(c, "supporting_nodes", w, "conclusions")})
    return out


def _parse_visited(raw: list[Any]) -> list[dict[str, Any]]:
    if len(raw) > MAX_VISITED:
        raise _bad(f"visited_nodes has {len(raw)} items (at most {MAX_VISITED})", "visited_nodes")
    out: dict[str, dict[str, Any]] = {}
    for i, v in enumerate(raw):
        w = f"visited_nodes[{i}]"
        _check_fields(v, w, "visited_nodes", ("node_external_id", "annotation", "relevance"))
        nid = _text(v, "node_external_id", w, "visited_nodes", required=True, max_len=2000)
        item = {"node_external_id": nid,
                "annotation": _text(v, "annotation", w, "visited_nodes", required=False, max_len=MAX_ANNOTATION),
                "relevance": _unit(v, "relevance", w, "visited_nodes", 0.5)}
        old = out.get(nid)
        if old is None:
            out[nid] = item
        else:  # duplicate: keep the highest relevance, join annotations
            old["relevance"] = max(old["relevance"], item["relevance"])
            if item["annotation"] and item["annotation"] not in old["annotation"]:
                old["annotation"] = " | ".join(x for x in (old["annotation"], item["annotation"]) if x)
    return list(out.values())


def _parse_boosts(raw: Any) -> dict[str, float]:
    if not isinstance(raw, dict):
        raise _bad("activation_boosts must be an object mapping node ids to numbers in [0, 1]", "activation_boosts")
    if len(raw) > MAX_BOOSTS:
        raise _bad(f"activation_boosts has {len(raw)} entries (at most {MAX_BOOSTS})", "activation_boosts")
    out = {}
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0.0 <= float(v) <= 1.0):
            raise _bad(f"activation_boosts['{k}'] must be a number between 0 and 1 (got {v!r})", "activation_boosts")
        out[k] = float(v)
    return out


def _parse_strings(raw: list[Any], argument: str, limit: int, max_len: int) -> list[str]:
    if len(raw) > limit:
        raise _bad(f"{argument} has {len(raw)} items (at most {limit})", argument)
    out: list[str] = []
    for i, s in enumerate(raw):
        if not isinstance(s, str) or not s.strip():
            raise _bad(f"{argument}[{i}] must be a non-empty string", argument)
        if len(s) > max_len:
            raise _bad(f"{argument}[{i}] is too long: {len(s)} characters (at most {max_len})", argument)
        if s not in out:
            out.append(s)
    return out


def _parse_tags(raw: list[Any]) -> list[str]:
    if len(raw) > MAX_TAGS:
        raise _bad(f"tags has {len(raw)} items (at most {MAX_TAGS})", "tags")
    out: list[str] = []
    for i, s in enumerate(raw):
        if not isinstance(s, str) or not TAG_RE.match(s):
            raise _bad(f"tags[{i}] must match {TAG_PATTERN} (got {s!r})", "tags")
        if s not in out:
            out.append(s)
    return out


def _canonical(g: Graph, ids: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """Given ids → canonical external ids; and the unknown ones (first-seen order)."""
    mapping: dict[str, str] = {}
    unknown: list[str] = []
    for raw in ids:
        if raw in mapping or raw in unknown:
            continue
        i = g.seeds.ext_lookup.get(raw.strip()) if g.n else None
        if i is None:
            unknown.append(raw)
        else:
            mapping[raw] = g.nodes.ext_id[i]
    return mapping, unknown


def _max_merge(into: dict[str, float], key: str, value: float) -> None:
    if value > into.get(key, -1.0):
        into[key] = value


# -- trail_save --------------------------------------------------------------------------------------------------
def save(cg: CodeGraph, agent_id: str, label: str, *, hypotheses: list[Any] | None = None,
         conclusions: list[Any] | None = None, open_questions: list[Any] | None = None,
         tags: list[Any] | None = None, summary: str | None = None, visited_nodes: list[Any] | None = None,
         activation_boosts: dict[str, Any] | None = None, captured_nodes: list[str] | None = None) -> TrailSaved:
    """Save a new trail (never overwrites). ``captured_nodes``: visited nodes of the caller's open perspectives,
    used when ``visited_nodes`` is not given."""
    if not isinstance(label, str) or not label.strip() or len(label) > 200:
        raise _bad("label must be 1..200 characters", "label")
    hyps = _parse_hypotheses(list(hypotheses or []))
    concl = _parse_conclusions(list(conclusions or []), hyps)
    questions = _parse_strings(list(open_questions or []), "open_questions", MAX_QUESTIONS, MAX_QUESTION)
    tag_list = _parse_tags(list(tags or []))
    if summary is not None and len(summary) > MAX_STATEMENT:
        raise _bad(f"summary is too long: {len(summary)} characters (at most {MAX_STATEMENT})", "summary")
    visited = _parse_visited(list(visited_nodes)) if visited_nodes is not None else None
    given_boosts = _parse_boosts(activation_boosts) if activation_boosts is not None else None

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
        mapping, unknown = _canonical(g, every)
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
                    _max_merge(rel, n, 0.5)
            for h in hyps:
                for n in h["supporting_nodes"]:
                    _max_merge(rel, n, max(h["confidence"], 0.6))
                for n in h["contradicting_nodes"]:
                    _max_merge(rel, n, max(0.8 * h["confidence"], 0.45))
            for c in concl:
                for n in c["supporting_nodes"]:
                    _max_merge(rel, n, max(c["confidence"], 0.7))
            ranked = sorted(rel.items(), key=lambda kv: -kv[1])[:MAX_VISITED]
            visited_out = [{"node_external_id": n, "annotation": "", "relevance": round(r, 4)} for n, r in ranked]

        # boosts: given as given, or derived
        if given_boosts is not None:
            boosts: dict[str, float] = {}
            for k, b in given_boosts.items():
                _max_merge(boosts, mapping[k], b)
        else:
            boosts = {}
            for v in visited_out:
                _max_merge(boosts, v["node_external_id"], round(0.2 + 0.5 * v["relevance"], 4))
            for h in hyps:
                for n in h["supporting_nodes"]:
                    _max_merge(boosts, n, 0.7)
                for n in h["contradicting_nodes"]:
                    _max_merge(boosts, n, 0.45)
            for c in concl:
                for n in c["supporting_nodes"]:
                    _max_merge(boosts, n, 0.8)
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
            t.trail_id = _next_id(repo, agent_id)
            t.graph_generation = cg.store.generations()[0]
            _insert(repo, t)
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
            t = _load(repo, trail_id)
            if t is None:
                raise _not_found(trail_id)
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
                filter_tags: list[str] | None = None, limit: int = 50) -> TrailList:
    if filter_status is not None and filter_status not in STATUSES:
        raise _bad(f"filter_status must be one of {', '.join(STATUSES)} (got '{filter_status}')", "filter_status")
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


# -- trail_merge -------------------------------------------------------------------------------------------------
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
        raise _bad(f"trail_merge needs 2 to 10 trail ids (got {n})", "trail_ids")
    for tid in trail_ids:
        check_trail_id(tid, "trail_ids")
    dup = next((x for i, x in enumerate(trail_ids) if x in trail_ids[:i]), None)
    if dup is not None:
        raise _bad(f"trail id '{dup}' is listed twice; pass distinct trail ids", "trail_ids")
    if label is not None and (not label.strip() or len(label) > 200):
        raise _bad("label must be 1..200 characters", "label")
    with cg.lock:
        g = cg.graph()
        db, repo = cg.shared, cg.shared.trails
        with db.write():
            trails: list[Trail] = []
            for tid in trail_ids:
                t = _load(repo, tid)
                if t is None:
                    raise _not_found(tid)
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
                    _max_merge(boosts, k, float(b))
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
            new = Trail(trail_id=_next_id(repo, agent_id), agent_id=agent_id, label=label, status="saved", summary="",
                        tags=tags, visited=visited_list, hypotheses=hyps, conclusions=concl, open_questions=q_list,
                        boosts=boosts, graph_generation=cg.store.generations()[0], created_ms=now,
                        last_modified_ms=now, source_trails=list(trail_ids))
            n_nodes = len(new.nodes())
            new.summary = summarise(label, n_nodes, hyps, len(concl), len(q_list))
            _insert(repo, new)
            repo.mark_merged(trail_ids, into=new.trail_id, modified_ms=now)
        connections = _connections(g, trails)
    return TrailMerged(merged_trail_id=new.trail_id, label=label, source_trails=list(trail_ids),
                       nodes_merged=n_nodes, hypotheses_merged=len(hyps), conclusions_merged=len(concl),
                       conflicts=conflicts, connections_discovered=connections)


# -- show / archive (CLI) ----------------------------------------------------------------------------------------
def show(cg: CodeGraph, trail_id: str) -> dict[str, Any]:
    check_trail_id(trail_id)
    with cg.lock:
        g = cg.graph()
        t = _load(cg.shared.trails, trail_id)
        if t is None:
            raise _not_found(trail_id)
        st = staleness(g, cg.store.generations()[0], t)
    hyps = [{k: v for k, v in h.items() if k != "confidence_at_save"} for h in t.hypotheses]
    return {"trail_id": t.trail_id, "agent_id": t.agent_id, "label": t.label,
            "status": reported_status(t.status, st.stale), "stale": st.stale, "missing_ratio": round(st.ratio, 4),
            "generations_behind": st.generations_behind, "summary": t.summary, "tags": t.tags,
            "visited_nodes": t.visited, "hypotheses": hyps, "conclusions": t.conclusions,
            "open_questions": t.open_questions, "activation_boosts": t.boosts, "graph_generation": t.graph_generation,
            "created_at_ms": t.created_ms, "last_modified_ms": t.last_modified_ms, "source_trails": t.source_trails,
            "merged_into": t.merged_into, "resumed_by": t.resumed_by}


def archive(cg: CodeGraph, trail_id: str) -> dict[str, Any]:
    check_trail_id(trail_id)
    with cg.lock:
        db, repo = cg.shared, cg.shared.trails
        with db.write():
            t = _load(repo, trail_id)
            if t is None:
                raise _not_found(trail_id)
            if t.status == "merged":
                raise InvalidInputError(f"trail {trail_id} was merged into {t.merged_into}; archive that one",
                                        details={"argument": "trail_id"})
            repo.mark_archived(trail_id, modified_ms=now_ms())
    return {"trail_id": trail_id, "status": "archived"}


__all__ = ["STATUSES", "TAG_PATTERN", "TRAIL_ID_PATTERN", "Trail", "agent_slug", "archive", "check_trail_id",
           "list_trails", "merge", "normalise_text", "resume", "save", "show", "staleness"]
