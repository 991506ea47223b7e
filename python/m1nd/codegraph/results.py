"""Typed results of the trail calls (:mod:`m1nd.codegraph.trails`): what ``trail_save``, ``trail_resume``,
``trail_list`` and ``trail_merge`` answer.

Like :mod:`m1nd.graph.results` for the graph queries: the service returns these dataclasses and the tool layer turns
them into the wire objects with :meth:`to_dict` (keys in the order the tools have always sent them), then adds the
hint and ``elapsed_ms``. Items without a fixed shape yet (downgraded hypotheses, merge conflicts, discovered
connections) stay JSON objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TrailList", "TrailMerged", "TrailResumed", "TrailSaved", "TrailSummary"]


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
