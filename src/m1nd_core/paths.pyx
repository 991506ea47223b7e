"""Bounded best-first path search: ``k_paths`` (activation.md §11, tool ``why``) and ``chains`` (§10, ``impact``).

Both searches keep partial paths in a parent-pointer arena (one record per pushed path, grown with ``realloc``)
and a binary max-heap of arena indices ordered by (strength desc, hops asc, last node asc, arena index asc).
Strengths are products of per-edge factors ≤ 1 evaluated in float64, so paths pop in descending strength and the
first complete paths popped are the strongest. Paths are simple: an extension to a node already on the path
(checked by walking the parent chain, at most ``max_hops`` steps) is never made.

``k_paths`` follows edges in both directions with factor ``w`` (current weight; no ρ). A BFS from the target over
the masked undirected graph gives ``dist_t``; an extension to ``v`` is pruned when
``hops + 1 + dist_t(v) > max_hops`` (or ``v`` cannot reach the target) or when the strength falls below
``min_strength``. Each edge examined costs one budget unit; once the budget is spent no partial path is extended,
but complete paths already queued are still popped (in order) and counted.

``chains`` follows forward (``w·fwd_mult[rel]``), reverse (``w·rev_mult[rel]``) or both directions from the
source; a popped path none of whose extensions survives (depth, simplicity, ``min_strength``) is a maximal chain.
Each pop costs one budget unit; once spent, the queued (unexpanded, hence not-a-prefix) paths are taken in order.
"""

import numpy as np

from libc.stdlib cimport malloc, realloc, free
from libc.math cimport isfinite
from libc.stdint cimport int8_t, int16_t

from ._types cimport node_t, edge_t, weight_t, rel_t, mask_t
from .csr cimport CSRGraph, CSRView, check_mask, load_table, check_node, bfs_levels


# ------------------------------------------------------------------------------------------ arena + heap

cdef struct PNode:
    double strength
    edge_t edge          # forward position of the last edge (-1 for the root)
    Py_ssize_t parent    # arena index of the prefix (-1 for the root)
    node_t node          # last node
    int hops
    int8_t dir           # +1 forward, -1 backward (0 for the root)

cdef struct Search:
    PNode* arena
    Py_ssize_t n_arena
    Py_ssize_t cap_arena
    Py_ssize_t* heap
    Py_ssize_t n_heap
    Py_ssize_t cap_heap


cdef int _init(Search* s) noexcept nogil:
    s.cap_arena = 256
    s.cap_heap = 256
    s.n_arena = 0
    s.n_heap = 0
    s.arena = <PNode*>malloc(<size_t>s.cap_arena * sizeof(PNode))
    s.heap = <Py_ssize_t*>malloc(<size_t>s.cap_heap * sizeof(Py_ssize_t))
    if s.arena == NULL or s.heap == NULL:
        return -1
    return 0


cdef void _release(Search* s) noexcept nogil:
    free(s.arena)
    free(s.heap)
    s.arena = NULL
    s.heap = NULL


cdef inline bint _before(const PNode* arena, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef const PNode* x = &arena[a]
    cdef const PNode* y = &arena[b]
    if x.strength != y.strength:
        return x.strength > y.strength
    if x.hops != y.hops:
        return x.hops < y.hops
    if x.node != y.node:
        return x.node < y.node
    return a < b


cdef int _push(Search* s, double strength, edge_t edge, Py_ssize_t parent, node_t node, int hops,
               int8_t direction) noexcept nogil:
    """Append a record to the arena and its index to the heap."""
    cdef PNode* ga
    cdef Py_ssize_t* gh
    cdef Py_ssize_t idx, i, p
    if s.n_arena == s.cap_arena:
        ga = <PNode*>realloc(s.arena, <size_t>(2 * s.cap_arena) * sizeof(PNode))
        if ga == NULL:
            return -1
        s.arena = ga
        s.cap_arena *= 2
    if s.n_heap == s.cap_heap:
        gh = <Py_ssize_t*>realloc(s.heap, <size_t>(2 * s.cap_heap) * sizeof(Py_ssize_t))
        if gh == NULL:
            return -1
        s.heap = gh
        s.cap_heap *= 2
    idx = s.n_arena
    s.n_arena += 1
    s.arena[idx].strength = strength
    s.arena[idx].edge = edge
    s.arena[idx].parent = parent
    s.arena[idx].node = node
    s.arena[idx].hops = hops
    s.arena[idx].dir = direction
    i = s.n_heap
    s.n_heap += 1
    while i > 0:
        p = (i - 1) >> 1
        if not _before(s.arena, idx, s.heap[p]):
            break
        s.heap[i] = s.heap[p]
        i = p
    s.heap[i] = idx
    return 0


cdef Py_ssize_t _pop(Search* s) noexcept nogil:
    cdef Py_ssize_t top = s.heap[0], last, i = 0, c, n
    s.n_heap -= 1
    n = s.n_heap
    if n > 0:
        last = s.heap[n]
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and _before(s.arena, s.heap[c + 1], s.heap[c]):
                c += 1
            if not _before(s.arena, s.heap[c], last):
                break
            s.heap[i] = s.heap[c]
            i = c
        s.heap[i] = last
    return top


cdef inline bint _on_path(const PNode* arena, Py_ssize_t idx, node_t v) noexcept nogil:
    while idx >= 0:
        if arena[idx].node == v:
            return True
        idx = arena[idx].parent
    return False


cdef object _extract(const PNode* arena, Py_ssize_t idx):
    """(nodes int32, edges int64, dirs int8, strength) of the path ending at arena record ``idx``."""
    cdef int h = arena[idx].hops
    nodes = np.empty(h + 1, dtype=np.int32)
    edges = np.empty(h, dtype=np.int64)
    dirs = np.empty(h, dtype=np.int8)
    cdef node_t[::1] nv = nodes
    cdef edge_t[::1] ev = edges
    cdef int8_t[::1] dv = dirs
    cdef double strength = arena[idx].strength
    cdef int i = h
    while idx >= 0:
        nv[i] = arena[idx].node
        if i > 0:
            ev[i - 1] = arena[idx].edge
            dv[i - 1] = arena[idx].dir
        i -= 1
        idx = arena[idx].parent
    return (nodes, edges, dirs, float(strength))


# ------------------------------------------------------------------------------------------ k_paths

cdef int _k_paths(const CSRView* g, Search* s, const int16_t* dist, node_t source, node_t target, int max_hops,
                  Py_ssize_t max_paths, Py_ssize_t budget, double min_strength, mask_t mask,
                  Py_ssize_t* found_idx, Py_ssize_t* n_found, Py_ssize_t* total, bint* exhausted) noexcept nogil:
    cdef Py_ssize_t p, used = 0
    cdef PNode cur
    cdef edge_t e, k
    cdef node_t v
    cdef int nh
    cdef double st
    cdef int rc = 0
    cdef bint spent = False
    rc |= _push(s, 1.0, -1, -1, source, 0, 0)
    while s.n_heap > 0 and rc == 0:
        p = _pop(s)
        cur = s.arena[p]
        if cur.node == target:
            total[0] += 1
            if n_found[0] < max_paths:
                found_idx[n_found[0]] = p
                n_found[0] += 1
            continue
        if spent:
            continue
        nh = cur.hops + 1
        for e in range(g.indptr[cur.node], g.indptr[cur.node + 1]):
            if not ((mask >> g.relations[e]) & 1u):
                continue
            if used >= budget:
                spent = True
                break
            used += 1
            v = g.indices[e]
            if dist[v] < 0 or nh + dist[v] > max_hops:
                continue
            st = cur.strength * <double>g.weights[e]
            if st < min_strength or _on_path(s.arena, p, v):
                continue
            rc |= _push(s, st, e, p, v, nh, 1)
        if spent:
            continue
        for k in range(g.rev_indptr[cur.node], g.rev_indptr[cur.node + 1]):
            if not ((mask >> g.rev_relations[k]) & 1u):
                continue
            e = g.rev_edge[k]
            if used >= budget:
                spent = True
                break
            used += 1
            v = g.rev_indices[k]
            if dist[v] < 0 or nh + dist[v] > max_hops:
                continue
            st = cur.strength * <double>g.weights[e]
            if st < min_strength or _on_path(s.arena, p, v):
                continue
            rc |= _push(s, st, e, p, v, nh, -1)
    exhausted[0] = spent
    return rc


def k_paths(CSRGraph csr not None, Py_ssize_t source, Py_ssize_t target, *, int max_hops=6,
            Py_ssize_t max_paths=10, Py_ssize_t budget=10000, double min_strength=1e-4,
            relation_mask=0xFFFFFFFF):
    """Strongest simple paths source → target (edges in both directions); see the module docstring."""
    check_node(csr, source, "source")
    check_node(csr, target, "target")
    if source == target:
        raise ValueError("source and target must differ")
    if max_hops < 1 or max_hops > 32767:
        raise ValueError(f"max_hops must be in [1, 32767], got {max_hops}")
    if max_paths < 0:
        raise ValueError(f"max_paths must be >= 0, got {max_paths}")
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    if not (isfinite(min_strength) and min_strength >= 0.0):
        raise ValueError(f"min_strength must be a finite number >= 0, got {min_strength}")
    cdef mask_t mask
    check_mask(relation_mask, &mask)

    cdef Py_ssize_t N = csr.v.n_nodes
    dist_arr = np.empty(N, dtype=np.int16)
    cdef int16_t[::1] dist = dist_arr
    found_arr = np.empty(max(max_paths, 1), dtype=np.intp)
    cdef Py_ssize_t[::1] found = found_arr
    cdef Py_ssize_t n_found = 0, total = 0
    cdef bint exhausted = False
    cdef Search s
    s.arena = NULL
    s.heap = NULL
    cdef int rc = 0, shortest = -1
    cdef Py_ssize_t reached = 0
    with nogil:
        rc = bfs_levels(&csr.v, <node_t>target, &dist[0], max_hops, 2, mask, &reached)
        if rc == 0:
            shortest = dist[source]
        if rc == 0 and shortest >= 0:
            rc = _init(&s)
            if rc == 0:
                rc = _k_paths(&csr.v, &s, &dist[0], <node_t>source, <node_t>target, max_hops, max_paths,
                              budget, min_strength, mask, &found[0], &n_found, &total, &exhausted)
    paths = []
    try:
        if rc != 0:
            raise MemoryError("k_paths: out of memory")
        for i in range(n_found):
            paths.append(_extract(s.arena, found[i]))
    finally:
        _release(&s)
    return {
        "paths": paths,
        "total_found": int(total),
        "budget_exhausted": bool(exhausted),
        "shortest_hops": int(shortest),
    }


# ------------------------------------------------------------------------------------------ chains

cdef int _chains(const CSRView* g, Search* s, node_t source, int mode, int max_depth, double min_strength,
                 Py_ssize_t budget, Py_ssize_t max_chains, mask_t mask, const double* fwd, const double* rev,
                 Py_ssize_t* out_idx, Py_ssize_t* n_out) noexcept nogil:
    cdef Py_ssize_t p, pops = 0, children
    cdef PNode cur
    cdef edge_t e, k
    cdef node_t v
    cdef rel_t r
    cdef int nh
    cdef double st
    cdef int rc = 0
    rc |= _push(s, 1.0, -1, -1, source, 0, 0)
    while s.n_heap > 0 and rc == 0 and n_out[0] < max_chains:
        p = _pop(s)
        cur = s.arena[p]
        if pops >= budget:
            # budget spent: queued paths were never expanded, so none is a prefix of another found path
            if cur.hops >= 1:
                out_idx[n_out[0]] = p
                n_out[0] += 1
            continue
        pops += 1
        children = 0
        nh = cur.hops + 1
        if cur.hops < max_depth:
            if mode != 1:
                for e in range(g.indptr[cur.node], g.indptr[cur.node + 1]):
                    r = g.relations[e]
                    if not ((mask >> r) & 1u):
                        continue
                    v = g.indices[e]
                    st = cur.strength * (<double>g.weights[e] * fwd[r])
                    if st < min_strength or _on_path(s.arena, p, v):
                        continue
                    rc |= _push(s, st, e, p, v, nh, 1)
                    children += 1
            if mode != 0:
                for k in range(g.rev_indptr[cur.node], g.rev_indptr[cur.node + 1]):
                    r = g.rev_relations[k]
                    e = g.rev_edge[k]
                    if not ((mask >> r) & 1u):
                        continue
                    v = g.rev_indices[k]
                    st = cur.strength * (<double>g.weights[e] * rev[r])
                    if st < min_strength or _on_path(s.arena, p, v):
                        continue
                    rc |= _push(s, st, e, p, v, nh, -1)
                    children += 1
        if children == 0 and cur.hops >= 1:
            out_idx[n_out[0]] = p
            n_out[0] += 1
    return rc


def chains(CSRGraph csr not None, Py_ssize_t source, *, int mode=0, int max_depth=6, double min_strength=0.1,
           Py_ssize_t budget=10000, Py_ssize_t max_chains=10, relation_mask=0xFFFFFFFF, fwd_mult=None,
           rev_mult=None):
    """Strongest maximal causal chains from ``source``; list of (nodes, edges, dirs, strength)."""
    check_node(csr, source, "source")
    if mode not in (0, 1, 2):
        raise ValueError(f"mode must be 0 (forward), 1 (reverse) or 2 (both), got {mode}")
    if max_depth < 1 or max_depth > 32767:
        raise ValueError(f"max_depth must be in [1, 32767], got {max_depth}")
    if max_chains < 0:
        raise ValueError(f"max_chains must be >= 0, got {max_chains}")
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")
    if not (isfinite(min_strength) and min_strength >= 0.0):
        raise ValueError(f"min_strength must be a finite number >= 0, got {min_strength}")
    cdef mask_t mask
    check_mask(relation_mask, &mask)
    cdef double fwd[16]
    cdef double rev[16]
    load_table(fwd_mult, "fwd_mult", fwd)
    load_table(rev_mult, "rev_mult", rev)
    if max_chains == 0:
        return []
    out_arr = np.empty(max_chains, dtype=np.intp)
    cdef Py_ssize_t[::1] out = out_arr
    cdef Py_ssize_t n_out = 0
    cdef Search s
    s.arena = NULL
    s.heap = NULL
    cdef int rc
    with nogil:
        rc = _init(&s)
        if rc == 0:
            rc = _chains(&csr.v, &s, <node_t>source, mode, max_depth, min_strength, budget, max_chains, mask,
                         fwd, rev, &out[0], &n_out)
    try:
        if rc != 0:
            raise MemoryError("chains: out of memory")
        return [_extract(s.arena, out[i]) for i in range(n_out)]
    finally:
        _release(&s)
