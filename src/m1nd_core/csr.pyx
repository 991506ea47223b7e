"""Compressed sparse row graph: forward + reverse adjacency over one shared weights array.

Layout (graph.md §13): the out-edges of node ``i`` are the forward positions ``[indptr[i], indptr[i+1])``,
sorted by (relation, target). The reverse CSR lists, for each node, the edges pointing *to* it, sorted by
(relation, source); ``rev_edge[k]`` is the forward position of reverse slot ``k`` so weights are stored once and
learning (which mutates ``weights`` in place) is seen by both directions.

Construction uses numpy (one argsort of a packed key per direction); the query helpers and every kernel read the arrays
through raw pointers without the GIL.
"""

import numpy as np

from libc.stdlib cimport malloc, free

from ._types cimport node_t, edge_t, weight_t, rel_t, mask_t, hop_t

cdef object _INT32 = np.dtype(np.int32)
cdef object _INT64 = np.dtype(np.int64)
cdef object _FLOAT32 = np.dtype(np.float32)
cdef object _UINT8 = np.dtype(np.uint8)

cdef int MAX_RELATION = 15


# --------------------------------------------------------------------------------------------------------------
# validation helpers (Python-visible entry checks, shared with the other kernel modules through csr.pxd)

cdef int check_array(object a, str name, object dtype, Py_ssize_t length, bint writable) except -1:
    """Raise ValueError unless ``a`` is a 1-D C-contiguous ndarray of exactly ``dtype`` (and ``length`` if >= 0)."""
    if not isinstance(a, np.ndarray):
        raise ValueError(f"{name} must be a numpy.ndarray of dtype {np.dtype(dtype).name}, "
                         f"got {type(a).__name__}")
    if a.dtype != dtype:
        raise ValueError(f"{name} must have dtype {np.dtype(dtype).name}, got {a.dtype.name}")
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {a.shape}")
    if not a.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous (use numpy.ascontiguousarray)")
    if length >= 0 and a.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {a.shape[0]}")
    if writable and not a.flags.writeable:
        raise ValueError(f"{name} must be writable")
    return 0


cdef int check_graph(object g, str name) except -1:
    if not isinstance(g, CSRGraph):
        raise ValueError(f"{name} must be an m1nd_core.csr.CSRGraph, got {type(g).__name__}")
    return 0


cdef int check_mask(object mask, mask_t* out) except -1:
    try:
        m = int(mask)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"relation_mask must be an integer bitmask, got {mask!r}") from None
    if m < 0 or m > 0xFFFFFFFF:
        raise ValueError(f"relation_mask must fit in 32 bits (0..0xFFFFFFFF), got {m}")
    out[0] = <mask_t>m
    return 0


cdef int load_table(object table, str name, double* out) except -1:
    """Fill ``out[16]`` from a per-relation table (None = all 1.0)."""
    cdef Py_ssize_t r
    if table is None:
        for r in range(16):
            out[r] = 1.0
        return 0
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 1 or t.shape[0] != 16:
        raise ValueError(f"{name} must be a per-relation table of length 16, got shape {t.shape}")
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise ValueError(f"{name} must contain finite non-negative values")
    for r in range(16):
        out[r] = <double>t[r]
    return 0


cdef int check_node(object g, Py_ssize_t u, str name) except -1:
    cdef CSRGraph csr = <CSRGraph>g
    if u < 0 or u >= csr.v.n_nodes:
        raise ValueError(f"{name} must be a node index in [0, {csr.v.n_nodes}), got {u}")
    return 0


cdef inline bint _in_mask(mask_t mask, rel_t r) noexcept nogil:
    return (mask >> r) & 1u


cdef Py_ssize_t out_degree_masked(const CSRView* v, node_t u, mask_t mask) noexcept nogil:
    cdef edge_t e, lo = v.indptr[u], hi = v.indptr[u + 1]
    cdef Py_ssize_t d = 0
    if mask == 0xFFFFFFFFu:
        return <Py_ssize_t>(hi - lo)
    for e in range(lo, hi):
        if _in_mask(mask, v.relations[e]):
            d += 1
    return d


cdef Py_ssize_t in_degree_masked(const CSRView* v, node_t u, mask_t mask) noexcept nogil:
    cdef edge_t k, lo = v.rev_indptr[u], hi = v.rev_indptr[u + 1]
    cdef Py_ssize_t d = 0
    if mask == 0xFFFFFFFFu:
        return <Py_ssize_t>(hi - lo)
    for k in range(lo, hi):
        if _in_mask(mask, v.rev_relations[k]):
            d += 1
    return d


cdef inline Py_ssize_t _slots(const CSRView* g, node_t u) noexcept nogil:
    return <Py_ssize_t>(g.indptr[u + 1] - g.indptr[u] + g.rev_indptr[u + 1] - g.rev_indptr[u])


cdef int bfs_levels(const CSRView* g, node_t source, hop_t* dist, int max_hops, int mode, mask_t mask,
                    Py_ssize_t* reached) noexcept nogil:
    """Hop distances from ``source`` over masked edges (mode 0 along, 1 against, 2 both), -1 beyond max_hops.

    Direction-optimising (Beamer et al.): a level is expanded top-down (scan the frontier's edges) while the
    frontier is small, bottom-up (each unvisited node looks for a predecessor on the frontier, stopping at the
    first) once the frontier's edges outnumber 1/14 of the unvisited nodes' edges. Distances are the same either
    way. Returns -1 when out of memory.
    """
    cdef Py_ssize_t N = g.n_nodes, i, lo, head = 0, tail = 0
    cdef Py_ssize_t m_frontier, m_unvisited = 2 * g.n_edges
    cdef node_t* queue = <node_t*>malloc(<size_t>(N if N > 0 else 1) * sizeof(node_t))
    cdef node_t u, v
    cdef edge_t e, k
    cdef int level = 0
    cdef hop_t nxt
    cdef bint found, full = mask == 0xFFFFFFFFu
    if queue == NULL:
        return -1
    for i in range(N):
        dist[i] = -1
    dist[source] = 0
    queue[tail] = source
    tail += 1
    m_unvisited -= _slots(g, source)
    while head < tail and level < max_hops:
        lo = head
        head = tail
        nxt = <hop_t>(level + 1)
        m_frontier = 0
        for i in range(lo, head):
            m_frontier += _slots(g, queue[i])
        if m_frontier * 14 > m_unvisited:
            # bottom-up: v joins the next level if one of its predecessors is on the frontier
            for v in range(<node_t>N):
                if dist[v] >= 0:
                    continue
                found = False
                if mode != 0:      # reverse walk: v -> w with w on the frontier
                    for e in range(g.indptr[v], g.indptr[v + 1]):
                        if dist[g.indices[e]] == level and (full or (mask >> g.relations[e]) & 1u):
                            found = True
                            break
                if not found and mode != 1:   # forward walk: w -> v with w on the frontier
                    for k in range(g.rev_indptr[v], g.rev_indptr[v + 1]):
                        if dist[g.rev_indices[k]] == level and (full or (mask >> g.rev_relations[k]) & 1u):
                            found = True
                            break
                if found:
                    dist[v] = nxt
                    queue[tail] = v
                    tail += 1
                    m_unvisited -= _slots(g, v)
        else:
            # top-down
            for i in range(lo, head):
                u = queue[i]
                if mode != 1:
                    for e in range(g.indptr[u], g.indptr[u + 1]):
                        if full or (mask >> g.relations[e]) & 1u:
                            v = g.indices[e]
                            if dist[v] < 0:
                                dist[v] = nxt
                                queue[tail] = v
                                tail += 1
                                m_unvisited -= _slots(g, v)
                if mode != 0:
                    for k in range(g.rev_indptr[u], g.rev_indptr[u + 1]):
                        if full or (mask >> g.rev_relations[k]) & 1u:
                            v = g.rev_indices[k]
                            if dist[v] < 0:
                                dist[v] = nxt
                                queue[tail] = v
                                tail += 1
                                m_unvisited -= _slots(g, v)
        level += 1
    free(queue)
    reached[0] = tail
    return 0


cdef int _check_n_nodes(object n_nodes) except -1:
    if not isinstance(n_nodes, (int, np.integer)) or isinstance(n_nodes, bool):
        raise ValueError(f"n_nodes must be an integer, got {n_nodes!r}")
    if n_nodes < 0 or n_nodes > 0x7FFFFFFF - 1:
        raise ValueError(f"n_nodes must be in [0, 2**31-2], got {n_nodes}")
    return 0


cdef int _check_offsets(object ptr, str name, Py_ssize_t n_edges) except -1:
    if ptr[0] != 0 or ptr[ptr.shape[0] - 1] != n_edges:
        raise ValueError(f"{name} must start at 0 and end at the number of edges ({n_edges})")
    if ptr.shape[0] > 1 and np.any(np.diff(ptr) < 0):
        raise ValueError(f"{name} must be non-decreasing")
    return 0


cdef int _check_range(object a, str name, Py_ssize_t hi) except -1:
    if a.shape[0] and (int(a.min()) < 0 or int(a.max()) >= hi):
        raise ValueError(f"{name} values must lie in [0, {hi})")
    return 0


cdef object _sort_by(object major, object rel, object minor, Py_ssize_t n):
    """Permutation (int64) sorting edges by (major, rel, minor).

    One argsort of a packed int64 key when it fits (the keys of a valid edge list are unique, so the order is
    fully determined and equals a stable sort), else a stable lexsort.
    """
    if (<double>n + 1.0) * (<double>n + 1.0) * 16.0 < 9.0e18:
        key = (major.astype(np.int64) * 16 + rel) * n + minor
        return np.argsort(key).astype(np.int64, copy=False)
    return np.lexsort((minor, rel, major)).astype(np.int64, copy=False)


cdef object _ro(object a):
    view = a.view()
    view.flags.writeable = False
    return view


# --------------------------------------------------------------------------------------------------------------

cdef class CSRGraph:
    """Forward + reverse CSR of a directed, relation-labelled graph (graph.md §13).

    Build with :meth:`from_edges` or :meth:`from_arrays`; the constructor is not public.
    """

    def __init__(self):
        raise TypeError("use CSRGraph.from_edges(...) or CSRGraph.from_arrays(...)")

    cdef int _bind(self, Py_ssize_t n_nodes, object indptr, object indices, object weights,
                   object base_weights, object relations, object rev_indptr, object rev_indices,
                   object rev_edge, object edge_order) except -1:
        cdef Py_ssize_t n_edges = indices.shape[0]
        self._indptr = indptr
        self._indices = indices
        self._weights = weights
        self._base_weights = base_weights
        self._relations = relations
        self._rev_indptr = rev_indptr
        self._rev_indices = rev_indices
        self._rev_edge = rev_edge
        self._edge_order = edge_order
        self._rev_relations = np.ascontiguousarray(relations[rev_edge])
        self._degree_cache = {}
        self._m_indptr = indptr
        self._m_indices = indices
        self._m_weights = weights
        self._m_base_weights = base_weights
        self._m_relations = relations
        self._m_rev_indptr = rev_indptr
        self._m_rev_indices = rev_indices
        self._m_rev_edge = rev_edge
        self._m_rev_relations = self._rev_relations
        self.v.n_nodes = n_nodes
        self.v.n_edges = n_edges
        self.v.indptr = &self._m_indptr[0]
        self.v.rev_indptr = &self._m_rev_indptr[0]
        if n_edges > 0:
            self.v.indices = &self._m_indices[0]
            self.v.weights = &self._m_weights[0]
            self.v.base_weights = &self._m_base_weights[0]
            self.v.relations = &self._m_relations[0]
            self.v.rev_indices = &self._m_rev_indices[0]
            self.v.rev_edge = &self._m_rev_edge[0]
            self.v.rev_relations = &self._m_rev_relations[0]
        else:
            self.v.indices = NULL
            self.v.weights = NULL
            self.v.base_weights = NULL
            self.v.relations = NULL
            self.v.rev_indices = NULL
            self.v.rev_edge = NULL
            self.v.rev_relations = NULL
        return 0

    cpdef tuple masked_degrees(self, mask_t mask):
        """(out_degree, in_degree) int32[N] arrays counting edges whose relation is in ``mask``.

        Cached per mask (relations never change); callers must treat the arrays as read-only.
        """
        cached = self._degree_cache.get(mask)
        if cached is None:
            if len(self._degree_cache) >= 4:
                self._degree_cache.pop(next(iter(self._degree_cache)))
            cached = (_ro(self._count(mask, True)), _ro(self._count(mask, False)))
            self._degree_cache[mask] = cached
        return cached

    def _count(self, mask_t m, bint forward):
        out = np.empty(self.v.n_nodes, dtype=np.int32)
        cdef node_t[::1] o = out
        cdef node_t u
        with nogil:
            for u in range(<node_t>self.v.n_nodes):
                if forward:
                    o[u] = <node_t>out_degree_masked(&self.v, u, m)
                else:
                    o[u] = <node_t>in_degree_masked(&self.v, u, m)
        return out

    @classmethod
    def from_edges(cls, n_nodes, src, dst, weights, base_weights, relations):
        """Build from an edge list.

        Parameters
        ----------
        n_nodes : int
        src, dst : int32[E]
            Endpoints in ``[0, n_nodes)``; no self loops; ``(src, dst, relation)`` unique.
        weights, base_weights : float32[E]
            Current and base weights (copied; the graph owns its arrays).
        relations : uint8[E]
            Relation codes (< 16).

        The attribute ``edge_order`` (int64[E]) maps input row ``i`` to its forward position.
        """
        _check_n_nodes(n_nodes)
        check_array(src, "src", _INT32, -1, False)
        cdef Py_ssize_t E = src.shape[0]
        cdef Py_ssize_t N = n_nodes
        check_array(dst, "dst", _INT32, E, False)
        check_array(weights, "weights", _FLOAT32, E, False)
        check_array(base_weights, "base_weights", _FLOAT32, E, False)
        check_array(relations, "relations", _UINT8, E, False)
        _check_range(src, "src", N)
        _check_range(dst, "dst", N)
        if E and int(relations.max()) > MAX_RELATION:
            raise ValueError(f"relations must be codes in [0, {MAX_RELATION}]")
        if E and np.any(src == dst):
            raise ValueError("self loops are not allowed (src == dst)")

        # forward: sort by (src, relation, dst); reverse: forward positions sorted by (dst, relation, src)
        order = _sort_by(src, relations, dst, N)
        f_src = src[order]
        f_dst = np.ascontiguousarray(dst[order])
        f_rel = np.ascontiguousarray(relations[order])
        if E > 1:
            same = (f_src[1:] == f_src[:E - 1]) & (f_rel[1:] == f_rel[:E - 1]) & (f_dst[1:] == f_dst[:E - 1])
            if np.any(same):
                raise ValueError("duplicate (src, dst, relation) edges are not allowed")
        indptr = np.zeros(N + 1, dtype=np.int64)
        np.cumsum(np.bincount(src, minlength=N), out=indptr[1:])
        edge_order = np.empty(E, dtype=np.int64)
        edge_order[order] = np.arange(E, dtype=np.int64)

        # reverse: forward positions sorted by (dst, relation, src)
        rev_edge = _sort_by(f_dst, f_rel, f_src, N)
        rev_indices = np.ascontiguousarray(f_src[rev_edge])
        rev_indptr = np.zeros(N + 1, dtype=np.int64)
        np.cumsum(np.bincount(dst, minlength=N), out=rev_indptr[1:])

        cdef CSRGraph g = CSRGraph.__new__(CSRGraph)
        g._bind(N, indptr, f_dst, np.ascontiguousarray(weights[order]),
                np.ascontiguousarray(base_weights[order]), f_rel, rev_indptr, rev_indices,
                np.ascontiguousarray(rev_edge), edge_order)
        return g

    @classmethod
    def from_arrays(cls, n_nodes, indptr, indices, weights, base_weights, relations,
                    rev_indptr, rev_indices, rev_edge):
        """Rebuild from saved CSR arrays (no sorting, no copies; arrays are validated and shared).

        Checks dtypes, lengths, offsets, index ranges and that the reverse CSR matches the forward one (O(E),
        vectorised). Only ``weights`` must be writable (learning mutates it in place); the other arrays may be
        read-only (e.g. ``np.frombuffer`` over stored blobs). ``edge_order`` becomes the identity.
        """
        _check_n_nodes(n_nodes)
        cdef Py_ssize_t N = n_nodes
        check_array(indices, "indices", _INT32, -1, False)
        cdef Py_ssize_t E = indices.shape[0]
        check_array(indptr, "indptr", _INT64, N + 1, False)
        check_array(weights, "weights", _FLOAT32, E, True)
        check_array(base_weights, "base_weights", _FLOAT32, E, False)
        check_array(relations, "relations", _UINT8, E, False)
        check_array(rev_indptr, "rev_indptr", _INT64, N + 1, False)
        check_array(rev_indices, "rev_indices", _INT32, E, False)
        check_array(rev_edge, "rev_edge", _INT64, E, False)
        _check_offsets(indptr, "indptr", E)
        _check_offsets(rev_indptr, "rev_indptr", E)
        _check_range(indices, "indices", N)
        _check_range(rev_indices, "rev_indices", N)
        _check_range(rev_edge, "rev_edge", E)
        if E and int(relations.max()) > MAX_RELATION:
            raise ValueError(f"relations must be codes in [0, {MAX_RELATION}]")
        if E:
            # the reverse CSR must describe the same edges: rev_edge a bijection, slot k owned by the edge's target
            # and listing its source (graph.md §16 invariant 2)
            if np.any(np.bincount(rev_edge, minlength=E) != 1):
                raise ValueError("rev_edge must be a permutation of [0, E)")
            owner = np.repeat(np.arange(N, dtype=np.int32), np.diff(rev_indptr))
            if not np.array_equal(indices[rev_edge], owner):
                raise ValueError("reverse CSR inconsistent: indices[rev_edge[k]] must be the node owning slot k")
            src = np.repeat(np.arange(N, dtype=np.int32), np.diff(indptr))
            if not np.array_equal(src[rev_edge], rev_indices):
                raise ValueError("reverse CSR inconsistent: rev_indices[k] must be the source of rev_edge[k]")
        cdef CSRGraph g = CSRGraph.__new__(CSRGraph)
        g._bind(N, indptr, indices, weights, base_weights, relations, rev_indptr, rev_indices, rev_edge,
                np.arange(E, dtype=np.int64))
        return g

    # ---------------------------------------------------------------- array properties (shared memory)

    @property
    def n_nodes(self):
        """Number of nodes N."""
        return self.v.n_nodes

    @property
    def n_edges(self):
        """Number of edges E."""
        return self.v.n_edges

    @property
    def indptr(self):
        """int64[N+1] forward offsets (read-only view)."""
        return _ro(self._indptr)

    @property
    def indices(self):
        """int32[E] forward targets (read-only view)."""
        return _ro(self._indices)

    @property
    def weights(self):
        """float32[E] current weights: a writable array shared with the kernels (learning mutates it)."""
        return self._weights

    @property
    def base_weights(self):
        """float32[E] base weights w0 (read-only view)."""
        return _ro(self._base_weights)

    @property
    def relations(self):
        """uint8[E] relation codes (read-only view)."""
        return _ro(self._relations)

    @property
    def rev_indptr(self):
        """int64[N+1] reverse offsets (read-only view)."""
        return _ro(self._rev_indptr)

    @property
    def rev_indices(self):
        """int32[E] source node of each reverse slot (read-only view)."""
        return _ro(self._rev_indices)

    @property
    def rev_edge(self):
        """int64[E] forward position of each reverse slot (read-only view)."""
        return _ro(self._rev_edge)

    @property
    def edge_order(self):
        """int64[E] forward position of input edge i (identity after from_arrays)."""
        return _ro(self._edge_order)

    @property
    def nbytes(self):
        """Total bytes of the CSR arrays."""
        return int(self._indptr.nbytes + self._indices.nbytes + self._weights.nbytes
                   + self._base_weights.nbytes + self._relations.nbytes + self._rev_indptr.nbytes
                   + self._rev_indices.nbytes + self._rev_edge.nbytes + self._edge_order.nbytes
                   + self._rev_relations.nbytes)

    def __repr__(self):
        return f"CSRGraph(n_nodes={self.v.n_nodes}, n_edges={self.v.n_edges})"

    # ---------------------------------------------------------------- queries

    def find_edge(self, Py_ssize_t u, Py_ssize_t v, int relation=-1):
        """Forward position of edge u→v with ``relation`` (-1: any relation, the strongest current weight;
        ties → lowest position), or -1 if absent."""
        check_node(self, u, "u")
        check_node(self, v, "v")
        if relation < -1 or relation > MAX_RELATION:
            raise ValueError(f"relation must be -1 or a code in [0, {MAX_RELATION}], got {relation}")
        cdef edge_t e, best = -1
        cdef node_t tv = <node_t>v
        with nogil:
            for e in range(self.v.indptr[u], self.v.indptr[u + 1]):
                if self.v.indices[e] != tv:
                    continue
                if relation >= 0:
                    if self.v.relations[e] == relation:
                        best = e
                        break
                elif best < 0 or self.v.weights[e] > self.v.weights[best]:
                    best = e
        return best

    def out_degree(self, mask=0xFFFFFFFF):
        """int32[N]: number of out-edges of each node whose relation is in ``mask`` (a fresh array)."""
        cdef mask_t m
        check_mask(mask, &m)
        return self.masked_degrees(m)[0].copy()

    def in_degree(self, mask=0xFFFFFFFF):
        """int32[N]: number of in-edges of each node whose relation is in ``mask`` (a fresh array)."""
        cdef mask_t m
        check_mask(mask, &m)
        return self.masked_degrees(m)[1].copy()

    def edges_between(self, Py_ssize_t u, Py_ssize_t v):
        """int64 array: ascending forward positions of every edge u→v or v→u."""
        check_node(self, u, "u")
        check_node(self, v, "v")
        cdef edge_t e
        found = []
        for e in range(self.v.indptr[u], self.v.indptr[u + 1]):
            if self.v.indices[e] == v:
                found.append(e)
        if u != v:
            for e in range(self.v.indptr[v], self.v.indptr[v + 1]):
                if self.v.indices[e] == u:
                    found.append(e)
        found.sort()
        return np.array(found, dtype=np.int64)
