"""spread / bfs_hops / top_k: hand-made graphs with exact values, reference equality, validation."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from m1nd_core import activation

from . import reference as ref
from .graphs import SETTINGS, graphs, hand_made, masks

I32, F32, U8 = np.int32, np.float32, np.uint8


def run(g, seeds, amps=None, **kw):
    act = np.full(g.n_nodes, 7.0, F32)     # garbage: the kernel must clear it
    hops = np.full(g.n_nodes, 99, np.int16)
    seeds = np.asarray(seeds, I32)
    amps = np.ones(len(seeds), F32) if amps is None else np.asarray(amps, F32)
    n = activation.spread(g, seeds, amps, act, hops, **kw)
    return n, act, hops


CHAIN = [(0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0), (3, 4, 1.0)]


def test_chain_forward_exact():
    n, act, hops = run(hand_made(5, CHAIN), [0], mode=0, threshold=0.0, max_hops=10)
    assert n == 5
    assert np.allclose(act, [1, 0.55, 0.55**2, 0.55**3, 0.55**4], rtol=1e-7)
    assert hops.tolist() == [0, 1, 2, 3, 4]


def test_threshold_and_max_hops_cut():
    _, act, hops = run(hand_made(5, CHAIN), [0], mode=0, threshold=0.1)
    assert hops.tolist() == [0, 1, 2, 3, -1]          # 0.55**4 = 0.0915 < 0.1
    assert act[4] == 0
    _, act, hops = run(hand_made(5, CHAIN), [0], mode=0, threshold=0.0, max_hops=2)
    assert hops.tolist() == [0, 1, 2, -1, -1]


def test_direction_modes_and_rev_mult():
    g = hand_made(5, CHAIN)
    _, act, _ = run(g, [2], mode=0)
    assert act.tolist() == [0, 0, 1, np.float32(0.55), np.float32(0.3025)]
    rho = np.full(16, 0.5, F32)
    _, act, hops = run(g, [2], mode=1, rev_mult=rho)
    assert np.allclose(act, [0.275**2, 0.275, 1, 0, 0], rtol=1e-7)
    assert hops.tolist() == [2, 1, 0, -1, -1]
    _, act, _ = run(g, [2], mode=2, rev_mult=rho)
    assert np.allclose(act, [0.275**2, 0.275, 1, 0.55, 0.3025], rtol=1e-7)


def test_keeps_strongest_path_and_hops():
    # 0->3 directly weak (0.1); 0->1->2->3 strong: 0.55**3 = 0.166 > 0.055
    g = hand_made(4, [(0, 3, 0.1), (0, 1, 1.0), (1, 2, 1.0), (2, 3, 1.0)])
    _, act, hops = run(g, [0], mode=0)
    assert act[3] == np.float32(0.55**3) and hops[3] == 3


def test_node_at_max_hops_is_not_expanded():
    # strongest route to 2 takes 2 hops (max_hops=2) so 2 is never expanded: 3 is reached only from 0 directly.
    g = hand_made(4, [(0, 1, 1.0), (1, 2, 1.0), (0, 2, 0.2), (2, 3, 1.0)])
    _, act, hops = run(g, [0], mode=0, max_hops=2, threshold=0.0)
    assert hops.tolist() == [0, 1, 2, -1]


def test_hub_damping_out_and_in():
    star = [(0, i, 1.0) for i in range(1, 65)]
    g = hand_made(65, star)
    _, act, _ = run(g, [0], mode=0)
    assert np.allclose(act[1:], 0.55 * 0.5)          # sqrt(16 / 64)
    _, act, _ = run(g, [0], mode=0, hub_ref=0.0)
    assert np.allclose(act[1:], 0.55)
    _, act, _ = run(g, [0], mode=0, hub_ref=100.0)   # min(1, ...)
    assert np.allclose(act[1:], 0.55)
    g = hand_made(65, [(i, 0, 1.0) for i in range(1, 65)])
    _, act, _ = run(g, [0], mode=1)
    assert np.allclose(act[1:], 0.55 * 0.5)
    # the hub degree counts only relations in the mask
    g = hand_made(65, star, rel=[1] + [2] * 63)
    _, act, _ = run(g, [0], mode=0, relation_mask=1 << 1)
    assert act[1] == np.float32(0.55) and np.all(act[2:] == 0)


def test_relation_mask_and_fwd_mult():
    g = hand_made(3, [(0, 1, 1.0), (0, 2, 1.0)], rel=[1, 2])
    _, act, _ = run(g, [0], relation_mask=1 << 2)
    assert act.tolist() == [1, 0, np.float32(0.55)]
    mult = np.ones(16, F32)
    mult[1] = 0.5
    _, act, _ = run(g, [0], fwd_mult=mult)
    assert act.tolist() == [1, np.float32(0.275), np.float32(0.55)]


def test_seeds_clamped_duplicates_max_and_nonpositive_ignored():
    g = hand_made(5, CHAIN)
    n, act, hops = run(g, [1, 1, 3, 4], [0.3, 2.0, 0.5, 0.0], mode=0)
    assert act[1] == 1.0 and act[3] == 0.5
    assert act[4] == np.float32(0.5 * 0.55)       # the 0.0 seed is ignored, 4 is reached from 3
    assert hops[4] == 1 and hops[0] == -1
    assert n == 4
    n, act, hops = run(g, [], [])
    assert n == 0 and not act.any() and (hops == -1).all()


@SETTINGS
@given(graphs(), masks, st.integers(0, 2), st.integers(0, 6), st.sampled_from([0.0, 0.001, 0.04, 0.2]),
       st.sampled_from([0.0, 2.0, 16.0]), st.integers(0, 2**31), st.booleans())
def test_spread_matches_reference(g, mask, mode, max_hops, threshold, hub_ref, seed, tables):
    rng = np.random.default_rng(seed)
    s = int(rng.integers(0, min(g.n_nodes, 6) + 1))
    seeds = rng.integers(0, g.n_nodes, s).astype(I32)
    amps = rng.uniform(-0.2, 1.3, s).astype(F32)
    fwd = rng.uniform(0, 1, 16).astype(F32) if tables else None
    rev = rng.uniform(0, 1, 16).astype(F32) if tables else None
    kw = dict(decay=0.7, threshold=threshold, max_hops=max_hops, mode=mode, hub_ref=hub_ref)
    n, act, hops = run(g, seeds, amps, relation_mask=mask, fwd_mult=fwd, rev_mult=rev, **kw)
    want_act, want_hops = ref.spread(g.n_nodes, ref.edge_list(g), seeds.tolist(), amps.tolist(), mask=mask,
                                     fwd_mult=fwd, rev_mult=rev, **kw)
    assert np.array_equal(act, want_act)
    assert np.array_equal(hops, want_hops)
    assert n == int((act > 0).sum())
    assert np.all(act >= 0) and np.all(act <= 1)
    assert np.all((act > 0) == (hops >= 0))
    assert hops.max(initial=-1) <= max_hops
    # the sparse form over a scratch shared by every example of this size: equal to the dense non-zeros, and the
    # scratch is back at rest afterwards (a second run and a dense run through it agree)
    sc = _scratch(g.n_nodes)
    for _ in range(2):
        nodes, vals, hs = activation.spread_sparse(g, seeds, amps, sc, relation_mask=mask, fwd_mult=fwd,
                                                   rev_mult=rev, **kw)
        nz = np.flatnonzero(want_act)
        assert np.array_equal(nodes, nz) and nodes.dtype == I32
        assert np.array_equal(vals, want_act[nz]) and np.array_equal(hs, want_hops[nz])
    n2, act2, hops2 = run(g, seeds, amps, relation_mask=mask, fwd_mult=fwd, rev_mult=rev, scratch=sc, **kw)
    assert n2 == n and np.array_equal(act2, want_act) and np.array_equal(hops2, want_hops)


_SCRATCH: dict[int, activation.SpreadScratch] = {}


def _scratch(n: int) -> activation.SpreadScratch:
    if n not in _SCRATCH:
        _SCRATCH[n] = activation.SpreadScratch(n)
    return _SCRATCH[n]


def test_spread_sparse_scratch_checks_and_recovers():
    g = hand_made(5, CHAIN)
    sc = activation.SpreadScratch(5)
    seeds, amps = np.array([0], I32), np.ones(1, F32)
    with pytest.raises(ValueError, match="scratch is sized for 4 nodes, the graph has 5"):
        activation.spread_sparse(g, seeds, amps, activation.SpreadScratch(4))
    with pytest.raises(ValueError, match="seeds must be node indices"):
        activation.spread_sparse(g, np.array([9], I32), amps, sc)
    with pytest.raises(TypeError):
        activation.spread_sparse(g, seeds, amps, None)
    with pytest.raises(ValueError, match="n must be >= 0"):
        activation.SpreadScratch(-1)
    nodes, vals, hops = activation.spread_sparse(g, seeds, amps, sc, mode=0, threshold=0.0, max_hops=10)
    assert nodes.tolist() == [0, 1, 2, 3, 4] and hops.tolist() == [0, 1, 2, 3, 4]
    assert np.allclose(vals, [0.55 ** k for k in range(5)])
    empty = activation.spread_sparse(g, np.zeros(0, I32), np.zeros(0, F32), sc)
    assert all(len(a) == 0 for a in empty)
    assert activation.spread_sparse(g, seeds, amps, sc, mode=0, threshold=0.0, max_hops=10)[0].tolist() == \
        [0, 1, 2, 3, 4]


@SETTINGS
@given(graphs(), masks, st.integers(0, 2), st.integers(0, 6), st.data())
def test_bfs_matches_reference(g, mask, mode, max_hops, data):
    src = data.draw(st.integers(0, g.n_nodes - 1))
    hops = np.empty(g.n_nodes, np.int16)
    n = activation.bfs_hops(g, src, hops, max_hops=max_hops, mode=mode, relation_mask=mask)
    want = ref.bfs_hops(g.n_nodes, ref.edge_list(g), src, max_hops=max_hops, mode=mode, mask=mask)
    assert np.array_equal(hops, want)
    assert n == int((hops >= 0).sum())


def test_top_k_ties_and_threshold():
    v = np.array([0.5, 0.9, 0.5, 0.0, 0.5, -1.0, np.nan, 0.9], F32)
    assert activation.top_k(v, 3).tolist() == [1, 7, 0]
    assert activation.top_k(v, 4).tolist() == [1, 7, 0, 2]
    assert activation.top_k(v, 10).tolist() == [1, 7, 0, 2, 4]
    assert activation.top_k(v, 10, 0.6).tolist() == [1, 7]
    assert activation.top_k(v, 0).tolist() == []
    assert activation.top_k(v, 3).dtype == np.int32


@SETTINGS
@given(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0, -0.5]), max_size=50), st.integers(0, 60))
def test_top_k_matches_reference(values, k):
    v = np.array(values, F32)
    assert activation.top_k(v, k).tolist() == ref.top_k(v, k)


# ------------------------------------------------------------------------------------------ validation

def test_spread_validation():
    g = hand_made(5, CHAIN)
    act, hops = np.zeros(5, F32), np.zeros(5, np.int16)
    seeds, amps = np.array([0], I32), np.ones(1, F32)
    cases = [
        (dict(seeds=np.array([0], np.int64)), "seeds must have dtype int32"),
        (dict(amplitudes=np.ones(2, F32)), "amplitudes must have length 1"),
        (dict(out_act=np.zeros(4, F32)), "out_act must have length 5"),
        (dict(out_act=np.zeros(5, np.float64)), "out_act must have dtype float32"),
        (dict(out_hops=np.zeros(5, np.int32)), "out_hops must have dtype int16"),
        (dict(seeds=np.array([5], I32)), r"seeds must be node indices in \[0, 5\)"),
        (dict(amplitudes=np.array([np.nan], F32)), "amplitudes must be finite"),
        (dict(mode=3), "mode must be 0"),
        (dict(max_hops=-1), "max_hops must be in"),
        (dict(decay=-0.1), "decay must be"),
        (dict(threshold=float("nan")), "threshold must be"),
        (dict(hub_ref=-1.0), "hub_ref must be"),
        (dict(relation_mask=-1), "relation_mask must fit"),
        (dict(fwd_mult=np.ones(12, F32)), "fwd_mult must be a per-relation table of length 16"),
        (dict(rev_mult=np.full(16, -1.0, F32)), "rev_mult must contain finite non-negative"),
    ]
    for over, msg in cases:
        args = dict(seeds=seeds, amplitudes=amps, out_act=act, out_hops=hops)
        args.update(over)
        pos = [args.pop(k) for k in ("seeds", "amplitudes", "out_act", "out_hops")]
        with pytest.raises(ValueError, match=msg):
            activation.spread(g, *pos, **args)
    ro = np.zeros(5, F32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out_act must be writable"):
        activation.spread(g, seeds, amps, ro, hops)
    with pytest.raises(TypeError):
        activation.spread(None, seeds, amps, act, hops)


def test_bfs_and_top_k_validation():
    g = hand_made(5, CHAIN)
    with pytest.raises(ValueError, match="source must be a node index"):
        activation.bfs_hops(g, 9, np.zeros(5, np.int16), max_hops=2)
    with pytest.raises(ValueError, match="out_hops must have length 5"):
        activation.bfs_hops(g, 0, np.zeros(4, np.int16), max_hops=2)
    with pytest.raises(ValueError, match="values must have dtype float32"):
        activation.top_k(np.zeros(3), 1)
    with pytest.raises(ValueError, match="k must be >= 0"):
        activation.top_k(np.zeros(3, F32), -1)
