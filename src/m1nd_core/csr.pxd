# Declarations of the CSR graph shared by every kernel module (cimported as `from .csr cimport ...`).
from ._types cimport node_t, edge_t, weight_t, rel_t, mask_t, hop_t


cdef struct CSRView:
    # Raw pointers into the arrays held by a CSRGraph; valid while the graph object is alive.
    Py_ssize_t n_nodes
    Py_ssize_t n_edges
    const edge_t* indptr          # [N+1] forward offsets
    const node_t* indices         # [E] forward targets
    weight_t* weights             # [E] current (learned) weights, mutable
    const weight_t* base_weights  # [E] base weights w0
    const rel_t* relations        # [E] relation codes
    const edge_t* rev_indptr      # [N+1] reverse offsets
    const node_t* rev_indices     # [E] source node of each reverse slot
    const edge_t* rev_edge        # [E] forward position of each reverse slot
    const rel_t* rev_relations    # [E] relation of each reverse slot (derived: relations[rev_edge])


cdef class CSRGraph:
    cdef CSRView v
    cdef object _indptr
    cdef object _indices
    cdef object _weights
    cdef object _base_weights
    cdef object _relations
    cdef object _rev_indptr
    cdef object _rev_indices
    cdef object _rev_edge
    cdef object _edge_order
    cdef object _rev_relations
    cdef dict _degree_cache       # relation mask -> (out_degree int32[N], in_degree int32[N])
    # Buffer exports pin the arrays (no resize behind our pointers).
    cdef const edge_t[::1] _m_indptr
    cdef const node_t[::1] _m_indices
    cdef weight_t[::1] _m_weights
    cdef const weight_t[::1] _m_base_weights
    cdef const rel_t[::1] _m_relations
    cdef const edge_t[::1] _m_rev_indptr
    cdef const node_t[::1] _m_rev_indices
    cdef const edge_t[::1] _m_rev_edge
    cdef const rel_t[::1] _m_rev_relations

    cdef int _bind(self, Py_ssize_t n_nodes, object indptr, object indices, object weights,
                   object base_weights, object relations, object rev_indptr, object rev_indices,
                   object rev_edge, object edge_order) except -1
    cpdef tuple masked_degrees(self, mask_t mask)


# Validation helpers used at the Python-visible entry of every kernel (raise ValueError).
cdef int check_array(object a, str name, object dtype, Py_ssize_t length, bint writable) except -1
cdef int check_graph(object g, str name) except -1
cdef int check_mask(object mask, mask_t* out) except -1
cdef int load_table(object table, str name, double* out) except -1
cdef int check_node(object g, Py_ssize_t u, str name) except -1

# Masked degree of one node (nogil helpers shared by the kernels).
cdef Py_ssize_t out_degree_masked(const CSRView* v, node_t u, mask_t mask) noexcept nogil
cdef Py_ssize_t in_degree_masked(const CSRView* v, node_t u, mask_t mask) noexcept nogil

# Level-synchronous BFS (hop distances, -1 beyond max_hops); mode 0 forward, 1 reverse, 2 both directions.
cdef int bfs_levels(const CSRView* g, node_t source, hop_t* dist, int max_hops, int mode, mask_t mask,
                    Py_ssize_t* reached) noexcept nogil
