"""Typed results of the Python API: what :class:`m1nd.workspace.Workspace`'s query methods return.

``Workspace.activate(...) -> ActivationResult`` and friends give Python callers dataclasses with named, typed
fields instead of ``call_tool(...).structured[...]``. Each result is built from the service's answer by
``from_service``; the fields are the ones worth naming, and ``data`` keeps the whole answer (the same JSON object
the ``activate`` tool returns, before the tool layer fits it into a response budget), so nothing is lost.

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
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ActivationHit", "ActivationResult", "ImpactEntry", "ImpactResult", "IngestReport", "MemoryEntry",
           "MemorySearchResult", "Path", "Seed", "WhyResult"]


def _float(v: Any) -> float:
    return float(v) if v is not None else 0.0


@dataclass(frozen=True)
class Seed:
    """A node the query's words (or an id in it) matched directly: where activation started."""

    node_id: str
    label: str
    relevance: float
    via: str

    @classmethod
    def from_service(cls, d: Mapping[str, Any]) -> Seed:
        return cls(str(d["node_id"]), str(d["label"]), _float(d["relevance"]), str(d.get("via", "")))


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

    @classmethod
    def from_service(cls, d: Mapping[str, Any]) -> ActivationHit:
        return cls(node_id=str(d["node_id"]), label=str(d["label"]), kind=str(d["kind"]),
                   activation=_float(d["activation"]), source_path=str(d.get("source_path") or ""),
                   line_start=int(d.get("line_start") or 0), line_end=int(d.get("line_end") or 0),
                   pagerank=_float(d.get("pagerank")), primed=_float(d.get("primed")),
                   dimensions={str(k): _float(v) for k, v in (d.get("dimensions") or {}).items()})


@dataclass(frozen=True)
class ActivationResult:
    """The answer of ``activate``: ranked nodes (best first) and the seeds they were reached from."""

    query: str
    seeds: list[Seed]
    activated: list[ActivationHit]
    total_activated: int
    semantic_backend: str
    graph_generation: int
    hint: str | None
    data: dict[str, Any]

    @classmethod
    def from_service(cls, d: Mapping[str, Any]) -> ActivationResult:
        return cls(query=str(d["query"]), seeds=[Seed.from_service(s) for s in d.get("seeds", [])],
                   activated=[ActivationHit.from_service(a) for a in d.get("activated", [])],
                   total_activated=int(d.get("total_activated") or 0),
                   semantic_backend=str(d.get("semantic_backend") or ""),
                   graph_generation=int(d.get("graph_generation") or 0), hint=d.get("hint"), data=dict(d))

    @property
    def node_ids(self) -> list[str]:
        return [a.node_id for a in self.activated]


@dataclass(frozen=True)
class Path:
    """One path of ``why``: node ids from source to target, their labels and the relations between them."""

    nodes: list[str]
    labels: list[str]
    relations: list[str]
    cumulative_strength: float
    hops: int

    @classmethod
    def from_service(cls, d: Mapping[str, Any]) -> Path:
        return cls(nodes=[str(x) for x in d.get("nodes", [])], labels=[str(x) for x in d.get("labels", [])],
                   relations=[str(x) for x in d.get("relations", [])],
                   cumulative_strength=_float(d.get("cumulative_strength")), hops=int(d.get("hops") or 0))


@dataclass(frozen=True)
class WhyResult:
    """The answer of ``why``: the strongest simple paths between two nodes (strongest first)."""

    source: str
    target: str
    paths: list[Path]
    total_paths_found: int
    budget_exhausted: bool
    data: dict[str, Any]

    @classmethod
    def from_service(cls, d: Mapping[str, Any]) -> WhyResult:
        return cls(source=str(d["source"]), target=str(d["target"]),
                   paths=[Path.from_service(p) for p in d.get("paths", [])],
                   total_paths_found=int(d.get("total_paths_found") or 0),
                   budget_exhausted=bool(d.get("budget_exhausted")), data=dict(d))


@dataclass(frozen=True)
class ImpactEntry:
    """One node a change may affect: how strongly, how far, and through which relation."""

    node_id: str
    label: str
    kind: str
    signal_strength: float
    hop_distance: int
    direction: str
    via_relation: str

    @classmethod
    def from_service(cls, d: Mapping[str, Any]) -> ImpactEntry:
        return cls(node_id=str(d["node_id"]), label=str(d["label"]), kind=str(d["kind"]),
                   signal_strength=_float(d.get("signal_strength")), hop_distance=int(d.get("hop_distance") or 0),
                   direction=str(d.get("direction") or ""), via_relation=str(d.get("via_relation") or ""))


@dataclass(frozen=True)
class ImpactResult:
    """The answer of ``impact``: the blast radius of changing one node (strongest first)."""

    source: str
    direction: str
    blast_radius: list[ImpactEntry]
    total_energy: float
    tests_affected: list[Any]
    data: dict[str, Any]

    @classmethod
    def from_service(cls, d: Mapping[str, Any]) -> ImpactResult:
        return cls(source=str(d["source"]), direction=str(d["direction"]),
                   blast_radius=[ImpactEntry.from_service(e) for e in d.get("blast_radius", [])],
                   total_energy=_float(d.get("total_energy")), tests_affected=list(d.get("tests_affected") or []),
                   data=dict(d))


@dataclass(frozen=True)
class IngestReport:
    """The answer of ``ingest``: what was scanned and parsed, and the new graph generation."""

    files_scanned: int
    files_parsed: int
    nodes: dict[str, int]
    edges: dict[str, int]
    graph_generation: int
    changed: bool
    warnings: list[str]
    data: dict[str, Any]

    @classmethod
    def from_service(cls, d: Mapping[str, Any]) -> IngestReport:
        def counts(v: Any) -> dict[str, int]:
            return {str(k): int(x) for k, x in v.items() if isinstance(x, int)} if isinstance(v, Mapping) else {}

        return cls(files_scanned=int(d.get("files_scanned") or 0), files_parsed=int(d.get("files_parsed") or 0),
                   nodes=counts(d.get("nodes")), edges=counts(d.get("edges")),
                   graph_generation=int(d.get("graph_generation") or 0), changed=bool(d.get("changed", True)),
                   warnings=[str(w) for w in d.get("warnings") or []], data=dict(d))


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
