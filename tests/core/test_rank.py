"""pagerank: exact small cases, reference power iteration, normalisation properties, validation."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from m1nd_core import rank
from m1nd_core.csr import CSRGraph

from . import reference as ref
from .graphs import SETTINGS, graphs, masks

I32, F32, U8 = np.int32, np.float32, np.uint8


def make(n, edges, rel=None, base=None):
    src = np.array([e[0] for e in edges], I32)
    dst = np.array([e[1] for e in edges], I32)
    w = np.array([e[2] for e in edges], F32)
    w0 = w.copy() if base is None else np.array(base, F32)
    r = np.zeros(len(edges), U8) if rel is None else np.array(rel, U8)
    return CSRGraph.from_edges(n, src, dst, w, w0, r)


def test_cycle_is_uniform():
    g = make(3, [(0, 1, 0.5), (1, 2, 0.5), (2, 0, 0.5)])
    out = np.zeros(3, F32)
    it = rank.pagerank(g, out)
    assert it == 1 and np.allclose(out, 1.0)


def test_star_and_dangling_exact():
    # 1, 2 -> 0; node 0 dangling. Stationary: p0 = (0.15 + 0.85*p0)/3 + 0.85*(p1+p2) ... solve the 2-state system
    g = make(3, [(1, 0, 1.0), (2, 0, 1.0)])
    out = np.zeros(3, F32)
    rank.pagerank(g, out, tol=1e-12, max_iter=1000)
    d = 0.85
    # by symmetry p1 = p2 = x, p0 = 1 - 2x; x = (1-d)/3 + d*p0/3
    x = ((1 - d) / 3 + d / 3) / (1 + 2 * d / 3)
    p = np.array([1 - 2 * x, x, x])
    assert np.allclose(out, p / p.max(), atol=1e-6)


def test_weights_choice_and_mask():
    g = make(3, [(0, 1, 0.9), (0, 2, 0.1)], rel=[0, 1], base=[0.1, 0.9])
    out_b, out_w = np.zeros(3, F32), np.zeros(3, F32)
    rank.pagerank(g, out_b)
    rank.pagerank(g, out_w, use_base_weights=False)
    assert out_b[2] > out_b[1] and out_w[1] > out_w[2]
    out_m = np.zeros(3, F32)
    rank.pagerank(g, out_m, relation_mask=1 << 0)       # 0 -> 2 excluded
    assert out_m[1] > out_m[2]


def test_empty_and_max_iter_zero():
    g = make(0, [])
    assert rank.pagerank(g, np.zeros(0, F32)) == 0
    g = make(2, [(0, 1, 1.0)])
    out = np.zeros(2, F32)
    assert rank.pagerank(g, out, max_iter=0) == 0 and out.tolist() == [1.0, 1.0]


@SETTINGS
@given(graphs(), masks, st.sampled_from([0.0, 0.5, 0.85, 1.0]), st.booleans())
def test_pagerank_matches_reference(g, mask, damping, use_base):
    out = np.zeros(g.n_nodes, F32)
    it = rank.pagerank(g, out, relation_mask=mask, damping=damping, use_base_weights=use_base)
    want, it_want = ref.pagerank(g.n_nodes, ref.edge_list(g), mask=mask, damping=damping, use_base_weights=use_base)
    assert np.allclose(out, want, rtol=1e-5, atol=1e-6)
    assert abs(it - it_want) <= 1 and 1 <= it <= 100
    assert out.max() == 1.0 and np.all(out >= 0) and np.all(np.isfinite(out))
    assert damping == 1.0 or np.all(out > 0)


def test_validation():
    g = make(2, [(0, 1, 1.0)])
    with pytest.raises(ValueError, match="out must have length 2"):
        rank.pagerank(g, np.zeros(3, F32))
    with pytest.raises(ValueError, match="out must have dtype float32"):
        rank.pagerank(g, np.zeros(2))
    with pytest.raises(ValueError, match=r"damping must be in \[0, 1\]"):
        rank.pagerank(g, np.zeros(2, F32), damping=1.5)
    with pytest.raises(ValueError, match="tol must be"):
        rank.pagerank(g, np.zeros(2, F32), tol=-1)
    with pytest.raises(ValueError, match="max_iter must be"):
        rank.pagerank(g, np.zeros(2, F32), max_iter=-1)
