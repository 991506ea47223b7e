"""postings.accumulate: bit-equal to np.bincount over the concatenated postings, scratch reuse, validation."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from m1nd_core import postings

from .graphs import SETTINGS

I32, I64, F32 = np.int32, np.int64, np.float32


def reference(flat, offsets, keys, n, weights=None, key_weights=None):
    """The numpy formulation the indexes used before the kernel: concatenate, multiply in float32, bincount."""
    parts_n, parts_w = [], []
    for j, k in enumerate(keys.tolist()):
        a, b = int(offsets[k]), int(offsets[k + 1])
        w = weights[a:b] if weights is not None else np.ones(b - a, F32)
        if key_weights is not None:
            w = w * key_weights[j]
        parts_n.append(flat[a:b])
        parts_w.append(w.astype(F32))
    nodes = np.concatenate(parts_n) if parts_n else np.zeros(0, I32)
    sums = np.bincount(nodes, weights=np.concatenate(parts_w) if parts_w else None, minlength=n)
    counts = np.bincount(nodes, minlength=n)
    ids = np.flatnonzero(counts)
    return ids, sums[ids], counts[ids]


_SCRATCH: dict[int, postings.AccumulatorScratch] = {}


@SETTINGS
@given(st.integers(1, 40), st.lists(st.lists(st.integers(0, 39), max_size=12), min_size=1, max_size=15),
       st.integers(0, 2**31), st.booleans(), st.booleans())
def test_accumulate_matches_bincount(n, lists, seed, with_w, with_kw):
    rng = np.random.default_rng(seed)
    lists = [[v % n for v in x] for x in lists]
    offsets = np.zeros(len(lists) + 1, I64)
    np.cumsum([len(x) for x in lists], out=offsets[1:])
    flat = np.asarray([v for x in lists for v in x], I32)
    weights = rng.uniform(0, 1, len(flat)).astype(F32) if with_w else None
    keys = rng.integers(0, len(lists), int(rng.integers(0, 2 * len(lists) + 1))).astype(I64)  # repeats allowed
    kw = rng.uniform(0, 2, len(keys)).astype(F32) if with_kw else None
    sc = _SCRATCH.setdefault(n, postings.AccumulatorScratch(n))  # shared across examples: must stay at rest
    want_ids, want_sums, want_counts = reference(flat, offsets, keys, n, weights, kw)
    for _ in range(2):
        ids, sums, counts = postings.accumulate(flat, offsets, keys, sc, weights, kw)
        assert np.array_equal(ids, want_ids) and ids.dtype == I32
        assert np.array_equal(sums, want_sums)  # bit for bit, not approximately
        assert np.array_equal(counts, want_counts)
    # min_sum keeps what a float32 comparison of the sums keeps (a threshold taken from the sums hits ties exactly)
    for floor in [0.0, 0.7, float(want_sums[len(want_sums) // 2]) if len(want_sums) else 1.0, 1e9]:
        keep = want_sums.astype(F32) >= floor
        ids, sums, counts = postings.accumulate(flat, offsets, keys, sc, weights, kw, min_sum=floor)
        assert np.array_equal(ids, want_ids[keep]) and np.array_equal(sums, want_sums[keep])
        assert np.array_equal(counts, want_counts[keep])


def test_accumulate_validation_leaves_scratch_at_rest():
    flat = np.array([0, 1, 2, 9], I32)
    offsets = np.array([0, 2, 4], I64)
    sc = postings.AccumulatorScratch(3)
    with pytest.raises(ValueError, match="outside \\[0, 3\\)"):
        postings.accumulate(flat, offsets, np.array([0, 1], I64), sc)  # 9 is out of range, 0 and 1 were added
    ids, sums, counts = postings.accumulate(flat, offsets, np.array([0], I64), sc)
    assert ids.tolist() == [0, 1] and sums.tolist() == [1.0, 1.0] and counts.tolist() == [1, 1]
    with pytest.raises(ValueError, match=r"keys must be in \[0, 2\)"):
        postings.accumulate(flat, offsets, np.array([2], I64), sc)
    with pytest.raises(ValueError, match="do not delimit a range"):
        postings.accumulate(flat, np.array([0, 3, 2], I64), np.array([1], I64), sc)
    with pytest.raises(ValueError, match="keys must have dtype int64"):
        postings.accumulate(flat, offsets, np.array([0], I32), sc)
    with pytest.raises(ValueError, match="weights must have length 4"):
        postings.accumulate(flat, offsets, np.array([0], I64), sc, weights=np.ones(3, F32))
    with pytest.raises(ValueError, match="key_weights must have length 1"):
        postings.accumulate(flat, offsets, np.array([0], I64), sc, key_weights=np.ones(2, F32))
    with pytest.raises(ValueError, match="n must be >= 0"):
        postings.AccumulatorScratch(-2)
    empty = postings.accumulate(flat, offsets, np.zeros(0, I64), sc)
    assert all(len(a) == 0 for a in empty)
