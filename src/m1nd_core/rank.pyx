"""PageRank prior (activation.md §6).

Power iteration over the forward edges whose relation is in the mask, transition probability proportional to the
edge's base weight (or current weight), uniform start ``1/N``, the mass of dangling nodes (no masked out-edge with
positive weight) redistributed uniformly; stops when the L1 change drops below ``tol`` or after ``max_iter``
iterations, then scales so the maximum is 1. Accumulates in float64, pushing mass along the forward CSR.
"""

import numpy as np

from libc.stdlib cimport malloc, free
from libc.math cimport fabs, isfinite

from ._types cimport node_t, edge_t, weight_t, rel_t, mask_t
from .csr cimport CSRGraph, CSRView, check_array, check_mask

cdef object _FLOAT32 = np.dtype(np.float32)


cdef int _pagerank(const CSRView* g, weight_t* out, mask_t mask, double damping, double tol, int max_iter,
                   bint use_base, int* n_iter) noexcept nogil:
    cdef Py_ssize_t N = g.n_nodes, u
    cdef const weight_t* w = g.base_weights if use_base else g.weights
    cdef double* p = <double*>malloc(<size_t>N * sizeof(double))
    cdef double* q = <double*>malloc(<size_t>N * sizeof(double))
    cdef double* wsum = <double*>malloc(<size_t>N * sizeof(double))
    cdef double* tmp
    cdef double dangling, base, c, diff, mx, x
    cdef edge_t e
    cdef int it = 0
    if p == NULL or q == NULL or wsum == NULL:
        free(p)
        free(q)
        free(wsum)
        return -1
    for u in range(N):
        p[u] = 1.0 / <double>N
        x = 0.0
        for e in range(g.indptr[u], g.indptr[u + 1]):
            if (mask >> g.relations[e]) & 1u and w[e] > 0:
                x += <double>w[e]
        wsum[u] = x
    while it < max_iter:
        dangling = 0.0
        for u in range(N):
            q[u] = 0.0
            if wsum[u] <= 0.0:
                dangling += p[u]
        for u in range(N):
            if wsum[u] <= 0.0:
                continue
            c = damping * p[u] / wsum[u]
            for e in range(g.indptr[u], g.indptr[u + 1]):
                if (mask >> g.relations[e]) & 1u and w[e] > 0:
                    q[g.indices[e]] += c * <double>w[e]
        base = (1.0 - damping) / <double>N + damping * dangling / <double>N
        diff = 0.0
        for u in range(N):
            q[u] += base
            diff += fabs(q[u] - p[u])
        tmp = p
        p = q
        q = tmp
        it += 1
        if diff < tol:
            break
    mx = 0.0
    for u in range(N):
        if p[u] > mx:
            mx = p[u]
    for u in range(N):
        out[u] = <weight_t>(p[u] / mx) if mx > 0.0 else <weight_t>0.0
    free(p)
    free(q)
    free(wsum)
    n_iter[0] = it
    return 0


def pagerank(CSRGraph csr not None, out, *, relation_mask=0xFFFFFFFF, double damping=0.85, double tol=1e-6,
             int max_iter=100, bint use_base_weights=True):
    """PageRank into ``out`` (float32[N], max = 1); returns the number of iterations run."""
    cdef Py_ssize_t N = csr.v.n_nodes
    check_array(out, "out", _FLOAT32, N, True)
    cdef mask_t mask
    check_mask(relation_mask, &mask)
    if not (damping >= 0.0 and damping <= 1.0):
        raise ValueError(f"damping must be in [0, 1], got {damping}")
    if not (isfinite(tol) and tol >= 0.0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    if max_iter < 0:
        raise ValueError(f"max_iter must be >= 0, got {max_iter}")
    if N == 0:
        return 0
    cdef weight_t[::1] ov = out
    cdef int n_iter = 0, rc
    with nogil:
        rc = _pagerank(&csr.v, &ov[0], mask, damping, tol, max_iter, use_base_weights, &n_iter)
    if rc != 0:
        raise MemoryError("pagerank: out of memory")
    return n_iter
