"""CSRGraph construction, shared-memory properties, queries and graph.md §16 invariants 1-2."""

import numpy as np
import pytest
from hypothesis import given

from m1nd_core.csr import CSRGraph

from .graphs import SETTINGS, graphs, masks, random_edges

I32, I64, F32, U8 = np.int32, np.int64, np.float32, np.uint8


def tiny():
    # input rows deliberately unsorted
    src = np.array([0, 0, 0, 1, 2, 3], I32)
    dst = np.array([2, 1, 1, 2, 0, 0], I32)
    rel = np.array([2, 2, 0, 2, 1, 5], U8)
    w = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], F32)
    return CSRGraph.from_edges(4, src, dst, w, w * 0.5, rel), (src, dst, w, rel)


def test_from_edges_layout():
    g, (src, dst, w, rel) = tiny()
    assert (g.n_nodes, g.n_edges) == (4, 6)
    assert g.indptr.tolist() == [0, 3, 4, 5, 6]
    # node 0 sorted by (relation, target): (0,1) (2,1) (2,2)
    assert g.indices.tolist() == [1, 1, 2, 2, 0, 0]
    assert g.relations.tolist() == [0, 2, 2, 2, 1, 5]
    assert np.allclose(g.weights, [0.3, 0.2, 0.1, 0.4, 0.5, 0.6])
    assert np.allclose(g.base_weights, g.weights * 0.5)
    assert g.edge_order.tolist() == [2, 1, 0, 3, 4, 5]
    for i in range(6):
        p = g.edge_order[i]
        assert g.indices[p] == dst[i] and g.relations[p] == rel[i] and g.weights[p] == w[i]
    # reverse: node 0 <- 2 (rel 1), 3 (rel 5); node 1 <- 0 (rel 0), 0 (rel 2); node 2 <- 0 (rel 2), 1 (rel 2)
    assert g.rev_indptr.tolist() == [0, 2, 4, 6, 6]
    assert g.rev_indices.tolist() == [2, 3, 0, 0, 0, 1]
    assert g.rev_edge.tolist() == [4, 5, 0, 1, 2, 3]


def test_arrays_share_memory_and_are_read_only():
    g, _ = tiny()
    assert np.shares_memory(g.indptr, g.indptr)
    assert np.shares_memory(g.weights, g.weights)
    for name in ("indptr", "indices", "base_weights", "relations", "rev_indptr", "rev_indices", "rev_edge"):
        a = getattr(g, name)
        assert np.shares_memory(a, getattr(g, name)), name
        assert not a.flags.writeable, name
    assert g.weights.flags.writeable
    g.weights[0] = 0.9
    assert g.weights[0] == np.float32(0.9)
    assert g.find_edge(0, 1) == 0  # strongest now (0.9)
    assert g.nbytes >= sum(getattr(g, n).nbytes for n in (
        "indptr", "indices", "weights", "base_weights", "relations", "rev_indptr", "rev_indices", "rev_edge",
        "edge_order"))


def test_from_arrays_round_trip_without_copies():
    g, _ = tiny()
    arrays = [np.array(getattr(g, n)) for n in (
        "indptr", "indices", "weights", "base_weights", "relations", "rev_indptr", "rev_indices", "rev_edge")]
    h = CSRGraph.from_arrays(4, *arrays)
    assert np.shares_memory(h.weights, arrays[2])
    assert np.shares_memory(h.indices, arrays[1])
    for n, a in zip(("indptr", "indices", "weights", "base_weights", "relations", "rev_indptr", "rev_indices",
                     "rev_edge"), arrays):
        assert np.array_equal(getattr(h, n), a), n
    assert h.edge_order.tolist() == list(range(6))


def test_queries():
    g, _ = tiny()
    assert g.find_edge(0, 1, 0) == 0
    assert g.find_edge(0, 1, 2) == 1
    assert g.find_edge(0, 1, 5) == -1
    assert g.find_edge(0, 1) == 0          # 0.3 beats 0.2
    assert g.find_edge(1, 0) == -1
    assert g.out_degree().tolist() == [3, 1, 1, 1]
    assert g.out_degree(1 << 2).tolist() == [2, 1, 0, 0]
    assert g.in_degree().tolist() == [2, 2, 2, 0]
    assert g.in_degree((1 << 1) | (1 << 0)).tolist() == [1, 1, 0, 0]
    assert g.edges_between(0, 2).tolist() == [2, 4]
    assert g.edges_between(2, 0).tolist() == [2, 4]
    assert g.edges_between(1, 3).tolist() == []
    assert g.edges_between(0, 2).dtype == np.int64


def test_empty_graphs():
    e = np.empty(0, I32)
    g = CSRGraph.from_edges(3, e, e, np.empty(0, F32), np.empty(0, F32), np.empty(0, U8))
    assert g.n_edges == 0 and g.indptr.tolist() == [0, 0, 0, 0]
    assert g.out_degree().tolist() == [0, 0, 0]
    g0 = CSRGraph.from_edges(0, e, e, np.empty(0, F32), np.empty(0, F32), np.empty(0, U8))
    assert g0.n_nodes == 0 and g0.in_degree().shape == (0,)


@SETTINGS
@given(graphs(), masks)
def test_invariants(g, mask):
    n, e = g.n_nodes, g.n_edges
    src = np.repeat(np.arange(n), np.diff(g.indptr))
    # §16.1: endpoints exist, no self loops, (src, dst, rel) unique
    assert np.all((g.indices >= 0) & (g.indices < n)) and not np.any(src == g.indices)
    assert len({(a, b, c) for a, b, c in zip(src, g.indices, g.relations)}) == e
    # rows sorted by (relation, target)
    for u in range(n):
        lo, hi = g.indptr[u], g.indptr[u + 1]
        keys = list(zip(g.relations[lo:hi], g.indices[lo:hi]))
        assert keys == sorted(keys)
    # §16.2: rev_edge is a bijection onto [0, E) and indices[rev_edge[k]] owns reverse slot k
    assert sorted(g.rev_edge.tolist()) == list(range(e))
    owner = np.repeat(np.arange(n), np.diff(g.rev_indptr))
    assert np.array_equal(g.indices[g.rev_edge], owner)
    assert np.array_equal(src[g.rev_edge], g.rev_indices)
    for u in range(n):
        lo, hi = g.rev_indptr[u], g.rev_indptr[u + 1]
        keys = list(zip(g.relations[g.rev_edge[lo:hi]], g.rev_indices[lo:hi]))
        assert keys == sorted(keys)
    # masked degrees (also through the per-mask cache)
    ok = ((mask >> g.relations.astype(np.int64)) & 1).astype(bool)
    for _ in range(2):
        assert np.array_equal(g.out_degree(mask), np.bincount(src[ok], minlength=n))
        assert np.array_equal(g.in_degree(mask), np.bincount(g.indices[ok], minlength=n))
    out_deg, in_deg = g.masked_degrees(mask)
    assert not out_deg.flags.writeable and np.array_equal(in_deg, g.in_degree(mask))


# ------------------------------------------------------------------------------------------ validation

def good():
    return [5, *random_edges(5, 12, 1)]


@pytest.mark.parametrize(
    "index, value, message",
    [
        (1, np.zeros(3, np.int64), "src must have dtype int32"),
        (2, [0, 1], "dst must be a numpy.ndarray"),
        (3, np.zeros(2, F32), "weights must have length"),
        (4, np.zeros(3, np.float64), "base_weights must have dtype float32"),
        (5, np.zeros((3, 1), U8), "relations must have dtype|relations must be 1-dimensional"),
        (0, -1, "n_nodes must be in"),
        (0, 2.5, "n_nodes must be an integer"),
    ],
    ids=["src-dtype", "dst-list", "weights-length", "base-dtype", "relations-2d", "n-negative", "n-float"],
)
def test_from_edges_rejects_bad_arrays(index, value, message):
    args = good()
    if index > 0 and isinstance(value, np.ndarray) and value.shape[0] == 3:
        value = np.resize(value, (len(args[1]),) + value.shape[1:]).astype(value.dtype)
    args[index] = value
    with pytest.raises(ValueError, match=message):
        CSRGraph.from_edges(*args)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda a: a[1].__setitem__(0, 7), "src values must lie in"),
        (lambda a: a[2].__setitem__(0, -1), "dst values must lie in"),
        (lambda a: a[2].__setitem__(0, a[1][0]), "self loops"),
        (lambda a: a[5].__setitem__(0, 16), "relations must be codes"),
    ],
    ids=["src-range", "dst-range", "self-loop", "relation-code"],
)
def test_from_edges_rejects_bad_values(edit, message):
    args = good()
    edit(args)
    with pytest.raises(ValueError, match=message):
        CSRGraph.from_edges(*args)


def test_from_edges_rejects_duplicates_and_strides():
    src = np.array([0, 0], I32)
    dst = np.array([1, 1], I32)
    w = np.ones(2, F32)
    with pytest.raises(ValueError, match="duplicate"):
        CSRGraph.from_edges(2, src, dst, w, w, np.array([3, 3], U8))
    with pytest.raises(ValueError, match="C-contiguous"):
        CSRGraph.from_edges(3, np.array([0, 9, 1, 9], I32)[::2], np.array([1, 2], I32), w, w,
                            np.zeros(2, U8))


def test_from_arrays_rejects_inconsistent_arrays():
    g, _ = tiny()
    names = ("indptr", "indices", "weights", "base_weights", "relations", "rev_indptr", "rev_indices", "rev_edge")
    arrays = {n: np.array(getattr(g, n)) for n in names}

    def call(**over):
        a = dict(arrays, **over)
        return CSRGraph.from_arrays(4, *(a[n] for n in names))

    with pytest.raises(ValueError, match="indptr must have length 5"):
        call(indptr=arrays["indptr"][:4].copy())
    with pytest.raises(ValueError, match="indptr must start at 0 and end"):
        call(indptr=np.array([0, 3, 4, 5, 7], I64))
    with pytest.raises(ValueError, match="indptr must be non-decreasing"):
        call(indptr=np.array([0, 5, 4, 5, 6], I64))
    with pytest.raises(ValueError, match="rev_edge values must lie in"):
        call(rev_edge=np.array([4, 5, 0, 1, 2, 6], I64))
    ro = arrays["weights"].copy()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="weights must be writable"):
        call(weights=ro)
    with pytest.raises(ValueError, match="rev_indices must have dtype int32"):
        call(rev_indices=arrays["rev_indices"].astype(np.int64))
    with pytest.raises(ValueError, match="rev_edge must be a permutation"):
        call(rev_edge=np.array([4, 4, 0, 1, 2, 3], I64))
    with pytest.raises(ValueError, match="indices\\[rev_edge\\[k\\]\\] must be the node owning"):
        call(rev_edge=np.array([5, 4, 0, 1, 2, 3], I64), rev_indices=np.array([3, 2, 0, 0, 0, 1], I32),
             rev_indptr=np.array([0, 2, 4, 6, 6], I64), indices=np.array([1, 1, 2, 2, 0, 1], I32))
    with pytest.raises(ValueError, match="rev_indices\\[k\\] must be the source"):
        call(rev_indices=np.array([3, 2, 0, 0, 0, 1], I32))


def test_from_arrays_accepts_read_only_blobs():
    g, _ = tiny()
    names = ("indptr", "indices", "weights", "base_weights", "relations", "rev_indptr", "rev_indices", "rev_edge")
    blobs = {n: np.frombuffer(np.array(getattr(g, n)).tobytes(), dtype=getattr(g, n).dtype) for n in names}
    blobs["weights"] = blobs["weights"].copy()
    h = CSRGraph.from_arrays(4, *(blobs[n] for n in names))
    assert np.array_equal(h.rev_edge, g.rev_edge) and h.find_edge(0, 2, 2) == 2


def test_query_arguments_are_checked():
    g, _ = tiny()
    with pytest.raises(ValueError, match="u must be a node index"):
        g.find_edge(4, 0)
    with pytest.raises(ValueError, match="relation must be"):
        g.find_edge(0, 1, 16)
    with pytest.raises(ValueError, match="relation_mask must fit"):
        g.out_degree(1 << 33)
    with pytest.raises(ValueError, match="v must be a node index"):
        g.edges_between(0, -1)
    with pytest.raises(TypeError):
        CSRGraph()
