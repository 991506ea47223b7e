"""Engine helpers over the CSR: ``incident`` against a per-node loop, ``spread_sparse`` against ``spread``, and the
scratch pool under concurrent callers."""

from __future__ import annotations

import threading

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from m1nd.graph.engine import Engine

from .graphs import SETTINGS, random_edges


def _engine(n: int, m: int, seed: int) -> Engine:
    return Engine.from_edges(n, *random_edges(n, m, seed))


@SETTINGS
@given(st.integers(1, 40), st.integers(0, 160), st.integers(0, 2**31), st.data())
def test_incident_matches_a_loop_over_out_and_in_edges(n, m, seed, data) -> None:
    eng = _engine(n, m, seed)
    nodes = data.draw(st.lists(st.integers(0, n - 1), max_size=8))  # repeats allowed
    mask = data.draw(st.sampled_from([0xFFFFFFFF, 0b1011, 1 << 3]))
    own, nbr, pos, fwd = eng.incident(np.asarray(nodes, np.int64), mask)
    want = []
    for k, u in enumerate(nodes):  # forward edges of every owner first, then the reverse ones
        p, t = eng.out_edges(u)
        want += [(k, int(v), int(q), True) for q, v in zip(p.tolist(), t.tolist())]
    for k, u in enumerate(nodes):
        p, s = eng.in_edges(u)
        want += [(k, int(v), int(q), False) for q, v in zip(p.tolist(), s.tolist())]
    rel = eng.csr.relations
    want = [w for w in want if (mask >> int(rel[w[2]])) & 1]
    got = list(zip(own.tolist(), nbr.tolist(), pos.tolist(), fwd.tolist()))
    assert got == want


def test_spread_sparse_equals_spread_and_the_pool_survives_threads() -> None:
    eng = _engine(3000, 15000, 7)
    rng = np.random.default_rng(1)
    cases = [(rng.choice(3000, 8, replace=False).astype(np.int32), rng.uniform(0.3, 1, 8).astype(np.float32))
             for _ in range(6)]
    want = [eng.spread(s, a, mode="both") for s, a in cases]
    errors: list[str] = []

    def work(k: int) -> None:
        for _ in range(30):
            for (s, a), (act, hops) in zip(cases, want):
                nodes, vals, hs = eng.spread_sparse(s, a, mode="both")
                nz = np.flatnonzero(act)
                if not (np.array_equal(nodes, nz) and np.array_equal(vals, act[nz]) and np.array_equal(hs, hops[nz])):
                    errors.append(f"thread {k}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert 1 <= len(eng._scratch) <= 4  # one scratch per concurrent caller at most, all returned to the pool
