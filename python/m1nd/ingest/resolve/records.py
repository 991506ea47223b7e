"""What resolution produces: node and edge records and the graph parts of one root."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class NodeRecord:
    ext_id: str
    label: str
    qname: str
    kind: int
    lang: str
    source_path: str
    line_start: int
    line_end: int
    signature: str
    doc: str
    is_test: bool
    content_hash: str
    last_change_ms: int
    churn: float
    commit_count: int


@dataclass(slots=True)
class EdgeRecord:
    src: str
    dst: str
    relation: int
    w0: float
    count: int


@dataclass(slots=True)
class GraphParts:
    nodes: list[NodeRecord]
    edges: list[EdgeRecord]
    unresolved_refs: int = 0
    ambiguous_refs: int = 0
    external_imports: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
