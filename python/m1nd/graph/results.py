"""Typed results of the code-graph queries: what ``activate``, ``why``, ``impact``, ``warmup``, ``missing``,
``hypothesize`` and ``trace`` answer.

The code-graph service returns these dataclasses; the Python API (:mod:`m1nd.api`) hands them to callers as they
are, and the tool layer turns them into the wire objects with :meth:`to_dict` (then adds what belongs to the
transport: the agent-facing ``hint``, ``elapsed_ms``, the response budget). ``to_dict`` writes the keys in the order
the tools have always sent them, so the wire stays byte-identical.

Fields whose items have no fixed shape yet (ghost edges, structural holes, the file view, related memories) stay
lists of JSON objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["ActivationHit", "ActivationResult", "CausalChain", "ClaimEvidence", "ClaimNode", "HypothesisResult",
           "ImpactEntry", "ImpactResult", "MissingResult", "PartialReach", "Path", "PrimedNode", "Seed", "Suspect",
           "TraceResult", "WarmupResult", "WhyResult"]


@dataclass(frozen=True)
class Seed:
    """A node the query's words (or an id in it) matched directly: where activation started."""

    node_id: str
    label: str
    relevance: float
    via: str

    def to_dict(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "label": self.label, "relevance": self.relevance, "via": self.via}


@dataclass(frozen=True)
class ActivationHit:
    """One ranked node of ``activate``: its id, where it is, and its score with the per-signal parts."""

    node_id: str
    label: str
    kind: str
    activation: float
    source_path: str
    line_start: int
    line_end: int
    pagerank: float = 0.0
    primed: float = 0.0
    dimensions: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "label": self.label, "kind": self.kind, "activation": self.activation,
                "dimensions": dict(self.dimensions), "pagerank": self.pagerank, "primed": self.primed,
                "source_path": self.source_path, "line_start": self.line_start, "line_end": self.line_end}


@dataclass(frozen=True)
class ActivationResult:
    """The answer of ``activate``: ranked nodes (best first) and the seeds they were reached from.

    ``files`` is the per-file view (``group_by="file"``, else None); ``freshness`` says whether a watcher has edits
    not yet in the graph (``stale``, ``pending_files``, ``pending_count``); ``semantic_status`` explains a semantic
    dimension that is not ready (None when it is)."""

    query: str
    seeds: list[Seed]
    activated: list[ActivationHit]
    total_activated: int
    semantic_backend: str
    graph_generation: int
    files: list[dict[str, Any]] | None = None
    ghost_edges: list[dict[str, Any]] = field(default_factory=list)
    structural_holes: list[dict[str, Any]] = field(default_factory=list)
    related_memories: list[dict[str, Any]] = field(default_factory=list)
    priming: dict[str, Any] = field(default_factory=dict)
    learning: dict[str, Any] = field(default_factory=dict)
    dimensions_used: list[str] = field(default_factory=list)
    freshness: dict[str, Any] = field(default_factory=dict)
    semantic_status: str | None = None

    @property
    def node_ids(self) -> list[str]:
        return [a.node_id for a in self.activated]

    @property
    def data(self) -> dict[str, Any]:
        """The whole answer as the JSON object the ``activate`` tool sends (before hint, timing and budget)."""
        return self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query, "seeds": [s.to_dict() for s in self.seeds],
            "activated": [a.to_dict() for a in self.activated],
            **({"files": [dict(f) for f in self.files]} if self.files is not None else {}),
            "ghost_edges": [dict(x) for x in self.ghost_edges],
            "structural_holes": [dict(x) for x in self.structural_holes],
            "related_memories": [dict(x) for x in self.related_memories],
            "priming": dict(self.priming), "learning": dict(self.learning),
            "dimensions_used": list(self.dimensions_used), "semantic_backend": self.semantic_backend,
            "total_activated": self.total_activated, "graph_generation": self.graph_generation, "truncated": False,
            **self.freshness,
        }
        if self.semantic_status is not None:
            out["semantic_status"] = self.semantic_status
        return out


@dataclass(frozen=True)
class Path:
    """One path: node ids from its start to its end, their labels and the relations between them."""

    nodes: list[str]
    labels: list[str]
    relations: list[str]
    cumulative_strength: float
    hops: int

    def to_dict(self) -> dict[str, Any]:
        return {"nodes": list(self.nodes), "labels": list(self.labels), "relations": list(self.relations),
                "cumulative_strength": self.cumulative_strength, "hops": self.hops}


@dataclass(frozen=True)
class WhyResult:
    """The answer of ``why``: the strongest simple paths between two nodes (strongest first)."""

    source: str
    target: str
    paths: list[Path]
    total_paths_found: int
    budget_exhausted: bool
    source_label: str = ""
    target_label: str = ""
    shortest_hops: int | None = None

    @property
    def data(self) -> dict[str, Any]:
        """The whole answer as the JSON object the ``why`` tool sends (before hint, timing and budget)."""
        return self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "source_label": self.source_label,
                "target_label": self.target_label, "paths": [p.to_dict() for p in self.paths],
                "total_paths_found": self.total_paths_found, "budget_exhausted": self.budget_exhausted,
                "shortest_hops": self.shortest_hops}


@dataclass(frozen=True)
class ImpactEntry:
    """One node a change may affect: how strongly, how far, in which direction and through which relation."""

    node_id: str
    label: str
    kind: str
    signal_strength: float
    hop_distance: int
    direction: str
    via_relation: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "label": self.label, "kind": self.kind,
                "signal_strength": self.signal_strength, "hop_distance": self.hop_distance,
                "direction": self.direction, "via_relation": self.via_relation}


@dataclass(frozen=True)
class CausalChain:
    """A chain of strong edges from the changed node (``path``: node ids), explaining an impact entry."""

    path: list[str]
    labels: list[str]
    relations: list[str]
    cumulative_strength: float
    direction: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": list(self.path), "labels": list(self.labels), "relations": list(self.relations),
                "cumulative_strength": self.cumulative_strength, "direction": self.direction}


@dataclass(frozen=True)
class ImpactResult:
    """The answer of ``impact``: the blast radius of changing one node (strongest first)."""

    source: str
    direction: str
    blast_radius: list[ImpactEntry]
    total_energy: float
    tests_affected: list[str]
    source_label: str = ""
    by_hop: dict[str, int] = field(default_factory=dict)
    files_affected: int = 0
    total_reached: int = 0
    max_hops_reached: int = 0
    causal_chains: list[CausalChain] = field(default_factory=list)

    @property
    def data(self) -> dict[str, Any]:
        """The whole answer as the JSON object the ``impact`` tool sends (before hint, timing and budget)."""
        return self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "source_label": self.source_label, "direction": self.direction,
                "blast_radius": [e.to_dict() for e in self.blast_radius], "by_hop": dict(self.by_hop),
                "files_affected": self.files_affected, "tests_affected": list(self.tests_affected),
                "total_energy": self.total_energy, "total_reached": self.total_reached,
                "max_hops_reached": self.max_hops_reached, "causal_chains": [c.to_dict() for c in self.causal_chains]}


@dataclass(frozen=True)
class PrimedNode:
    """A node ``warmup`` primed: later queries of the agent add ``boost`` to its score (decaying per query)."""

    node_id: str
    label: str
    boost: float

    def to_dict(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "label": self.label, "boost": self.boost}


@dataclass(frozen=True)
class WarmupResult:
    """The answer of ``warmup``: the nodes a task description primed (strongest first) and how long it lasts."""

    task_description: str
    seeds: list[Seed]
    primed_nodes: list[PrimedNode]
    decay_per_query: float
    expires_after_queries: int

    @property
    def total_primed(self) -> int:
        return len(self.primed_nodes)

    @property
    def data(self) -> dict[str, Any]:
        """The whole answer as the JSON object the ``warmup`` tool sends (before hint, timing and budget)."""
        return self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        return {"task_description": self.task_description, "seeds": [s.to_dict() for s in self.seeds],
                "primed_nodes": [p.to_dict() for p in self.primed_nodes], "total_primed": self.total_primed,
                "decay_per_query": self.decay_per_query, "expires_after_queries": self.expires_after_queries}


@dataclass(frozen=True)
class MissingResult:
    """The answer of ``missing``: structural holes (likely missing links) and ghost edges around a query."""

    query: str
    structural_holes: list[dict[str, Any]]
    ghost_edges: list[dict[str, Any]]

    @property
    def data(self) -> dict[str, Any]:
        """The whole answer as the JSON object the ``missing`` tool sends (before hint, timing and budget)."""
        return self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "structural_holes": [dict(h) for h in self.structural_holes],
                "ghost_edges": [dict(x) for x in self.ghost_edges]}


# -- hypothesize -----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClaimNode:
    """A node a claim's subject, object or ``via`` phrase resolved to, with how well it matched."""

    node_id: str
    label: str
    relevance: float

    def to_dict(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "label": self.label, "relevance": self.relevance}


@dataclass(frozen=True)
class ClaimEvidence:
    """One structural fact for or against a claim, with the factor it multiplies the claim's odds by."""

    evidence_type: str
    description: str
    likelihood_factor: float
    nodes: list[str]
    relations: list[str]
    path_strength: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"evidence_type": self.evidence_type, "description": self.description,
                "likelihood_factor": self.likelihood_factor, "nodes": list(self.nodes),
                "relations": list(self.relations), "path_strength": self.path_strength}


@dataclass(frozen=True)
class PartialReach:
    """How far the subject's dependencies reach toward the object when no path links them."""

    nodes_reached: int
    max_depth_reached: int
    closest_to_object: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return {"nodes_reached": self.nodes_reached, "max_depth_reached": self.max_depth_reached,
                "closest_to_object": dict(self.closest_to_object) if self.closest_to_object else None}


@dataclass(frozen=True)
class HypothesisResult:
    """The answer of ``hypothesize``: the claim's kind, what it resolved to, the evidence each way, and the verdict
    (``likely_true`` at confidence ≥ 0.8, ``likely_false`` ≤ 0.2, else ``inconclusive``)."""

    claim: str
    claim_type: str
    negated: bool
    subject_nodes: list[ClaimNode]
    object_nodes: list[ClaimNode]
    via_nodes: list[ClaimNode]
    verdict: str
    confidence: float
    supporting_evidence: list[ClaimEvidence]
    contradicting_evidence: list[ClaimEvidence]
    partial_reach: PartialReach | None
    paths_explored: int
    budget_exhausted: bool

    def to_dict(self) -> dict[str, Any]:
        return {"claim": self.claim, "claim_type": self.claim_type, "negated": self.negated,
                "subject_nodes": [n.to_dict() for n in self.subject_nodes],
                "object_nodes": [n.to_dict() for n in self.object_nodes],
                "via_nodes": [n.to_dict() for n in self.via_nodes], "verdict": self.verdict,
                "confidence": self.confidence,
                "supporting_evidence": [e.to_dict() for e in self.supporting_evidence],
                "contradicting_evidence": [e.to_dict() for e in self.contradicting_evidence],
                "partial_reach": self.partial_reach.to_dict() if self.partial_reach is not None else None,
                "paths_explored": self.paths_explored, "budget_exhausted": self.budget_exhausted}


# -- trace -----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Suspect:
    """A node a stack trace points at: a frame's own code (``in_trace``) or code activation reached from it."""

    node_id: str
    label: str
    kind: str
    source_path: str
    line_start: int
    line_end: int
    score: float
    in_trace: bool
    frames: list[int]
    hops_from_trace: int

    def to_dict(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "label": self.label, "kind": self.kind, "source_path": self.source_path,
                "line_start": self.line_start, "line_end": self.line_end, "score": self.score,
                "in_trace": self.in_trace, "frames": list(self.frames), "hops_from_trace": self.hops_from_trace}


@dataclass(frozen=True)
class TraceResult:
    """The answer of ``trace``: the parsed frames mapped to nodes (or not, with the reason) and the ranked suspects.
    Frames stay JSON objects (their fields depend on the language of the trace)."""

    frames_total: int
    mapped: list[dict[str, Any]]
    unmapped: list[dict[str, Any]]
    suspects: list[Suspect]

    def to_dict(self) -> dict[str, Any]:
        return {"frames_total": self.frames_total, "mapped": [dict(f) for f in self.mapped],
                "unmapped": [dict(f) for f in self.unmapped], "suspects": [x.to_dict() for x in self.suspects]}
