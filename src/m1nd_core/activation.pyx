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

cdef class SpreadScratch:
    """Reusable per-node working memory of ``spread``: activation (float64), expanded flags, hops and the list of
    touched nodes. Between calls every entry is back at its rest value (0, 0, -1), so a call costs only the work on
    the region it reaches, never O(N) clearing. Not thread-safe: one scratch per concurrent caller (the engine keeps
    a pool)."""

    cdef double* act
    cdef uint8_t* done
    cdef hop_t* hops
    cdef node_t* touched
    cdef readonly Py_ssize_t n

    def __cinit__(self, Py_ssize_t n):
        cdef Py_ssize_t i, m = n if n > 0 else 1
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n}")
        self.n = n
        self.act = <double*>calloc(<size_t>m, sizeof(double))
        self.done = <uint8_t*>calloc(<size_t>m, sizeof(uint8_t))
        self.hops = <hop_t*>malloc(<size_t>m * sizeof(hop_t))
        self.touched = <node_t*>malloc(<size_t>m * sizeof(node_t))
        if self.act == NULL or self.done == NULL or self.hops == NULL or self.touched == NULL:
            raise MemoryError("SpreadScratch: out of memory")
        for i in range(m):
            self.hops[i] = -1

    def __dealloc__(self):
        free(self.act)
        free(self.done)
        free(self.hops)
        free(self.touched)


cdef int _spread(const CSRView* g, const node_t* seeds, const weight_t* amps, Py_ssize_t n_seeds,
                 SpreadScratch sc, double decay, double threshold, int max_hops, int mode,
                 mask_t mask, double hub_ref, const node_t* out_deg, const node_t* in_deg, const double* fwd,
                 const double* rev, Py_ssize_t* n_touched) noexcept nogil:
    # Leaves the result in the scratch: sc.touched[0..n_touched) lists every node with activation > 0 (in the
    # order first reached); the caller copies the values out and calls _reset.
    cdef Py_ssize_t i, count = 0
    cdef double* act = sc.act
    cdef uint8_t* done = sc.done
    cdef hop_t* hops = sc.hops
    cdef node_t* touched = sc.touched
    cdef Heap heap
    cdef HeapItem top
    cdef double a, au, hf, s
    cdef node_t u, v
    cdef edge_t e, k
    cdef rel_t r
    cdef hop_t nh
    cdef int rc = 0

    n_touched[0] = 0
    heap.size = 0
    heap.cap = 64 if n_seeds < 64 else n_seeds
    heap.items = <HeapItem*>malloc(<size_t>heap.cap * sizeof(HeapItem))
    if heap.items == NULL:
        return -1

    for i in range(n_seeds):
        a = <double>amps[i]
        if a > 1.0:
            a = 1.0
        if a <= 0.0:
            continue
        u = seeds[i]
        if a > act[u]:
            if act[u] == 0.0:
                touched[count] = u
                count += 1
            act[u] = a
            hops[u] = 0
            rc |= _heap_push(&heap, a, u)

    while heap.size > 0 and rc == 0:
        top = _heap_pop(&heap)
        u = top.node
        if done[u]:
            continue
        done[u] = 1
        if hops[u] >= max_hops:
            continue
        au = act[u]
        nh = hops[u] + 1
        if mode != 1:
            hf = _hub(hub_ref, out_deg, u)
            for e in range(g.indptr[u], g.indptr[u + 1]):
                r = g.relations[e]
                if not ((mask >> r) & 1u):
                    continue
                v = g.indices[e]
                s = au * <double>g.weights[e] * decay * fwd[r] * hf
                if s >= threshold and s > act[v]:
                    if act[v] == 0.0:
                        touched[count] = v
                        count += 1
                    act[v] = s
                    hops[v] = nh
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
                    if act[v] == 0.0:
                        touched[count] = v
                        count += 1
                    act[v] = s
                    hops[v] = nh
                    rc |= _heap_push(&heap, s, v)

    n_touched[0] = count
    free(heap.items)
    return rc


cdef void _reset(SpreadScratch sc, Py_ssize_t count) noexcept nogil:
    cdef Py_ssize_t i
    cdef node_t u
    for i in range(count):
        u = sc.touched[i]
        sc.act[u] = 0.0
        sc.done[u] = 0
        sc.hops[u] = -1


cdef int _check_common(int max_hops, int mode) except -1:
    if max_hops < 0 or max_hops > 32767:
        raise ValueError(f"max_hops must be in [0, 32767], got {max_hops}")
    if mode not in (0, 1, 2):
        raise ValueError(f"mode must be 0 (forward), 1 (reverse) or 2 (both), got {mode}")
    return 0


cdef Py_ssize_t _run(CSRGraph csr, seeds, amplitudes, SpreadScratch sc, double decay, double threshold,
                     int max_hops, int mode, relation_mask, double hub_ref, fwd_mult, rev_mult) except -1:
    """Validates the arguments, runs the kernel into ``sc`` and returns the number of touched nodes (the scratch
    still holds the result: the caller copies it out and calls _reset, also on error)."""
    cdef Py_ssize_t N = csr.v.n_nodes
    check_array(seeds, "seeds", _INT32, -1, False)
    cdef Py_ssize_t S = seeds.shape[0]
    check_array(amplitudes, "amplitudes", _FLOAT32, S, False)
    if sc.n != N:
        raise ValueError(f"scratch is sized for {sc.n} nodes, the graph has {N}")
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
    cdef const node_t* sp = &sv[0] if S > 0 else NULL
    cdef const weight_t* ap = &av[0] if S > 0 else NULL
    cdef Py_ssize_t n_touched = 0
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
        rc = _spread(&csr.v, sp, ap, S, sc, decay, threshold, max_hops, mode, mask, hub_ref, doutp, dinp,
                     fwd, rev, &n_touched)
    if rc != 0:
        _reset(sc, n_touched)
        raise MemoryError("spread: out of memory")
    return n_touched


def spread(CSRGraph csr not None, seeds, amplitudes, out_act, out_hops, *, double decay=0.55,
           double threshold=0.04, int max_hops=5, int mode=2, relation_mask=0xFFFFFFFF,
           double hub_ref=16.0, fwd_mult=None, rev_mult=None, SpreadScratch scratch=None):
    """Spreading activation from seeds; fills ``out_act`` / ``out_hops`` and returns the number of active nodes."""
    cdef Py_ssize_t N = csr.v.n_nodes, i, count
    check_array(out_act, "out_act", _FLOAT32, N, True)
    check_array(out_hops, "out_hops", _INT16, N, True)
    cdef SpreadScratch sc = scratch if scratch is not None else SpreadScratch(N)
    count = _run(csr, seeds, amplitudes, sc, decay, threshold, max_hops, mode, relation_mask, hub_ref,
                 fwd_mult, rev_mult)
    cdef weight_t[::1] oa = out_act
    cdef hop_t[::1] oh = out_hops
    cdef node_t u
    with nogil:
        for i in range(N):
            oa[i] = 0.0
            oh[i] = -1
        for i in range(count):
            u = sc.touched[i]
            oa[u] = <weight_t>sc.act[u]
            oh[u] = sc.hops[u]
        _reset(sc, count)
    return count


def spread_sparse(CSRGraph csr not None, seeds, amplitudes, SpreadScratch scratch not None, *,
                  double decay=0.55, double threshold=0.04, int max_hops=5, int mode=2,
                  relation_mask=0xFFFFFFFF, double hub_ref=16.0, fwd_mult=None, rev_mult=None):
    """``spread`` returning only the reached nodes: (nodes int32[K] ascending, activation float32[K], hops
    int16[K]). Costs the reached region, not O(N)."""
    cdef Py_ssize_t i, count
    count = _run(csr, seeds, amplitudes, scratch, decay, threshold, max_hops, mode, relation_mask, hub_ref,
                 fwd_mult, rev_mult)
    cdef node_t[::1] nv
    cdef weight_t[::1] av
    cdef hop_t[::1] hv
    cdef node_t u
    try:
        nodes = np.empty(count, dtype=np.int32)
        nv = nodes
        with nogil:
            for i in range(count):
                nv[i] = scratch.touched[i]
        nodes.sort()
        act = np.empty(count, dtype=np.float32)
        hops = np.empty(count, dtype=np.int16)
        av = act
        hv = hops
        with nogil:
            for i in range(count):
                u = nv[i]
                av[i] = <weight_t>scratch.act[u]
                hv[i] = scratch.hops[u]
    finally:
        _reset(scratch, count)
    return nodes, act, hops


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
