"""Typed results of the Python API: what :class:`m1nd.workspace.Workspace`'s query methods return.

``Workspace.activate(...) -> ActivationResult`` and friends give Python callers dataclasses with named, typed
fields instead of ``call_tool(...).structured[...]``. The code-graph calls (``activate``, ``why``, ``impact``,
``warmup``, ``missing``, ``hypothesize``, ``trace``, ``learn``, ``drift``, ``diverge``, ``persist``, ``health``, the
trail calls) and the perspective calls (``Workspace.perspectives.start(...)`` and the rest) return the services' own
result types (:mod:`m1nd.graph.results`, :mod:`m1nd.codegraph.results`, :mod:`m1nd.perspectives.results`,
re-exported here), whose ``to_dict()`` is the tool's wire object; so do the memory calls other than search
(:mod:`m1nd.memory.results`: ``Added``, ``Updated``, ``Restored``, ``Session``, ``MemoryStats``, …), while
``MemoryEntry`` and ``MemorySearchResult`` are built from the service's answer by ``from_service``. Every result's
``data`` (or ``to_dict()``) is the whole answer as a JSON object (what the tool sends, before the tool layer adds its
hint and timing and fits it into a response budget), so nothing is lost.

Example::

    from m1nd import Workspace
    from m1nd.config import load_settings

    ws = Workspace(load_settings(workspace="."))
    ws.ingest(".")
    for hit in ws.activate("session pool", top_k=5).activated:
        print(f"{hit.activation:.3f} {hit.node_id} ({hit.source_path}:{hit.line_start})")
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from m1nd.codegraph.results import (DivergeResult, DriftResult, HealthReport, IngestReport, LearningMigrated,
                                    LearnResult, NodeRef, PersistResult, TrailArchived, TrailDetail, TrailList,
                                    TrailMerged, TrailResumed, TrailSaved, TrailSummary, UnlinkedPair, WeightChange,
                                    WeightDrift, WeightDriftSummary, WeightsReset, WeightStats)
from m1nd.graph.results import (ActivationHit, ActivationResult, CausalChain, ClaimEvidence, ClaimNode,
                                HypothesisResult, ImpactEntry, ImpactResult, MissingResult, PartialReach, Path,
                                PrimedNode, Seed, Suspect, TraceResult, WarmupResult, WhyResult)
from m1nd.memory.registry_results import (Agent, Applicability, ContentType, FactType, Project, Registered,
                                          RegistryValue, RelationshipType, ResonanceType)
from m1nd.memory.results import (Added, AddResult, AgentsSeeded, AlreadySaved, Backup, BatchAdded, BatchFailure,
                                 BatchItem, Deleted, EntryList, FactSession, MemoryHealth, MemoryStats, Migrated,
                                 OpenThread, RecentFact, Reinforcement, Related, Relationship, Restored, SearchHits,
                                 Seeded, Session, SessionClosed, SessionFact, ThreadClosed, Updated)
from m1nd.perspectives.results import (NodeBrief, PeekContent, PerspectiveBack, PerspectiveBranch, PerspectiveClosed,
                                       PerspectiveComparison, PerspectiveFollowed, PerspectiveList, PerspectiveRoutes,
                                       PerspectiveStarted, PerspectiveSummary, RouteAffinity, RouteInspection,
                                       RoutePeek, Suggestion)

__all__ = ["ActivationHit", "ActivationResult", "AddResult", "Added", "Agent", "AgentsSeeded", "AlreadySaved",
           "Applicability", "Backup", "BatchAdded", "BatchFailure", "BatchItem", "CausalChain", "ClaimEvidence",
           "ClaimNode", "ContentType", "Deleted", "DivergeResult", "DriftResult", "EntryList", "FactSession",
           "FactType", "HealthReport", "HypothesisResult", "ImpactEntry", "ImpactResult", "IngestReport", "LearnResult",
           "LearningMigrated", "MemoryEntry", "MemoryHealth", "MemorySearchResult", "MemoryStats", "Migrated",
           "MissingResult", "NodeBrief", "NodeRef", "OpenThread", "PartialReach", "Path", "PeekContent",
           "PersistResult", "PerspectiveBack", "PerspectiveBranch", "PerspectiveClosed", "PerspectiveComparison",
           "PerspectiveFollowed", "PerspectiveList", "PerspectiveRoutes", "PerspectiveStarted", "PerspectiveSummary",
           "PrimedNode", "Project", "RecentFact", "Registered", "RegistryValue", "Reinforcement", "Related",
           "Relationship", "RelationshipType", "ResonanceType", "Restored", "RouteAffinity", "RouteInspection",
           "RoutePeek", "SearchHits", "Seed", "Seeded", "Session", "SessionClosed", "SessionFact", "Suggestion",
           "Suspect", "ThreadClosed", "TraceResult", "TrailArchived", "TrailDetail", "TrailList", "TrailMerged",
           "TrailResumed", "TrailSaved", "TrailSummary", "UnlinkedPair", "Updated", "WarmupResult", "WeightChange",
           "WeightDrift", "WeightDriftSummary", "WeightStats", "WeightsReset", "WhyResult"]


@dataclass(frozen=True)
class MemoryEntry:
    """A knowledge entry as the memory service answers it (``data`` has every field)."""

    id: str
    title: str
    category: str
    body: str
    tags: list[str]
    code_refs: list[str]
    data: dict[str, Any]

    @classmethod
    def from_service(cls, d: Mapping[str, Any]) -> MemoryEntry:
        return cls(id=str(d["id"]), title=str(d.get("title") or ""),
                   category=str(d.get("category") or d.get("category_id") or ""),
                   body=str(d.get("body") or ""), tags=[str(t) for t in d.get("tags") or []],
                   code_refs=[str(r) for r in d.get("code_refs") or []], data=dict(d))


@dataclass(frozen=True)
class MemorySearchResult:
    """The answer of a memory search: entries best first, the mode used and the service's notes."""

    query: str
    mode: str
    results: list[MemoryEntry]
    notes: list[str]
