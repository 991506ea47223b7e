"""Typed results of the code-graph service's own calls: ``ingest`` (:class:`IngestReport`, also the record stored with
each root), the trail calls (:mod:`m1nd.codegraph.trails`: ``trail_save``, ``trail_resume``, ``trail_list``,
``trail_merge``), learning (``learn``, ``persist``, ``drift``), ``diverge`` and ``health``.

Like :mod:`m1nd.graph.results` for the graph queries: the service returns these dataclasses and the tool layer turns
them into the wire objects with :meth:`to_dict` (keys in the order the tools have always sent them), then adds the
hint and ``elapsed_ms``. Items without a fixed shape yet (downgraded hypotheses, merge conflicts, discovered
connections) stay JSON objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DivergeResult", "DriftResult", "HealthReport", "IngestReport", "LearnResult", "LearningMigrated", "NodeRef",
           "PersistResult", "TrailArchived", "TrailDetail", "TrailList", "TrailMerged", "TrailResumed", "TrailSaved",
           "TrailSummary", "UnlinkedPair", "WeightChange", "WeightDrift", "WeightDriftSummary", "WeightStats",
           "WeightsReset"]


def _counts(v: Any) -> dict[str, int]:
    return {str(k): int(x) for k, x in v.items() if isinstance(x, int)} if isinstance(v, Mapping) else {}


@dataclass(frozen=True)
class IngestReport:
    """The answer of ``ingest``, and the record stored with the root it ingested (``roots.report_json``): what was
    scanned, parsed, reused and cut, the node and edge counts (``created``, ``removed``, ``updated``, ``total``), the
    git data read, the new graph generation, and the options it ran with (a watcher replays them).

    A watched batch patched in place (:mod:`m1nd.codegraph.patch`) and an ingest that found nothing changed answer
    the root's stored record with this run's figures (``patched`` true for the former). The duration is not part of
    the record: the caller measures the call (the tool layer, or the watcher for ``m1nd watch``) and puts it before
    ``warnings``, where it has always been on the wire. ``delta`` (a patched batch's node and edge changes, for the
    service's next load) is never stored or sent.
    """

    root: str
    namespace: str | None
    mode: str
    files_scanned: int
    files_parsed: int
    files_reused: int
    files_removed: int
    skipped: dict[str, int]
    files_cut: list[dict[str, Any]]
    files_cut_total: int
    nodes: dict[str, int]
    edges: dict[str, int]
    unresolved_refs: int
    ambiguous_refs: int
    languages: dict[str, int]
    git: dict[str, Any]
    embeddings: dict[str, Any]
    graph_generation: int
    changed: bool
    options: dict[str, Any]
    warnings: list[str]
    patched: bool = False
    delta: Any = field(default=None, compare=False, repr=False)

    @property
    def data(self) -> dict[str, Any]:
        """The whole answer as a JSON object (what the tool sends, without its timing)."""
        return self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        """The wire object (without its timing) and the stored record; ``patched`` only when true."""
        out: dict[str, Any] = {
            "root": self.root, "namespace": self.namespace, "mode": self.mode, "files_scanned": self.files_scanned,
            "files_parsed": self.files_parsed, "files_reused": self.files_reused, "files_removed": self.files_removed,
            "skipped": dict(self.skipped), "files_cut": list(self.files_cut), "files_cut_total": self.files_cut_total,
            "nodes": dict(self.nodes), "edges": dict(self.edges), "unresolved_refs": self.unresolved_refs,
            "ambiguous_refs": self.ambiguous_refs, "languages": dict(self.languages), "git": dict(self.git),
            "embeddings": dict(self.embeddings), "graph_generation": self.graph_generation, "changed": self.changed,
            "options": dict(self.options), "warnings": list(self.warnings),
        }
        if self.patched:
            out["patched"] = True
        return out

    @classmethod
    def from_record(cls, d: Mapping[str, Any]) -> IngestReport:
        """A stored record (a record written before this format, with ``elapsed_ms`` or without the newer fields,
        reads with those fields empty)."""
        return cls(root=str(d.get("root") or ""), namespace=d.get("namespace"), mode=str(d.get("mode") or "replace"),
                   files_scanned=int(d.get("files_scanned") or 0), files_parsed=int(d.get("files_parsed") or 0),
                   files_reused=int(d.get("files_reused") or 0), files_removed=int(d.get("files_removed") or 0),
                   skipped=_counts(d.get("skipped")), files_cut=list(d.get("files_cut") or []),
                   files_cut_total=int(d.get("files_cut_total") or 0), nodes=_counts(d.get("nodes")),
                   edges=_counts(d.get("edges")), unresolved_refs=int(d.get("unresolved_refs") or 0),
                   ambiguous_refs=int(d.get("ambiguous_refs") or 0), languages=_counts(d.get("languages")),
                   git=dict(d.get("git") or {}), embeddings=dict(d.get("embeddings") or {}),
                   graph_generation=int(d.get("graph_generation") or 0), changed=bool(d.get("changed", True)),
                   options=dict(d.get("options") or {}), warnings=[str(w) for w in d.get("warnings") or []],
                   patched=bool(d.get("patched", False)))


@dataclass(frozen=True)
class TrailSummary:
    """One stored trail at a glance; ``status`` is as reported (a saved or active trail the graph has moved away
    from reads ``stale``)."""

    trail_id: str
    agent_id: str
    label: str
    status: str
    stale: bool
    created_at_ms: int
    last_modified_ms: int
    node_count: int
    hypothesis_count: int
    conclusion_count: int
    open_question_count: int
    tags: list[str]
    summary: str | None

    def to_dict(self) -> dict[str, Any]:
        """The ``trail_list`` entry."""
        return {"trail_id": self.trail_id, "agent_id": self.agent_id, "label": self.label, "status": self.status,
                "stale": self.stale, "created_at_ms": self.created_at_ms, "last_modified_ms": self.last_modified_ms,
                "node_count": self.node_count, "hypothesis_count": self.hypothesis_count,
                "conclusion_count": self.conclusion_count, "open_question_count": self.open_question_count,
                "tags": list(self.tags), "summary": self.summary}

    def brief_dict(self) -> dict[str, Any]:
        """``trail_resume``'s ``trail`` object (staleness is reported beside it, so not repeated)."""
        return {"trail_id": self.trail_id, "label": self.label, "agent_id": self.agent_id, "status": self.status,
                "created_at_ms": self.created_at_ms, "last_modified_ms": self.last_modified_ms,
                "node_count": self.node_count, "hypothesis_count": self.hypothesis_count,
                "conclusion_count": self.conclusion_count, "open_question_count": self.open_question_count,
                "tags": list(self.tags), "summary": self.summary}


@dataclass(frozen=True)
class TrailSaved:
    """The answer of ``trail_save``: the new trail's id and what it holds."""

    trail_id: str
    label: str
    agent_id: str
    nodes_saved: int
    hypotheses_saved: int
    conclusions_saved: int
    open_questions_saved: int
    boosts_saved: int
    graph_generation_at_creation: int
    created_at_ms: int

    def to_dict(self) -> dict[str, Any]:
        return {"trail_id": self.trail_id, "label": self.label, "agent_id": self.agent_id,
                "nodes_saved": self.nodes_saved, "hypotheses_saved": self.hypotheses_saved,
                "conclusions_saved": self.conclusions_saved, "open_questions_saved": self.open_questions_saved,
                "boosts_saved": self.boosts_saved, "graph_generation_at_creation": self.graph_generation_at_creation,
                "created_at_ms": self.created_at_ms}


@dataclass(frozen=True)
class TrailResumed:
    """The answer of ``trail_resume``: how far the graph moved since the trail was saved, what was re-primed, and
    where to pick up (``next_focus_node``)."""

    trail_id: str
    stale: bool
    generations_behind: int
    missing_ratio: float
    missing_nodes: list[str]
    missing_total: int
    nodes_reactivated: int
    hypotheses_downgraded: list[dict[str, Any]]
    trail: TrailSummary
    open_questions: list[str]
    next_focus_node: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"trail_id": self.trail_id, "stale": self.stale, "generations_behind": self.generations_behind,
                "missing_ratio": self.missing_ratio, "missing_nodes": list(self.missing_nodes),
                "missing_total": self.missing_total, "nodes_reactivated": self.nodes_reactivated,
                "hypotheses_downgraded": [dict(h) for h in self.hypotheses_downgraded],
                "trail": self.trail.brief_dict(), "open_questions": list(self.open_questions),
                "next_focus_node": self.next_focus_node}


@dataclass(frozen=True)
class TrailList:
    """The answer of ``trail_list``: one page of trails and how many match in all."""

    trails: list[TrailSummary]
    total_count: int

    def to_dict(self) -> dict[str, Any]:
        return {"trails": [t.to_dict() for t in self.trails], "total_count": self.total_count}


@dataclass(frozen=True)
class TrailMerged:
    """The answer of ``trail_merge``: the new trail, what it fused, and what the merge found."""

    merged_trail_id: str
    label: str
    source_trails: list[str]
    nodes_merged: int
    hypotheses_merged: int
    conclusions_merged: int
    conflicts: list[dict[str, Any]]
    connections_discovered: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"merged_trail_id": self.merged_trail_id, "label": self.label,
                "source_trails": list(self.source_trails), "nodes_merged": self.nodes_merged,
                "hypotheses_merged": self.hypotheses_merged, "conclusions_merged": self.conclusions_merged,
                "conflicts": [dict(c) for c in self.conflicts],
                "connections_discovered": [dict(c) for c in self.connections_discovered]}


# -- learning: learn, persist, drift ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class NodeRef:
    """A node named by its external id and label."""

    node_id: str
    label: str

    def to_dict(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "label": self.label}


@dataclass(frozen=True)
class UnlinkedPair:
    """A (query seed, reported node) pair that no path within ``max_path_hops`` links: nothing between them moved."""

    seed: str
    node: str

    def to_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "node": self.node}


@dataclass(frozen=True)
class LearnResult:
    """The answer of ``learn``: how many edges and nodes the feedback moved, from which seeds, and the weights
    generation it was committed as. ``reported_labels`` (the labels of the first reported nodes, not on the wire)
    lets the tool layer suggest a query that names the code when no seed matched."""

    edges_adjusted: int
    nodes_affected: int
    plasticity_delta: float
    query: str
    feedback: str
    seed_source: str
    seeds_used: list[NodeRef]
    strengthened: int
    weakened: int
    mean_weight_change: float
    pairs_without_path: list[UnlinkedPair]
    pairs_without_path_total: int
    weights_generation: int
    reported_labels: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"edges_adjusted": self.edges_adjusted, "nodes_affected": self.nodes_affected,
                "plasticity_delta": self.plasticity_delta, "query": self.query, "feedback": self.feedback,
                "seed_source": self.seed_source, "seeds_used": [s.to_dict() for s in self.seeds_used],
                "strengthened": self.strengthened, "weakened": self.weakened,
                "mean_weight_change": self.mean_weight_change,
                "pairs_without_path": [p.to_dict() for p in self.pairs_without_path],
                "pairs_without_path_total": self.pairs_without_path_total,
                "weights_generation": self.weights_generation}


@dataclass(frozen=True)
class PersistResult:
    """The answer of ``persist``: what was flushed (``save``) or recorded (``baseline``: ``baseline_id``), and the
    learning not yet written."""

    action: str
    baseline_id: int | None
    flushed_edges: int
    dirty_weights: int
    weights_generation: int
    last_persist_ms_ago: int

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action}
        if self.baseline_id is not None:
            out["baseline_id"] = self.baseline_id
        out.update({"flushed_edges": self.flushed_edges, "dirty_weights": self.dirty_weights,
                    "weights_generation": self.weights_generation,
                    "last_persist_ms_ago": self.last_persist_ms_ago})
        return out


@dataclass(frozen=True)
class WeightDrift:
    """One learned edge weight that moved since the baseline."""

    edge: str
    source: str
    target: str
    relation: str
    old: float
    new: float
    delta: float

    def to_dict(self) -> dict[str, Any]:
        return {"edge": self.edge, "source": self.source, "target": self.target, "relation": self.relation,
                "old": self.old, "new": self.new, "delta": self.delta}


@dataclass(frozen=True)
class WeightDriftSummary:
    """The learned-weight part of ``drift``: the largest moves and how many moved each way."""

    top_weight_drifts: list[WeightDrift]
    weights_changed_total: int
    strengthened_total: int
    weakened_total: int

    def to_dict(self) -> dict[str, Any]:
        return {"top_weight_drifts": [d.to_dict() for d in self.top_weight_drifts],
                "weights_changed_total": self.weights_changed_total, "strengthened_total": self.strengthened_total,
                "weakened_total": self.weakened_total}


@dataclass(frozen=True)
class DriftResult:
    """The answer of ``drift``: the graph now against a saved baseline (``baseline``: the baseline's header;
    ``baseline_note`` says when another baseline than the asked one was used). ``weights`` is None when weight drift
    was not asked for."""

    since: str
    baseline: dict[str, Any]
    baseline_note: str | None
    node_count_delta: int
    edge_count_delta: int
    new_nodes: list[str]
    removed_nodes: list[str]
    new_nodes_total: int
    removed_nodes_total: int
    weights: WeightDriftSummary | None
    learn_events_since: int
    queries_processed: int
    uptime_seconds: float

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"since": self.since, "baseline": dict(self.baseline)}
        if self.baseline_note:
            out["baseline_note"] = self.baseline_note
        out.update({"node_count_delta": self.node_count_delta, "edge_count_delta": self.edge_count_delta,
                    "new_nodes": list(self.new_nodes), "removed_nodes": list(self.removed_nodes),
                    "new_nodes_total": self.new_nodes_total, "removed_nodes_total": self.removed_nodes_total})
        if self.weights is not None:
            out.update(self.weights.to_dict())
        out.update({"learn_events_since": self.learn_events_since, "queries_processed": self.queries_processed,
                    "uptime_seconds": self.uptime_seconds})
        return out


# -- diverge ---------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DivergeResult:
    """The answer of ``diverge``: how the ingested files moved away from a baseline (a session's or a date's, with
    the git commit it maps to). Modified files, coupling changes and anomalies stay JSON objects (their optional
    fields vary by kind)."""

    baseline: str
    baseline_commit: str | None
    baseline_time_ms: int
    scope: str | None
    structural_drift: float
    new_nodes: list[str]
    removed_nodes: list[str]
    modified_nodes: list[dict[str, Any]]
    coupling_changes: list[dict[str, Any]]
    anomalies: list[dict[str, Any]]
    summary: str

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "baseline_commit": self.baseline_commit,
                "baseline_time_ms": self.baseline_time_ms, "scope": self.scope,
                "structural_drift": self.structural_drift, "new_nodes": list(self.new_nodes),
                "removed_nodes": list(self.removed_nodes), "modified_nodes": [dict(m) for m in self.modified_nodes],
                "coupling_changes": [dict(c) for c in self.coupling_changes],
                "anomalies": [dict(a) for a in self.anomalies], "summary": self.summary}


# -- health ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HealthReport:
    """The answer of ``health``: the state of this workspace's graph service. ``status`` is ``degraded`` when
    ``warnings`` is not empty. The parts reported by other components (ingest roots, embedder, lexicon, history,
    agents, git, core build, watchers) stay JSON objects."""

    status: str
    warnings: list[str]
    version: str
    workspace: str
    node_count: int
    edge_count: int
    graph_generation: int
    weights_generation: int
    queries_processed: int
    uptime_seconds: float
    memory_usage_bytes: int
    graph_bytes: int
    last_persist_ms_ago: int
    dirty_weights: int
    ingest_roots: list[dict[str, Any]]
    embedder: dict[str, Any]
    lexicon: dict[str, Any] | None
    history: dict[str, Any] | None
    agents: list[dict[str, Any]]
    perspectives: int
    locks: int
    git: dict[str, Any]
    transport: str
    core: dict[str, Any]
    watch: Any

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "warnings": list(self.warnings), "version": self.version,
                "workspace": self.workspace, "node_count": self.node_count, "edge_count": self.edge_count,
                "graph_generation": self.graph_generation, "weights_generation": self.weights_generation,
                "queries_processed": self.queries_processed, "uptime_seconds": self.uptime_seconds,
                "memory_usage_bytes": self.memory_usage_bytes, "graph_bytes": self.graph_bytes,
                "last_persist_ms_ago": self.last_persist_ms_ago, "dirty_weights": self.dirty_weights,
                "ingest_roots": self.ingest_roots, "embedder": self.embedder, "lexicon": self.lexicon,
                "history": self.history, "agents": self.agents, "perspectives": self.perspectives,
                "locks": self.locks, "git": self.git, "transport": self.transport, "core": self.core,
                "watch": self.watch}


# -- learning maintenance (the ``m1nd weights`` / ``trail show|archive`` / ``learning migrate`` commands) -----------


@dataclass(frozen=True)
class WeightChange:
    """One learned edge's weight against its base weight ``w0`` (rounded to 4 places)."""

    edge: str
    source: str
    target: str
    relation: str
    w0: float
    w: float
    delta: float

    def to_dict(self) -> dict[str, Any]:
        return {"edge": self.edge, "source": self.source, "target": self.target, "relation": self.relation,
                "w0": self.w0, "w": self.w, "delta": self.delta}


@dataclass(frozen=True)
class WeightStats:
    """The answer of ``weight_stats``: how many edges learning moved up and down, their mean |w - w0| over every
    edge, the weights generation, and the largest changes first (``top``)."""

    edges_total: int
    strengthened: int
    weakened: int
    mean_abs_change: float
    weights_generation: int
    top: list[WeightChange]

    def to_dict(self) -> dict[str, Any]:
        return {"edges_total": self.edges_total, "strengthened": self.strengthened, "weakened": self.weakened,
                "mean_abs_change": self.mean_abs_change, "weights_generation": self.weights_generation,
                "top": [c.to_dict() for c in self.top]}


@dataclass(frozen=True)
class WeightsReset:
    """The answer of ``weights_reset``: the learned edges selected (by ``relation`` and/or ``node``), their mean
    |w - w0|, whether they were reset (``applied``; a dry run otherwise) and the weights generation after."""

    applied: bool
    edges_selected: int
    mean_abs_change: float
    relation: str | None
    node: str | None
    weights_generation: int

    def to_dict(self) -> dict[str, Any]:
        return {"applied": self.applied, "edges_selected": self.edges_selected,
                "mean_abs_change": self.mean_abs_change, "relation": self.relation, "node": self.node,
                "weights_generation": self.weights_generation}


@dataclass(frozen=True)
class LearningMigrated:
    """The answer of ``migrate_learning``: the two stores (described without secrets), the rows copied per table,
    the learned weights applied and skipped (edges the graph lacks) and the target's weights generation; the copy
    is verified before it commits, or nothing is written."""

    source: str
    target: str
    tables: dict[str, int]
    learned_weights_applied: int
    learned_weights_skipped: int
    weights_generation: int
    verified: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"status": "ok", "from": self.source, "to": self.target, "tables": dict(self.tables),
                "learned_weights_applied": self.learned_weights_applied,
                "learned_weights_skipped": self.learned_weights_skipped,
                "weights_generation": self.weights_generation, "verified": self.verified}


@dataclass(frozen=True)
class TrailDetail:
    """One stored trail in full (``m1nd trail show``): what was saved, its reported status and how stale it is
    against the current graph (``missing_ratio`` of its nodes gone, ``generations_behind``). The saved items
    (visited nodes, hypotheses without their confidence at save, conclusions) keep their stored shape."""

    trail_id: str
    agent_id: str
    label: str
    status: str
    stale: bool
    missing_ratio: float
    generations_behind: int
    summary: str
    tags: list[str]
    visited_nodes: list[dict[str, Any]]
    hypotheses: list[dict[str, Any]]
    conclusions: list[dict[str, Any]]
    open_questions: list[str]
    activation_boosts: dict[str, float]
    graph_generation: int
    created_at_ms: int
    last_modified_ms: int
    source_trails: list[str]
    merged_into: str | None
    resumed_by: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"trail_id": self.trail_id, "agent_id": self.agent_id, "label": self.label, "status": self.status,
                "stale": self.stale, "missing_ratio": self.missing_ratio,
                "generations_behind": self.generations_behind, "summary": self.summary, "tags": self.tags,
                "visited_nodes": self.visited_nodes, "hypotheses": self.hypotheses, "conclusions": self.conclusions,
                "open_questions": self.open_questions, "activation_boosts": self.activation_boosts,
                "graph_generation": self.graph_generation, "created_at_ms": self.created_at_ms,
                "last_modified_ms": self.last_modified_ms, "source_trails": self.source_trails,
                "merged_into": self.merged_into, "resumed_by": self.resumed_by}


@dataclass(frozen=True)
class TrailArchived:
    """The answer of archiving a trail."""

    trail_id: str

    def to_dict(self) -> dict[str, Any]:
        return {"trail_id": self.trail_id, "status": "archived"}
