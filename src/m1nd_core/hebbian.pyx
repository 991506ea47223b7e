"""Bounded Hebbian plasticity on the shared weights array (learning.md §1).

LTP ``w ← w + η·(w_max − w)`` and LTD ``w ← w − η·(w − w_min)`` are soft bounds: computed in float64, clamped
into ``[w_min, w_max]`` and stored as float32; a non-finite result leaves the edge unchanged. Within one call an
edge is updated at most once (its first listed occurrence with a non-zero sign wins): the edge list is sorted by
(edge, position) with ``qsort`` so duplicates are found without touching an E-sized buffer.
"""

import numpy as np

from libc.stdlib cimport malloc, free, qsort
from libc.math cimport isfinite, pow

from libc.stdint cimport int8_t
from ._types cimport edge_t, weight_t
from .csr cimport check_array

cdef object _INT64 = np.dtype(np.int64)
cdef object _INT8 = np.dtype(np.int8)
cdef object _FLOAT32 = np.dtype(np.float32)


cdef struct Update:
    edge_t edge
    Py_ssize_t pos
    int sign


cdef int _cmp_update(const void* pa, const void* pb) noexcept nogil:
    cdef const Update* a = <const Update*>pa
    cdef const Update* b = <const Update*>pb
    if a.edge != b.edge:
        return -1 if a.edge < b.edge else 1
    if a.pos != b.pos:
        return -1 if a.pos < b.pos else 1
    return 0


cdef Py_ssize_t _apply(weight_t* w, Update* ups, Py_ssize_t n, double rate, double w_min,
                       double w_max) noexcept nogil:
    cdef Py_ssize_t i, changed = 0
    cdef edge_t last = -1
    cdef double x, old
    cdef weight_t f
    cdef weight_t f_min = <weight_t>w_min
    cdef weight_t f_max = <weight_t>w_max
    qsort(ups, <size_t>n, sizeof(Update), _cmp_update)
    for i in range(n):
        if ups[i].edge == last:
            continue                      # duplicate: the first occurrence (lowest position) already applied
        last = ups[i].edge
        old = <double>w[last]
        if ups[i].sign > 0:
            x = old + rate * (w_max - old)
        else:
            x = old - rate * (old - w_min)
        if not isfinite(x):
            continue
        if x < w_min:
            x = w_min
        elif x > w_max:
            x = w_max
        f = <weight_t>x
        if f < f_min:
            f = f_min
        elif f > f_max:
            f = f_max
        if f != w[last]:
            w[last] = f
            changed += 1
    return changed


def apply(weights, edges, signs, double rate, *, double w_min=0.05, double w_max=1.0):
    """LTP (sign +1) / LTD (sign -1) in place on ``weights[edges]``; returns the number of edges changed."""
    check_array(weights, "weights", _FLOAT32, -1, True)
    check_array(edges, "edges", _INT64, -1, False)
    cdef Py_ssize_t K = edges.shape[0]
    cdef Py_ssize_t E = weights.shape[0]
    check_array(signs, "signs", _INT8, K, False)
    if not (rate >= 0.0 and rate <= 1.0):
        raise ValueError(f"rate must be in [0, 1], got {rate}")
    if not (isfinite(w_min) and isfinite(w_max) and 0.0 <= w_min < w_max):
        raise ValueError(f"need finite bounds 0 <= w_min < w_max, got w_min={w_min}, w_max={w_max}")
    if K == 0:
        return 0
    if int(edges.min()) < 0 or int(edges.max()) >= E:
        raise ValueError(f"edges must be positions in [0, {E})")
    if int(signs.min()) < -1 or int(signs.max()) > 1:
        raise ValueError("signs must be -1 (LTD), 0 (skip) or +1 (LTP)")

    cdef weight_t[::1] wv = weights
    cdef const edge_t[::1] ev = edges
    cdef const int8_t[::1] sv = signs
    cdef Update* ups = <Update*>malloc(<size_t>K * sizeof(Update))
    if ups == NULL:
        raise MemoryError("hebbian.apply: out of memory")
    cdef Py_ssize_t i, n = 0, changed
    with nogil:
        for i in range(K):
            if sv[i] != 0:
                ups[n].edge = ev[i]
                ups[n].pos = i
                ups[n].sign = sv[i]
                n += 1
        changed = _apply(&wv[0], ups, n, rate, w_min, w_max)
    free(ups)
    return changed


def relax(weights, base_weights, age_days, double half_life_days):
    """In place ``w = w0 + (w - w0) * 2**(-age / half_life)`` (negative ages count as 0; NaN ages skip)."""
    check_array(weights, "weights", _FLOAT32, -1, True)
    cdef Py_ssize_t E = weights.shape[0]
    check_array(base_weights, "base_weights", _FLOAT32, E, False)
    check_array(age_days, "age_days", _FLOAT32, E, False)
    if not (isfinite(half_life_days) and half_life_days > 0.0):
        raise ValueError(f"half_life_days must be a finite number > 0, got {half_life_days}")
    if E == 0:
        return None
    cdef weight_t[::1] w = weights
    cdef const weight_t[::1] w0 = base_weights
    cdef const weight_t[::1] age = age_days
    cdef Py_ssize_t i
    cdef double a, x
    with nogil:
        for i in range(E):
            a = <double>age[i]
            if a != a:
                continue
            if a < 0.0:
                a = 0.0
            x = <double>w0[i] + (<double>w[i] - <double>w0[i]) * pow(2.0, -a / half_life_days)
            if isfinite(x):
                w[i] = <weight_t>x
    return None
