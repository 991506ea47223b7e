"""Seeded random graphs and hypothesis strategies for the kernel tests."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from m1nd_core.csr import CSRGraph

# Deterministic hypothesis runs (every RNG seeded): derandomize, no deadline (checked builds are slower).
SETTINGS = settings(derandomize=True, deadline=None, max_examples=60,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ALL = 0xFFFFFFFF


def hand_made(n: int, edges: list[tuple[int, int, float]], rel: list[int] | None = None) -> CSRGraph:
    """A graph of ``n`` nodes from ``(src, dst, weight)`` edges (base weights equal to the weights; relation 0
    unless ``rel`` gives one per edge)."""
    src = np.array([e[0] for e in edges], np.int32)
    dst = np.array([e[1] for e in edges], np.int32)
    w = np.array([e[2] for e in edges], np.float32)
    r = np.zeros(len(edges), np.uint8) if rel is None else np.array(rel, np.uint8)
    return CSRGraph.from_edges(n, src, dst, w, w.copy(), r)


def random_edges(n: int, m: int, seed: int, *, n_relations: int = 12):
    """Up to m random edges on n nodes: no self loops, unique (src, dst, rel), weights in [0.05, 1]."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    rel = rng.integers(0, n_relations, m)
    keep = src != dst
    key = np.unique(np.stack([src[keep], dst[keep], rel[keep]], axis=1), axis=0)
    key = key[rng.permutation(len(key))]
    e = len(key)
    w = rng.uniform(0.05, 1.0, e).astype(np.float32)
    w0 = rng.uniform(0.05, 1.0, e).astype(np.float32)
    return (key[:, 0].astype(np.int32), key[:, 1].astype(np.int32), w, w0, key[:, 2].astype(np.uint8))


def random_graph(n: int, m: int, seed: int, **kw) -> CSRGraph:
    return CSRGraph.from_edges(n, *random_edges(n, m, seed, **kw))


@st.composite
def graphs(draw, max_nodes: int = 60, max_degree: float = 4.0, min_nodes: int = 1):
    """A CSRGraph with 1..max_nodes nodes and up to max_degree·n edges (seeded numpy generator)."""
    n = draw(st.integers(min_nodes, max_nodes))
    m = draw(st.integers(0, int(max_degree * n)))
    seed = draw(st.integers(0, 2**32 - 1))
    return random_graph(n, m, seed)


masks = st.one_of(st.just(ALL), st.integers(0, (1 << 12) - 1))
