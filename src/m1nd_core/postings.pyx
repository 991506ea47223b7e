"""Scatter-accumulation over posting lists (the inner loop of the lexical and trigram indexes).

A posting list set is ``flat`` (int32 values in ``[0, n)``) grouped by key through ``offsets`` (int64, key k owns
``flat[offsets[k]:offsets[k+1]]``), with optional per-posting weights. ``accumulate`` sums, for the given keys, one
term per posting into its value: ``w[p]·kw[k]`` (each factor 1 when its array is absent), the product rounded to
float32 first and summed in float64 in key order then posting order — exactly what ``np.bincount`` over the
concatenated postings computes, so a numpy reference reproduces it bit for bit. It also counts postings per value.

Only the touched values cost anything: the float64 sums and int32 counts live in a reusable
:class:`AccumulatorScratch` that is back at rest (all zero) after every call, instead of ``np.bincount`` allocating,
clearing and scanning n-sized arrays per query.
"""

import numpy as np

from libc.stdlib cimport malloc, calloc, free
from libc.stdint cimport int32_t, int64_t

from .csr cimport check_array

cdef object _INT32 = np.dtype(np.int32)
cdef object _INT64 = np.dtype(np.int64)
cdef object _FLOAT32 = np.dtype(np.float32)


cdef class AccumulatorScratch:
    """Working memory of ``accumulate`` for values in ``[0, n)``; one per concurrent caller."""

    cdef double* sums
    cdef int32_t* counts
    cdef int32_t* touched
    cdef readonly Py_ssize_t n

    def __cinit__(self, Py_ssize_t n):
        cdef Py_ssize_t m = n if n > 0 else 1
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        self.n = n
        self.sums = <double*>calloc(<size_t>m, sizeof(double))
        self.counts = <int32_t*>calloc(<size_t>m, sizeof(int32_t))
        self.touched = <int32_t*>malloc(<size_t>m * sizeof(int32_t))
        if self.sums == NULL or self.counts == NULL or self.touched == NULL:
            raise MemoryError("AccumulatorScratch: out of memory")

    def __dealloc__(self):
        free(self.sums)
        free(self.counts)
        free(self.touched)


cdef Py_ssize_t _accumulate(const int32_t* flat, const int64_t* offsets, const float* w, const int64_t* keys,
                            const float* kw, Py_ssize_t n_keys, AccumulatorScratch sc,
                            Py_ssize_t* n_touched) noexcept nogil:
    # Returns -1 when a posting value is out of [0, n) (the scratch is still consistent: touched lists every
    # value changed so far).
    cdef Py_ssize_t i, count = 0
    cdef int64_t p, k
    cdef int32_t v
    cdef float term, f
    for i in range(n_keys):
        k = keys[i]
        f = kw[i] if kw != NULL else 1.0
        for p in range(offsets[k], offsets[k + 1]):
            v = flat[p]
            if v < 0 or v >= sc.n:
                n_touched[0] = count
                return -1
            if w != NULL:
                term = w[p] * f
            else:
                term = f
            if sc.counts[v] == 0:
                sc.touched[count] = v
                count += 1
            sc.counts[v] += 1
            sc.sums[v] += <double>term
    n_touched[0] = count
    return 0


cdef void _reset(AccumulatorScratch sc, Py_ssize_t count) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(count):
        sc.sums[sc.touched[i]] = 0.0
        sc.counts[sc.touched[i]] = 0


def accumulate(flat, offsets, keys, AccumulatorScratch scratch not None, weights=None, key_weights=None,
               min_sum=None):
    """Sum and count the postings of ``keys``: returns (values int32 ascending, sums float64, counts int32) for
    every value with at least one posting. ``weights`` (float32, one per posting) and ``key_weights`` (float32, one
    per key) are optional factors of each term. ``min_sum`` keeps only the values whose sum, rounded to float32, is
    at least ``float32(min_sum)`` (what ``sums.astype(float32) >= min_sum`` keeps), without materialising the
    others."""
    check_array(flat, "flat", _INT32, -1, False)
    check_array(offsets, "offsets", _INT64, -1, False)
    check_array(keys, "keys", _INT64, -1, False)
    cdef Py_ssize_t F = flat.shape[0], K = keys.shape[0], n_groups = offsets.shape[0] - 1, i
    if n_groups < 0:
        raise ValueError("offsets must have at least one entry")
    if weights is not None:
        check_array(weights, "weights", _FLOAT32, F, False)
    if key_weights is not None:
        check_array(key_weights, "key_weights", _FLOAT32, K, False)
    cdef const int32_t[::1] fv = flat
    cdef const int64_t[::1] ov = offsets
    cdef const int64_t[::1] kv = keys
    cdef const float[::1] wv
    cdef const float[::1] kwv
    cdef const float* wp = NULL
    cdef const float* kwp = NULL
    if weights is not None and F > 0:
        wv = weights
        wp = &wv[0]
    if key_weights is not None and K > 0:
        kwv = key_weights
        kwp = &kwv[0]
    cdef int64_t k
    for i in range(K):  # every list used must lie inside flat
        k = kv[i]
        if k < 0 or k >= n_groups:
            raise ValueError(f"keys must be in [0, {n_groups}), got {k}")
        if not (0 <= ov[k] <= ov[k + 1] <= F):
            raise ValueError(f"offsets of key {k} do not delimit a range of flat")
    cdef bint filtered = min_sum is not None
    cdef float fmin = <float>min_sum if filtered else 0.0
    cdef Py_ssize_t count = 0, rc, m
    with nogil:
        rc = _accumulate(&fv[0] if F > 0 else NULL, &ov[0], wp, &kv[0] if K > 0 else NULL, kwp, K, scratch,
                         &count)
    cdef int32_t[::1] idv
    cdef double[::1] sv
    cdef int32_t[::1] cv
    cdef int32_t u
    cdef Py_ssize_t j
    try:
        if rc != 0:
            raise ValueError(f"flat holds a value outside [0, {scratch.n})")
        ids = np.empty(count + 1, dtype=np.int32)  # one spare slot for the branch-free scan below
        idv = ids
        if count * 8 >= scratch.n:
            # a large share of all values (common trigrams): one sequential pass over the counts lists them in
            # order, 3-4x cheaper than sorting the touched list
            j = 0
            with nogil:
                if filtered:
                    for i in range(scratch.n):  # branch-free: hits come in no pattern
                        idv[j] = <int32_t>i
                        j += (scratch.counts[i] != 0) & (<float>scratch.sums[i] >= fmin)
                else:
                    for i in range(scratch.n):
                        idv[j] = <int32_t>i
                        j += scratch.counts[i] != 0
            m = j
        else:
            j = 0
            with nogil:
                for i in range(count):
                    u = scratch.touched[i]
                    if not filtered or <float>scratch.sums[u] >= fmin:
                        idv[j] = u
                        j += 1
            m = j
            ids = ids[:m]
            ids.sort()
            idv = ids
        ids = ids[:m]
        sums = np.empty(m, dtype=np.float64)
        counts = np.empty(m, dtype=np.int32)
        sv = sums
        cv = counts
        with nogil:
            for i in range(m):
                u = idv[i]
                sv[i] = scratch.sums[u]
                cv[i] = scratch.counts[u]
    finally:
        _reset(scratch, count)
    return ids, sums, counts
