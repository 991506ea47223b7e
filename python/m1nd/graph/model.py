"""A loaded graph: node table + CSR engine + query indexes, for one graph generation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from m1nd.graph.engine import Engine, relation_mask, table16
from m1nd.graph.history import HistoryIndex
from m1nd.graph.lexicon import TermIndex
from m1nd.graph.nodes import NodeTable
from m1nd.graph.schema import CO_CHANGES, MENTIONS, RELATION_CODES, RELATIONS
from m1nd.graph.seeds import SeedIndex
from m1nd.graph.semantic import TrigramIndex

RHO = table16({r.code: r.rho for r in RELATIONS})
CAUSAL = table16({r.code: r.causal for r in RELATIONS}, default=0.0)
CAUSAL_RHO = (CAUSAL * RHO).astype(np.float32)
ALL_MASK = relation_mask([r.code for r in RELATIONS])
STRUCTURAL_MASK = ALL_MASK & ~(1 << CO_CHANGES)
CAUSAL_MASK = relation_mask([r.code for r in RELATIONS if r.causal > 0])
PAGERANK_MASK = ALL_MASK & ~(1 << CO_CHANGES) & ~(1 << MENTIONS)


def relation_name(code: int, forward: bool = True) -> str:
    r = RELATIONS[int(code)]
    return r.name if forward else r.inverse_name


def edge_label(g: Graph, p: int) -> tuple[str, str, str, str]:
    """(``"<src label> -> <dst label>"``, src ext id, dst ext id, relation name) of forward edge position p."""
    src, dst = g.edge_endpoints()
    u, v = int(src[p]), int(dst[p])
    t = g.nodes
    return (f"{t.label[u]} -> {t.label[v]}", t.ext_id[u], t.ext_id[v],
            relation_name(int(g.engine.csr.relations[p])))


def mask_from_names(names: list[str]) -> int:
    from m1nd.errors import InvalidInputError
    from m1nd.graph.schema import INVERSE_RELATION_CODES

    codes = []
    for n in names:
        code = RELATION_CODES.get(n, INVERSE_RELATION_CODES.get(n))
        if code is None:
            raise InvalidInputError(f"unknown relation '{n}'; valid: {', '.join(RELATION_CODES)}")
        codes.append(code)
    return relation_mask(codes)


@dataclass
class Graph:
    nodes: NodeTable
    engine: Engine
    seeds: SeedIndex
    trigram: TrigramIndex
    graph_generation: int
    has_git: bool
    extra: dict[str, Any] = field(default_factory=dict)
    lexicon: TermIndex | None = None  # BM25F index (absent only for graphs built without stored terms)
    history: HistoryIndex | None = None  # commit subjects per file (absent without git history)

    @property
    def n(self) -> int:
        return self.nodes.n

    @property
    def e(self) -> int:
        return self.engine.e

    def edge_endpoints(self) -> tuple[np.ndarray, np.ndarray]:
        """(src, dst) node index of every forward edge position (cached)."""
        if "src" not in self.extra:
            self.extra["src"] = self.engine.edge_sources()
        return self.extra["src"], self.engine.csr.indices

    def drop_query_caches(self) -> None:
        """Forget every per-query cache of this generation (query similarities, and those of any
        ``extra`` entry with a ``drop_query_caches`` method): the next query costs what a never-seen one does.
        For benchmarks of cold queries and for memory pressure; results never depend on it."""
        self.trigram.drop_query_caches()
        for v in list(self.extra.values()):
            drop = getattr(v, "drop_query_caches", None)
            if callable(drop):
                drop()

    def node_brief(self, i: int) -> dict[str, Any]:
        t = self.nodes
        return {"node_id": t.ext_id[i], "label": t.label[i], "kind": t.kind_name(i)}
