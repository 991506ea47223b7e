"""Spreading activation (activation.md §2), hop BFS and top-k selection.

``spread`` is a best-first propagation that keeps the strongest signal per node: a max-heap ordered by
(activation desc, node index asc) pops the strongest node not yet expanded; each node is expanded once, with its
final value, and not at all when it sits at ``max_hops``. Forward edges ``u→v`` carry
``a_u · w · decay · fwd_mult[rel] · h_out(u)``, reverse edges ``v→u`` (walked from u to v) carry
``a_u · w · rev_mult[rel] · decay · h_in(u)``; a target is updated when the signal reaches ``threshold`` and beats its
current value. The products are evaluated in float64 in exactly that order (so a float64 reference reproduces the
result bit for bit) and stored as float32. Within a node, forward edges are scanned before reverse edges.

Hub damping ``h_out(u) = min(1, sqrt(hub_ref / outdeg_mask(u)))`` (``h_in`` with the in-degree) reads the masked
degrees cached on the graph per mask (``CSRGraph.masked_degrees``), so after the first call with a mask a call costs
O(N) for clearing the outputs plus the work on the reached region.
"""

import numpy as np

from libc.stdlib cimport malloc, calloc, realloc, free
from libc.math cimport sqrt, isfinite
from libc.stdint cimport uint8_t

from ._types cimport node_t, edge_t, weight_t, rel_t, hop_t, mask_t
from .csr cimport CSRGraph, CSRView, check_array, check_mask, load_table, check_node, bfs_levels

cdef object _INT32 = np.dtype(np.int32)
cdef object _INT16 = np.dtype(np.int16)
cdef object _FLOAT32 = np.dtype(np.float32)

MODE_FORWARD = 0
MODE_REVERSE = 1
MODE_BOTH = 2


# ------------------------------------------------------------------------------------------ binary max-heap

cdef struct HeapItem:
    double key
    node_t node

cdef struct Heap:
    HeapItem* items
    Py_ssize_t size
    Py_ssize_t cap


cdef inline bint _before(const HeapItem* a, const HeapItem* b) noexcept nogil:
    # True when a pops before b: larger key first, then smaller node index.
    return a.key > b.key or (a.key == b.key and a.node < b.node)


cdef int _heap_push(Heap* h, double key, node_t node) noexcept nogil:
    cdef Py_ssize_t i, p
    cdef HeapItem* grown
    cdef HeapItem it
    if h.size == h.cap:
        grown = <HeapItem*>realloc(h.items, <size_t>(2 * h.cap) * sizeof(HeapItem))
        if grown == NULL:
            return -1
        h.items = grown
        h.cap *= 2
    it.key = key
    it.node = node
    i = h.size
    h.size += 1
    while i > 0:
        p = (i - 1) >> 1
        if not _before(&it, &h.items[p]):
            break
        h.items[i] = h.items[p]
        i = p
    h.items[i] = it
    return 0


cdef HeapItem _heap_pop(Heap* h) noexcept nogil:
    cdef HeapItem top = h.items[0]
    cdef HeapItem last
    cdef Py_ssize_t i = 0, c, n
    h.size -= 1
    n = h.size
    if n > 0:
        last = h.items[n]
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and _before(&h.items[c + 1], &h.items[c]):
                c += 1
            if not _before(&h.items[c], &last):
                break
            h.items[i] = h.items[c]
            i = c
        h.items[i] = last
    return top


cdef inline double _hub(double hub_ref, const node_t* degrees, node_t u) noexcept nogil:
    cdef double x
    cdef node_t degree
    if degrees == NULL:
        return 1.0
    degree = degrees[u]
    if hub_ref <= 0.0 or degree <= 0:
        return 1.0
    x = sqrt(hub_ref / <double>degree)
    return x if x < 1.0 else 1.0


# ------------------------------------------------------------------------------------------ spread

cdef int _spread(const CSRView* g, const node_t* seeds, const weight_t* amps, Py_ssize_t n_seeds,
                 weight_t* out_act, hop_t* out_hops, double decay, double threshold, int max_hops, int mode,
                 mask_t mask, double hub_ref, const node_t* out_deg, const node_t* in_deg, const double* fwd,
                 const double* rev, Py_ssize_t* n_active) noexcept nogil:
    cdef Py_ssize_t N = g.n_nodes, i, count = 0
    cdef double* act = NULL
    cdef uint8_t* done = NULL
    cdef Heap heap
    cdef HeapItem top
    cdef double a, au, hf, s
    cdef node_t u, v
    cdef edge_t e, k
    cdef rel_t r
    cdef hop_t nh
    cdef int rc = 0

    heap.size = 0
    heap.cap = 64 if n_seeds < 64 else n_seeds
    heap.items = <HeapItem*>malloc(<size_t>heap.cap * sizeof(HeapItem))
    act = <double*>calloc(<size_t>(N if N > 0 else 1), sizeof(double))
    done = <uint8_t*>calloc(<size_t>(N if N > 0 else 1), sizeof(uint8_t))
    if heap.items == NULL or act == NULL or done == NULL:
        free(heap.items)
        free(act)
        free(done)
        return -1

    for i in range(N):
        out_hops[i] = -1

    for i in range(n_seeds):
        a = <double>amps[i]
        if a > 1.0:
            a = 1.0
        if a <= 0.0:
            continue
        u = seeds[i]
        if a > act[u]:
            act[u] = a
            out_hops[u] = 0
            rc |= _heap_push(&heap, a, u)

    while heap.size > 0 and rc == 0:
        top = _heap_pop(&heap)
        u = top.node
        if done[u]:
            continue
        done[u] = 1
        if out_hops[u] >= max_hops:
            continue
        au = act[u]
        nh = out_hops[u] + 1
        if mode != 1:
            hf = _hub(hub_ref, out_deg, u)
            for e in range(g.indptr[u], g.indptr[u + 1]):
                r = g.relations[e]
                if not ((mask >> r) & 1u):
                    continue
                v = g.indices[e]
                s = au * <double>g.weights[e] * decay * fwd[r] * hf
                if s >= threshold and s > act[v]:
                    act[v] = s
                    out_hops[v] = nh
                    rc |= _heap_push(&heap, s, v)
        if mode != 0:
            hf = _hub(hub_ref, in_deg, u)
            for k in range(g.rev_indptr[u], g.rev_indptr[u + 1]):
                r = g.rev_relations[k]
                if not ((mask >> r) & 1u):
                    continue
                e = g.rev_edge[k]
                v = g.rev_indices[k]
                s = au * <double>g.weights[e] * rev[r] * decay * hf
                if s >= threshold and s > act[v]:
                    act[v] = s
                    out_hops[v] = nh
                    rc |= _heap_push(&heap, s, v)

    for i in range(N):
        out_act[i] = <weight_t>act[i]
        if act[i] > 0.0:
            count += 1
    n_active[0] = count
    free(heap.items)
    free(act)
    free(done)
    return rc


cdef int _check_common(int max_hops, int mode) except -1:
    if max_hops < 0 or max_hops > 32767:
        raise ValueError(f"max_hops must be in [0, 32767], got {max_hops}")
    if mode not in (0, 1, 2):
        raise ValueError(f"mode must be 0 (forward), 1 (reverse) or 2 (both), got {mode}")
    return 0


def spread(CSRGraph csr not None, seeds, amplitudes, out_act, out_hops, *, double decay=0.55,
           double threshold=0.04, int max_hops=5, int mode=2, relation_mask=0xFFFFFFFF,
           double hub_ref=16.0, fwd_mult=None, rev_mult=None):
    """Spreading activation from seeds; fills ``out_act`` / ``out_hops`` and returns the number of active nodes."""
    cdef Py_ssize_t N = csr.v.n_nodes
    check_array(seeds, "seeds", _INT32, -1, False)
    cdef Py_ssize_t S = seeds.shape[0]
    check_array(amplitudes, "amplitudes", _FLOAT32, S, False)
    check_array(out_act, "out_act", _FLOAT32, N, True)
    check_array(out_hops, "out_hops", _INT16, N, True)
    if not (isfinite(decay) and decay >= 0.0):
        raise ValueError(f"decay must be a finite number >= 0, got {decay}")
    if not (isfinite(threshold) and threshold >= 0.0):
        raise ValueError(f"threshold must be a finite number >= 0, got {threshold}")
    if not (isfinite(hub_ref) and hub_ref >= 0.0):
        raise ValueError(f"hub_ref must be a finite number >= 0 (0 disables hub damping), got {hub_ref}")
    _check_common(max_hops, mode)
    cdef mask_t mask
    check_mask(relation_mask, &mask)
    cdef double fwd[16]
    cdef double rev[16]
    load_table(fwd_mult, "fwd_mult", fwd)
    load_table(rev_mult, "rev_mult", rev)
    if S and (int(seeds.min()) < 0 or int(seeds.max()) >= N):
        raise ValueError(f"seeds must be node indices in [0, {N})")
    if S and not np.all(np.isfinite(amplitudes)):
        raise ValueError("amplitudes must be finite")

    cdef const node_t[::1] sv = seeds
    cdef const weight_t[::1] av = amplitudes
    cdef weight_t[::1] oa = out_act
    cdef hop_t[::1] oh = out_hops
    cdef const node_t* sp = &sv[0] if S > 0 else NULL
    cdef const weight_t* ap = &av[0] if S > 0 else NULL
    cdef weight_t* oap = &oa[0] if N > 0 else NULL
    cdef hop_t* ohp = &oh[0] if N > 0 else NULL
    cdef Py_ssize_t n_active = 0
    cdef int rc
    cdef const node_t[::1] dout
    cdef const node_t[::1] din
    cdef const node_t* doutp = NULL
    cdef const node_t* dinp = NULL
    degrees = None                       # held for the whole call: the cache may evict its entry meanwhile
    if hub_ref > 0.0 and N > 0:
        degrees = csr.masked_degrees(mask)
        dout = degrees[0]
        din = degrees[1]
        doutp = &dout[0]
        dinp = &din[0]
    with nogil:
        rc = _spread(&csr.v, sp, ap, S, oap, ohp, decay, threshold, max_hops, mode, mask, hub_ref, doutp, dinp,
                     fwd, rev, &n_active)
    if rc != 0:
        raise MemoryError("spread: out of memory")
    return n_active


# ------------------------------------------------------------------------------------------ BFS

def bfs_hops(CSRGraph csr not None, Py_ssize_t source, out_hops, *, int max_hops, int mode=2,
             relation_mask=0xFFFFFFFF):
    """Unweighted BFS hop distance from ``source`` (-1 unreached); returns the number of reached nodes."""
    cdef Py_ssize_t N = csr.v.n_nodes
    check_node(csr, source, "source")
    check_array(out_hops, "out_hops", _INT16, N, True)
    _check_common(max_hops, mode)
    cdef mask_t mask
    check_mask(relation_mask, &mask)
    cdef hop_t[::1] oh = out_hops
    cdef Py_ssize_t reached = 0
    cdef int rc
    with nogil:
        rc = bfs_levels(&csr.v, <node_t>source, &oh[0], max_hops, mode, mask, &reached)
    if rc != 0:
        raise MemoryError("bfs_hops: out of memory")
    return reached


# ------------------------------------------------------------------------------------------ top-k

def top_k(values, Py_ssize_t k, double min_value=0.0):
    """Indices of the ``k`` largest values strictly above ``min_value``, by value desc then index asc."""
    check_array(values, "values", _FLOAT32, -1, False)
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    cand = np.flatnonzero(values > min_value)
    if k == 0 or cand.shape[0] == 0:
        return np.empty(0, dtype=np.int32)
    vals = values[cand]
    if cand.shape[0] > k:
        kth = np.partition(vals, cand.shape[0] - k)[cand.shape[0] - k]   # k-th largest value
        keep = vals >= kth                                                 # keeps every tie of the k-th
        cand = cand[keep]
        vals = vals[keep]
    order = np.lexsort((cand, -vals))[:k]
    return cand[order].astype(np.int32)
