"""Typed results of the perspective calls (perspectives.md §6): what the twelve ``perspective_*`` tools answer.

Like :mod:`m1nd.graph.results` for the graph queries: :class:`m1nd.perspectives.service.PerspectiveService` returns
these dataclasses and the tool layer turns them into the wire objects with :meth:`to_dict` (keys in the order the
tools have always sent them), then adds the hint and ``elapsed_ms``. Routes stay JSON objects (their shape is the
synthesis's, :func:`m1nd.perspectives.synthesis.public_route`), as do suggestions, affinity candidates and region
locks; the optional keys (``mode_note``, ``diagnostic``) are left out when None, as on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["NodeBrief", "PeekContent", "PerspectiveBack", "PerspectiveBranch", "PerspectiveClosed",
           "PerspectiveComparison", "PerspectiveFollowed", "PerspectiveList", "PerspectiveRoutes",
           "PerspectiveStarted", "PerspectiveSummary", "RouteAffinity", "RouteInspection", "RoutePeek",
           "Suggestion"]

Route = dict[str, Any]


def _mode(mode: str, mode_effective: str, mode_note: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"mode": mode, "mode_effective": mode_effective}
    if mode_note is not None:
        out["mode_note"] = mode_note
    return out


def _with_diagnostic(out: dict[str, Any], diagnostic: Any) -> dict[str, Any]:
    if diagnostic:
        out["diagnostic"] = diagnostic
    return out


@dataclass(frozen=True)
class NodeBrief:
    """A node by external id and label (``relevance``: how well the query matched it, for seeds)."""

    node_id: str
    label: str
    relevance: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"node_id": self.node_id, "label": self.label}
        if self.relevance is not None:
            out["relevance"] = self.relevance
        return out


@dataclass(frozen=True)
class PerspectiveStarted:
    """The answer of ``perspective_start``: the new perspective, its focus and the first page of routes."""

    perspective_id: str
    mode: str
    mode_effective: str
    mode_note: str | None
    anchor_node: str | None
    focus_node: str
    focus_label: str
    seeds: list[NodeBrief]
    routes: list[Route]
    total_routes: int
    page: int
    total_pages: int
    route_set_version: int
    cache_generation: int
    lens_summary: Any
    lock_id: str | None
    overlapping_locks: list[dict[str, Any]]
    suggested: str | None
    semantic_backend: str | None
    diagnostic: Any = None

    def to_dict(self) -> dict[str, Any]:
        return _with_diagnostic({
            "perspective_id": self.perspective_id, **_mode(self.mode, self.mode_effective, self.mode_note),
            "anchor_node": self.anchor_node, "focus_node": self.focus_node, "focus_label": self.focus_label,
            "seeds": [s.to_dict() for s in self.seeds], "routes": list(self.routes),
            "total_routes": self.total_routes, "page": self.page, "total_pages": self.total_pages,
            "route_set_version": self.route_set_version, "cache_generation": self.cache_generation,
            "lens_summary": self.lens_summary, "lock_id": self.lock_id, "overlapping_locks": self.overlapping_locks,
            "suggested": self.suggested, "semantic_backend": self.semantic_backend}, self.diagnostic)


@dataclass(frozen=True)
class PerspectiveRoutes:
    """The answer of ``perspective_routes``: one page of the current route set (refreshed after a graph change)."""

    perspective_id: str
    mode: str
    mode_effective: str
    mode_note: str | None
    anchor: str | None
    focus: str
    lens_summary: Any
    routes: list[Route]
    total_routes: int
    page: int
    total_pages: int
    page_size: int
    page_size_clamped: bool
    page_clamped: bool
    route_set_version: int
    cache_generation: int
    refreshed: bool
    version_mismatch: bool
    family_counts: dict[str, int]
    suggested: str | None
    diagnostic: Any = None

    def to_dict(self) -> dict[str, Any]:
        return _with_diagnostic({
            "perspective_id": self.perspective_id, **_mode(self.mode, self.mode_effective, self.mode_note),
            "anchor": self.anchor, "focus": self.focus, "lens_summary": self.lens_summary,
            "routes": list(self.routes), "total_routes": self.total_routes, "page": self.page,
            "total_pages": self.total_pages, "page_size": self.page_size,
            "page_size_clamped": self.page_size_clamped, "page_clamped": self.page_clamped,
            "route_set_version": self.route_set_version, "cache_generation": self.cache_generation,
            "refreshed": self.refreshed, "version_mismatch": self.version_mismatch,
            "family_counts": dict(self.family_counts), "suggested": self.suggested}, self.diagnostic)


@dataclass(frozen=True)
class RouteInspection:
    """The answer of ``perspective_inspect``: one route (``route``: its public fields) explained in full."""

    route: Route
    target_type: str
    family_explanation: str
    path: list[str]
    path_relations: list[str]
    score_breakdown: dict[str, Any]
    score_weights: dict[str, Any]
    provenance: dict[str, Any]
    affinity_candidates: list[dict[str, Any]]
    target_metrics: dict[str, Any]
    perspective_id: str
    mode_effective: str
    route_set_version: int
    semantic_backend: str | None

    def to_dict(self) -> dict[str, Any]:
        return {**self.route, "target_type": self.target_type, "family_explanation": self.family_explanation,
                "path": list(self.path), "path_relations": list(self.path_relations),
                "score_breakdown": dict(self.score_breakdown), "score_weights": dict(self.score_weights),
                "provenance": self.provenance, "affinity_candidates": list(self.affinity_candidates),
                "target_metrics": dict(self.target_metrics), "perspective_id": self.perspective_id,
                "mode_effective": self.mode_effective, "route_set_version": self.route_set_version,
                "semantic_backend": self.semantic_backend}


@dataclass(frozen=True)
class PeekContent:
    """An excerpt of a route target's source, read from inside an ingested root."""

    excerpt: str
    file_path: str
    line_start: int
    line_end: int
    truncated: bool
    span_lines: int
    encoding_replaced: bool

    def to_dict(self) -> dict[str, Any]:
        return {"excerpt": self.excerpt, "file_path": self.file_path, "line_start": self.line_start,
                "line_end": self.line_end, "truncated": self.truncated, "span_lines": self.span_lines,
                "encoding_replaced": self.encoding_replaced}


@dataclass(frozen=True)
class RoutePeek:
    """The answer of ``perspective_peek``: the excerpt, and whether the file changed since it was ingested."""

    perspective_id: str
    route_id: str
    target_node: str
    content: PeekContent
    provenance_stale: bool
    route_set_version: int

    def to_dict(self) -> dict[str, Any]:
        return {"perspective_id": self.perspective_id, "route_id": self.route_id, "target_node": self.target_node,
                "content": self.content.to_dict(), "provenance_stale": self.provenance_stale,
                "route_set_version": self.route_set_version}


@dataclass(frozen=True)
class PerspectiveFollowed:
    """The answer of ``perspective_follow``: the focus moved along a route, and the new first page of routes."""

    perspective_id: str
    previous_focus: str
    new_focus: str
    new_focus_label: str
    followed: dict[str, Any]
    mode: str
    mode_effective: str
    mode_note: str | None
    routes: list[Route]
    total_routes: int
    page: int
    total_pages: int
    route_set_version: int
    cache_generation: int
    suggested: str | None
    diagnostic: Any = None

    def to_dict(self) -> dict[str, Any]:
        return _with_diagnostic({
            "perspective_id": self.perspective_id, "previous_focus": self.previous_focus,
            "new_focus": self.new_focus, "new_focus_label": self.new_focus_label, "followed": dict(self.followed),
            **_mode(self.mode, self.mode_effective, self.mode_note), "routes": list(self.routes),
            "total_routes": self.total_routes, "page": self.page, "total_pages": self.total_pages,
            "route_set_version": self.route_set_version, "cache_generation": self.cache_generation,
            "suggested": self.suggested}, self.diagnostic)


@dataclass(frozen=True)
class Suggestion:
    """The answer of ``perspective_suggest``: one next action with its reason, and the runners-up."""

    perspective_id: str
    suggestion: dict[str, Any]
    alternatives: list[dict[str, Any]]
    based_on: str
    route_set_version: int

    def to_dict(self) -> dict[str, Any]:
        return {"perspective_id": self.perspective_id, "suggestion": dict(self.suggestion),
                "alternatives": list(self.alternatives), "based_on": self.based_on,
                "route_set_version": self.route_set_version}


@dataclass(frozen=True)
class RouteAffinity:
    """The answer of ``perspective_affinity``: probable (unlinked) connections of a route's target."""

    perspective_id: str
    route_id: str
    target_node: str
    notice: str
    candidates: list[dict[str, Any]]
    semantic_backend: str | None
    route_set_version: int
    diagnostic: Any = None

    def to_dict(self) -> dict[str, Any]:
        return _with_diagnostic({
            "perspective_id": self.perspective_id, "route_id": self.route_id, "target_node": self.target_node,
            "notice": self.notice, "candidates": list(self.candidates), "semantic_backend": self.semantic_backend,
            "route_set_version": self.route_set_version}, self.diagnostic)


@dataclass(frozen=True)
class PerspectiveBranch:
    """The answer of ``perspective_branch``: the new branch, a copy of the perspective at its current focus."""

    perspective_id: str
    branch_perspective_id: str
    branch_name: str
    branched_from_focus: str
    route_set_version: int
    lock_id: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"perspective_id": self.perspective_id, "branch_perspective_id": self.branch_perspective_id,
                "branch_name": self.branch_name, "branched_from_focus": self.branched_from_focus,
                "route_set_version": self.route_set_version, "lock_id": self.lock_id}


@dataclass(frozen=True)
class PerspectiveBack:
    """The answer of ``perspective_back``: the focus before the last follow, restored (``mode_note`` comes last
    here)."""

    perspective_id: str
    restored_focus: str
    restored_mode: str
    mode: str
    routes: list[Route]
    total_routes: int
    page: int
    total_pages: int
    route_set_version: int
    cache_generation: int
    nav_event_count: int
    suggested: str | None
    mode_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "perspective_id": self.perspective_id, "restored_focus": self.restored_focus,
            "restored_mode": self.restored_mode, "mode": self.mode, "routes": list(self.routes),
            "total_routes": self.total_routes, "page": self.page, "total_pages": self.total_pages,
            "route_set_version": self.route_set_version, "cache_generation": self.cache_generation,
            "nav_event_count": self.nav_event_count, "suggested": self.suggested}
        if self.mode_note is not None:
            out["mode_note"] = self.mode_note
        return out


@dataclass(frozen=True)
class PerspectiveComparison:
    """The answer of ``perspective_compare``: the nodes two perspectives visited, shared and not, and how their
    activation differs per dimension."""

    perspective_id_a: str
    perspective_id_b: str
    shared_nodes: list[NodeBrief]
    unique_to_a: list[NodeBrief]
    unique_to_b: list[NodeBrief]
    overlap: float
    dimension_deltas: list[dict[str, Any]]
    generation_warning: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"perspective_id_a": self.perspective_id_a, "perspective_id_b": self.perspective_id_b,
                "shared_nodes": [n.to_dict() for n in self.shared_nodes],
                "unique_to_a": [n.to_dict() for n in self.unique_to_a],
                "unique_to_b": [n.to_dict() for n in self.unique_to_b], "overlap": self.overlap,
                "dimension_deltas": list(self.dimension_deltas), "generation_warning": self.generation_warning}


@dataclass(frozen=True)
class PerspectiveSummary:
    """One open perspective of the agent, at a glance."""

    perspective_id: str
    mode: str
    mode_effective: str
    anchor_node: str | None
    focus_node: str
    branch_of: str | None
    branch_name: str | None
    route_count: int
    nav_event_count: int
    stale: bool
    route_set_version: int
    created_at_ms: int
    last_accessed_ms: int
    memory_bytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"perspective_id": self.perspective_id, "mode": self.mode, "mode_effective": self.mode_effective,
                "anchor_node": self.anchor_node, "focus_node": self.focus_node, "branch_of": self.branch_of,
                "branch_name": self.branch_name, "route_count": self.route_count,
                "nav_event_count": self.nav_event_count, "stale": self.stale,
                "route_set_version": self.route_set_version, "created_at_ms": self.created_at_ms,
                "last_accessed_ms": self.last_accessed_ms, "memory_bytes": self.memory_bytes}


@dataclass(frozen=True)
class PerspectiveList:
    """The answer of ``perspective_list``: the agent's open perspectives, their memory and the limits."""

    perspectives: list[PerspectiveSummary]
    total_memory_bytes: int
    limits: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"perspectives": [p.to_dict() for p in self.perspectives],
                "total_memory_bytes": self.total_memory_bytes, "limits": dict(self.limits)}


@dataclass(frozen=True)
class PerspectiveClosed:
    """The answer of ``perspective_close``: the perspective is gone, with the region locks it held."""

    perspective_id: str
    closed: bool
    locks_released: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"perspective_id": self.perspective_id, "closed": self.closed,
                "locks_released": list(self.locks_released)}
