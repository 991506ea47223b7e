"""Helpers for the ingest pipeline tests: write a small repo from a dict, run the pipeline, index the result.

A uniquely named module (not ``conftest``) so ``from ingest_helpers import ...`` never collides with other test
directories' conftest modules when the whole suite runs together.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from m1nd.graph.schema import KINDS, RELATION_CODES, RELATIONS
from m1nd.ingest.pipeline import build_graph_parts
from m1nd.ingest.resolve import EdgeRecord, GraphParts, NodeRecord


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


@dataclass
class Graph:
    parts: GraphParts
    stats: dict[str, Any]
    nodes: dict[str, NodeRecord]
    edges: dict[tuple[str, str, str], EdgeRecord]

    def node(self, ext_id: str) -> NodeRecord:
        assert ext_id in self.nodes, f"missing node {ext_id}; similar: {self.similar(ext_id)}"
        return self.nodes[ext_id]

    def similar(self, ext_id: str) -> list[str]:
        tail = ext_id.rsplit("::", 1)[-1]
        return sorted(k for k in self.nodes if k.endswith(tail))[:10]

    def has(self, src: str, dst: str, rel: str) -> bool:
        return (src, dst, rel) in self.edges

    def edge(self, src: str, dst: str, rel: str) -> EdgeRecord:
        key = (src, dst, rel)
        assert key in self.edges, f"missing edge {key}; from src: {self.out(src)}"
        return self.edges[key]

    def out(self, src: str, rel: str | None = None) -> list[tuple[str, str]]:
        return sorted((d, r) for (s, d, r) in self.edges if s == src and (rel is None or r == rel))

    def targets(self, src: str, rel: str) -> set[str]:
        return {d for (s, d, r) in self.edges if s == src and r == rel}

    def rel_count(self, rel: str) -> int:
        return sum(1 for k in self.edges if k[2] == rel)


def index(parts: GraphParts, stats: dict[str, Any] | None = None) -> Graph:
    nodes = {n.ext_id: n for n in parts.nodes}
    edges = {(e.src, e.dst, RELATIONS[e.relation].name): e for e in parts.edges}
    return Graph(parts, stats or {}, nodes, edges)


def build(root: Path, **opts: Any) -> Graph:
    parts, _wr, _git, stats = build_graph_parts(root, workers=1, **opts)
    return index(parts, stats)


GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(root: Path, *args: str, epoch: int | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    if epoch is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{epoch} +0000"
    out = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env, text=True)
    return out.stdout


def assert_invariants(g: Graph) -> None:
    """graph.md §16.1 / §16.3 on the produced records."""
    contained: dict[str, int] = {}
    for (s, d, r), e in g.edges.items():
        assert s in g.nodes and d in g.nodes, (s, d)
        assert s != d
        assert 0.05 <= e.w0 <= 1.0 and e.count >= 1
        assert r in RELATION_CODES
        if r == "contains":
            contained[d] = contained.get(d, 0) + 1
        if r == "co_changes":
            assert s < d
    for ext, n in g.nodes.items():
        assert n.source_path
        if n.kind == KINDS["dir"]:
            assert n.line_start == 0 and n.line_end == 0
        else:
            assert n.line_start >= 1 and n.line_end >= n.line_start, ext
        if ext.endswith("dir::."):
            assert ext not in contained
        else:
            assert contained.get(ext) == 1, (ext, contained.get(ext))
