"""hebbian.apply / relax: exact values, bounds, duplicates, non-finite handling, validation."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from m1nd_core import hebbian

from . import reference as ref
from .graphs import SETTINGS

F32, I64, I8 = np.float32, np.int64, np.int8


def test_ltp_ltd_exact():
    w = np.array([0.5, 0.5, 1.0, 0.05], F32)
    n = hebbian.apply(w, np.array([0, 1, 2, 3], I64), np.array([1, -1, 1, -1], I8), 0.5)
    assert w.tolist() == [np.float32(0.75), np.float32(0.275), 1.0, np.float32(0.05)]
    assert n == 2                                     # already at the bounds: unchanged


def test_duplicates_first_occurrence_and_sign_zero():
    w = np.array([0.5, 0.5], F32)
    n = hebbian.apply(w, np.array([0, 0, 1, 1], I64), np.array([-1, 1, 0, 1], I8), 0.2)
    assert w[0] == np.float32(0.5 - 0.2 * 0.45)       # first occurrence (LTD) wins, second ignored
    assert w[1] == np.float32(0.5 + 0.2 * 0.5)        # sign 0 skipped, the later +1 applies
    assert n == 2


def test_non_finite_left_unchanged_and_custom_bounds():
    w = np.array([np.nan, np.inf, 0.5], F32)
    n = hebbian.apply(w, np.array([0, 1, 2], I64), np.array([1, -1, 1], I8), 1.0, w_min=0.1, w_max=0.8)
    assert np.isnan(w[0]) and np.isinf(w[1]) and w[2] == np.float32(0.8)
    assert n == 1
    w = np.array([0.01, 3.0], F32)                    # out-of-range weights are clamped back in
    hebbian.apply(w, np.array([0, 1], I64), np.array([1, -1], I8), 0.0)
    assert w.tolist() == [np.float32(0.05), 1.0]


def test_empty_and_rate_zero():
    w = np.array([0.3], F32)
    assert hebbian.apply(w, np.empty(0, I64), np.empty(0, I8), 0.5) == 0
    assert hebbian.apply(w, np.array([0], I64), np.array([1], I8), 0.0) == 0
    assert w[0] == np.float32(0.3)


@SETTINGS
@given(st.integers(1, 200), st.integers(0, 300), st.floats(0, 1), st.integers(0, 2**31),
       st.sampled_from([(0.05, 1.0), (0.2, 0.6), (0.0, 1.0)]))
def test_apply_matches_reference_and_stays_in_bounds(e, k, rate, seed, bounds):
    w_min, w_max = bounds
    rng = np.random.default_rng(seed)
    w = rng.uniform(w_min, w_max, e).astype(F32)
    edges = rng.integers(0, e, k).astype(I64)
    signs = rng.integers(-1, 2, k).astype(I8)
    want, n_want = ref.apply(w, edges, signs, rate, w_min=w_min, w_max=w_max)
    got = w.copy()
    n = hebbian.apply(got, edges, signs, rate, w_min=w_min, w_max=w_max)
    assert np.array_equal(got, want) and n == n_want
    assert np.all(got >= F32(w_min)) and np.all(got <= F32(w_max))
    first = {}
    for i, sgn in zip(edges.tolist(), signs.tolist()):
        if sgn:
            first.setdefault(i, sgn)
    for i, sgn in first.items():                      # LTP never weakens, LTD never strengthens
        assert (got[i] >= w[i]) if sgn > 0 else (got[i] <= w[i])


@SETTINGS
@given(st.integers(1, 100), st.floats(0.1, 100), st.integers(0, 2**31))
def test_relax_matches_reference(e, half_life, seed):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.05, 1, e).astype(F32)
    w0 = rng.uniform(0.05, 1, e).astype(F32)
    age = rng.uniform(-5, 200, e).astype(F32)
    want = ref.relax(w, w0, age, half_life)
    got = w.copy()
    assert hebbian.relax(got, w0, age, half_life) is None
    assert np.array_equal(got, want)
    lo, hi = np.minimum(w, w0), np.maximum(w, w0)
    assert np.all(got >= lo) and np.all(got <= hi)


def test_relax_exact_half_life():
    w = np.array([1.0, 0.2, 0.5], F32)
    w0 = np.array([0.5, 0.6, 0.5], F32)
    hebbian.relax(w, w0, np.array([10, 20, 3], F32), 10.0)
    assert np.allclose(w, [0.75, 0.5, 0.5])
    w = np.array([0.9], F32)
    hebbian.relax(w, np.array([0.5], F32), np.array([np.nan], F32), 1.0)   # NaN age: skipped
    assert w[0] == np.float32(0.9)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(weights=np.zeros(3)), "weights must have dtype float32"),
        (dict(edges=np.zeros(2, np.int32)), "edges must have dtype int64"),
        (dict(signs=np.zeros(3, I8)), "signs must have length 2"),
        (dict(edges=np.array([0, 3], I64)), r"edges must be positions in \[0, 3\)"),
        (dict(signs=np.array([2, 0], I8)), "signs must be -1"),
        (dict(rate=1.5), r"rate must be in \[0, 1\]"),
        (dict(rate=float("nan")), r"rate must be in \[0, 1\]"),
        (dict(w_min=0.5, w_max=0.5), "w_min < w_max"),
    ],
    ids=["weights-dtype", "edges-dtype", "signs-length", "edge-range", "sign-value", "rate-high", "rate-nan",
         "bounds"],
)
def test_apply_validation(kwargs, message):
    args = dict(weights=np.ones(3, F32), edges=np.array([0, 1], I64), signs=np.array([1, -1], I8), rate=0.1)
    args.update(kwargs)
    extra = {k: args.pop(k) for k in ("w_min", "w_max") if k in args}
    with pytest.raises(ValueError, match=message):
        hebbian.apply(args["weights"], args["edges"], args["signs"], args["rate"], **extra)


def test_apply_rejects_read_only_and_relax_validation():
    ro = np.ones(2, F32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="weights must be writable"):
        hebbian.apply(ro, np.array([0], I64), np.array([1], I8), 0.1)
    w = np.ones(2, F32)
    with pytest.raises(ValueError, match="half_life_days must be"):
        hebbian.relax(w, w.copy(), np.zeros(2, F32), 0.0)
    with pytest.raises(ValueError, match="age_days must have length 2"):
        hebbian.relax(w, w.copy(), np.zeros(3, F32), 1.0)
