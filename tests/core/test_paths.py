"""k_paths / chains: hand-made graphs, reference enumeration, path validity properties, validation."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from m1nd_core import paths

from . import reference as ref
from .graphs import SETTINGS, graphs, hand_made, masks

I32, F32, U8 = np.int32, np.float32, np.uint8


def key(p):
    nodes, edges, dirs, _ = p
    return tuple(nodes.tolist()), tuple(edges.tolist()), tuple(dirs.tolist())


def check_path(g, p, source, target=None, mask=0xFFFFFFFF, factor=None):
    """Every step is a real edge in the stated direction; the path is simple; strength is the product."""
    nodes, edges, dirs, strength = p
    assert nodes.dtype == np.int32 and edges.dtype == np.int64 and dirs.dtype == np.int8
    assert len(nodes) == len(edges) + 1 == len(dirs) + 1
    assert nodes[0] == source and (target is None or nodes[-1] == target)
    assert len(set(nodes.tolist())) == len(nodes)
    src = np.repeat(np.arange(g.n_nodes), np.diff(g.indptr))
    s = 1.0
    for i, (e, d) in enumerate(zip(edges.tolist(), dirs.tolist())):
        a, b = (src[e], g.indices[e]) if d == 1 else (g.indices[e], src[e])
        assert d in (1, -1) and (a, b) == (nodes[i], nodes[i + 1])
        assert (mask >> int(g.relations[e])) & 1
        s = s * (float(g.weights[e]) if factor is None else factor(e, d))
    assert strength == s


#        0.9      0.9
#    0 ------> 1 ------> 3          strongest: 0-1-3 (0.81)
#    |                   |          then 0-2-3 via reverse edge 3->2 (0.5*0.8 = 0.4)
#    +--0.5--> 2 <--0.8--+          then 0-1-2-3 (0.9*0.3*0.8), 0-2-1-3 (0.5*0.3*0.9)
#              ^--0.3-- 1
DIAMOND = [(0, 1, 0.9), (1, 3, 0.9), (0, 2, 0.5), (3, 2, 0.8), (1, 2, 0.3)]


def test_k_paths_diamond_exact():
    g = hand_made(4, DIAMOND)
    res = paths.k_paths(g, 0, 3)
    got = [(p[0].tolist(), p[2].tolist(), round(p[3], 6)) for p in res["paths"]]
    assert got == [
        ([0, 1, 3], [1, 1], 0.81),
        ([0, 2, 3], [1, -1], 0.4),
        ([0, 1, 2, 3], [1, 1, -1], 0.216),
        ([0, 2, 1, 3], [1, -1, 1], 0.135),
    ]
    assert res["total_found"] == 4 and res["shortest_hops"] == 2 and res["budget_exhausted"] is False
    for p in res["paths"]:
        check_path(g, p, 0, 3)
    res = paths.k_paths(g, 0, 3, max_paths=1, max_hops=2)
    assert len(res["paths"]) == 1 and res["total_found"] == 2
    res = paths.k_paths(g, 0, 3, min_strength=0.3)
    assert res["total_found"] == 2


def test_k_paths_mask_unreachable_and_budget():
    g = hand_made(5, DIAMOND, rel=[0, 1, 0, 0, 0])                  # node 4 isolated; 1->3 has relation 1
    res = paths.k_paths(g, 0, 3, relation_mask=1 << 0)
    assert [p[0].tolist() for p in res["paths"]] == [[0, 2, 3], [0, 1, 2, 3]] and res["total_found"] == 2
    res = paths.k_paths(g, 0, 4)
    assert res == {"paths": [], "total_found": 0, "budget_exhausted": False, "shortest_hops": -1}
    res = paths.k_paths(g, 0, 3, budget=2)
    assert res["budget_exhausted"] is True
    res = paths.k_paths(g, 0, 3, budget=0)
    assert res["budget_exhausted"] is True and res["paths"] == [] and res["shortest_hops"] == 2


def test_parallel_edges_give_distinct_paths():
    g = hand_made(2, [(0, 1, 0.5), (1, 0, 0.7)], rel=[2, 2])
    res = paths.k_paths(g, 0, 1)
    assert [(p[2].tolist(), p[3]) for p in res["paths"]] == [([-1], float(np.float32(0.7))),
                                                            ([1], float(np.float32(0.5)))]


@SETTINGS
@given(graphs(max_nodes=30, max_degree=1.6, min_nodes=2), masks, st.integers(1, 6), st.integers(1, 8),
       st.sampled_from([0.0, 1e-4, 0.01, 0.1]), st.data())
def test_k_paths_matches_reference(g, mask, max_hops, max_paths, min_strength, data):
    s = data.draw(st.integers(0, g.n_nodes - 1))
    t = data.draw(st.integers(0, g.n_nodes - 1).filter(lambda x: x != s))
    res = paths.k_paths(g, s, t, max_hops=max_hops, max_paths=max_paths, budget=10**7, min_strength=min_strength,
                        relation_mask=mask)
    want = ref.all_paths(g.n_nodes, ref.edge_list(g), s, t, max_hops=max_hops, min_strength=min_strength,
                         mask=mask)
    assert res["budget_exhausted"] is False
    assert res["total_found"] == len(want)
    got = res["paths"]
    assert [p[3] for p in got] == [p[3] for p in want[:max_paths]]
    assert [len(p[1]) for p in got] == [len(p[1]) for p in want[:max_paths]]
    wanted = {p[:3] for p in want}
    assert len({key(p) for p in got}) == len(got)
    for p in got:
        check_path(g, p, s, t, mask)
        assert key(p) in wanted
    hops = ref.bfs_hops(g.n_nodes, ref.edge_list(g), t, max_hops=max_hops, mask=mask)
    assert res["shortest_hops"] == hops[s]


@SETTINGS
@given(graphs(max_nodes=40, max_degree=3, min_nodes=2), st.integers(0, 200), st.data())
def test_k_paths_under_budget_are_valid_and_sorted(g, budget, data):
    s = data.draw(st.integers(0, g.n_nodes - 1))
    t = data.draw(st.integers(0, g.n_nodes - 1).filter(lambda x: x != s))
    res = paths.k_paths(g, s, t, budget=budget, max_paths=5)
    strengths = [p[3] for p in res["paths"]]
    assert strengths == sorted(strengths, reverse=True)
    assert len(strengths) <= 5 and res["total_found"] >= len(strengths)
    for p in res["paths"]:
        check_path(g, p, s, t)
        assert 0 < p[3] <= 1 and len(p[1]) <= 6


#   0 -> 1 -> 2 -> 3 (strong), 1 -> 4 (weak), 5 -> 0 (reverse only)
CHAIN = [(0, 1, 0.9), (1, 2, 0.9), (2, 3, 0.9), (1, 4, 0.5), (5, 0, 0.8)]


def test_chains_forward_maximal_exact():
    g = hand_made(6, CHAIN)
    got = paths.chains(g, 0, mode=0, min_strength=0.1)
    assert [(c[0].tolist(), round(c[3], 6)) for c in got] == [([0, 1, 2, 3], 0.729), ([0, 1, 4], 0.45)]
    for c in got:
        check_path(g, c, 0)
    got = paths.chains(g, 0, mode=0, min_strength=0.75)      # 0-1-2 (0.81) cannot extend to 3 (0.729)
    assert [c[0].tolist() for c in got] == [[0, 1, 2]]
    got = paths.chains(g, 0, mode=0, max_depth=1)
    assert [c[0].tolist() for c in got] == [[0, 1]]
    got = paths.chains(g, 0, mode=1)
    assert [(c[0].tolist(), c[2].tolist()) for c in got] == [([0, 5], [-1])]
    got = paths.chains(g, 0, mode=2, max_chains=2)
    assert [c[0].tolist() for c in got] == [[0, 5], [0, 1, 2, 3]]
    assert paths.chains(g, 3, mode=0) == []
    assert paths.chains(g, 0, max_chains=0) == []


def test_chains_multipliers_and_budget():
    g = hand_made(6, CHAIN, rel=[2, 2, 2, 5, 1])
    fwd = np.ones(16, F32)
    fwd[5] = 2.0                                                 # 1->4 becomes 0.9*0.5*2 = 0.9
    got = paths.chains(g, 0, mode=0, fwd_mult=fwd)
    assert got[0][0].tolist() == [0, 1, 4] and got[0][3] == pytest.approx(0.9 * 0.5 * 2.0)
    rev = np.zeros(16, F32)
    assert paths.chains(g, 0, mode=1, rev_mult=rev) == []
    # budget 2 pops: root and 0-1 are expanded; queued 0-1-2 and 0-1-4 are reported (never expanded)
    got = paths.chains(g, 0, mode=0, budget=2)
    assert [c[0].tolist() for c in got] == [[0, 1, 2], [0, 1, 4]]


@SETTINGS
@given(graphs(max_nodes=25, max_degree=1.6, min_nodes=1), masks, st.integers(0, 2), st.integers(1, 5),
       st.integers(1, 12), st.sampled_from([0.0, 0.05, 0.1, 0.3]), st.booleans(), st.data())
def test_chains_match_reference(g, mask, mode, max_depth, max_chains, min_strength, tables, data):
    s = data.draw(st.integers(0, g.n_nodes - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    fwd = rng.uniform(0, 1, 16).astype(F32) if tables else None
    rev = rng.uniform(0, 1, 16).astype(F32) if tables else None
    kw = dict(mode=mode, max_depth=max_depth, min_strength=min_strength, fwd_mult=fwd, rev_mult=rev)
    got = paths.chains(g, s, budget=10**7, max_chains=max_chains, relation_mask=mask, **kw)
    want = ref.maximal_chains(g.n_nodes, ref.edge_list(g), s, mask=mask, **kw)
    assert [c[3] for c in got] == [c[3] for c in want[:max_chains]]
    wanted = {c[:3] for c in want}
    ftab = [1.0] * 16 if fwd is None else fwd.astype(float).tolist()
    rtab = [1.0] * 16 if rev is None else rev.astype(float).tolist()
    for c in got:
        assert key(c) in wanted and len(c[1]) <= max_depth
        check_path(g, c, s, mask=mask,
                   factor=lambda e, d: float(g.weights[e]) * (ftab if d == 1 else rtab)[g.relations[e]])
        assert (mode != 0 or all(c[2] == 1)) and (mode != 1 or all(c[2] == -1))
    # no returned chain is a prefix of another returned chain
    keys = [key(c)[0] for c in got]
    for a in keys:
        for b in keys:
            assert a == b or b[: len(a)] != a


def test_validation():
    g = hand_made(4, DIAMOND)
    with pytest.raises(ValueError, match="source and target must differ"):
        paths.k_paths(g, 1, 1)
    with pytest.raises(ValueError, match="target must be a node index"):
        paths.k_paths(g, 0, 4)
    with pytest.raises(ValueError, match="max_hops must be in"):
        paths.k_paths(g, 0, 3, max_hops=0)
    with pytest.raises(ValueError, match="budget must be >= 0"):
        paths.k_paths(g, 0, 3, budget=-1)
    with pytest.raises(ValueError, match="min_strength must be"):
        paths.k_paths(g, 0, 3, min_strength=float("nan"))
    with pytest.raises(ValueError, match="mode must be"):
        paths.chains(g, 0, mode=5)
    with pytest.raises(ValueError, match="fwd_mult must be a per-relation table"):
        paths.chains(g, 0, fwd_mult=[1.0, 2.0])
    with pytest.raises(ValueError, match="source must be a node index"):
        paths.chains(g, -1)
