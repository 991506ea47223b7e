"""m1nd_core: private native kernels of m1nd (Cython, C speed, no GIL in inner loops).

This package is an implementation detail of :mod:`m1nd`; only ``m1nd.graph.engine`` imports it, and it never
imports ``m1nd``.

Contract
--------
* Kernels trust **validated, C-contiguous, typed** input. The Python layer (``m1nd.graph.engine``) coerces with
  ``np.ascontiguousarray(x, dtype=...)`` and validates ranges. Each kernel still checks dtypes, shapes and
  scalar ranges at its Python-visible entry (before releasing the GIL) and raises :class:`ValueError` with a clear
  message, so a bad call fails loudly instead of reading out of bounds.
* Dtypes: ``node_t`` = int32 (node indices), ``edge_t`` = int64 (``indptr`` offsets and edge positions),
  ``weight_t`` = float32 (weights, activations), ``rel_t`` = uint8 (relation codes 0..11, graph.md §5).
* Relation masks are uint32 bitmasks: bit ``r`` set means relation ``r`` is allowed. Per-relation tables
  (ρ, causal strength, multipliers) are float32 arrays of length 16.
* Output arrays named ``out*`` are owned by the caller and overwritten by the kernel.
* Every kernel is deterministic: ties are broken by node index / edge position, never by memory addresses.
* Kernels release the GIL for their inner loops. ``CSRGraph.weights`` is shared and mutated in place by
  learning; callers serialise writers against readers (the engine holds its graph lock).
* Derived data kept on a ``CSRGraph``: the relation of each reverse slot and, per relation mask (at most 4),
  the masked out/in-degree arrays used by hub damping. Relations never change, so these never go stale.

Modules
-------
``csr``         :class:`~m1nd_core.csr.CSRGraph`, forward + reverse CSR sharing one weights array.
``activation``  spreading activation (``spread``; ``spread_sparse`` over a reusable ``SpreadScratch``), hop BFS
                (``bfs_hops``), ``top_k``.
``hebbian``     bounded LTP/LTD in place (``apply``), relaxation towards base weights (``relax``).
``paths``       bounded best-first path enumeration (``k_paths``) and causal chains (``chains``).
``rank``        PageRank prior (``pagerank``).
``postings``    scatter-accumulation over posting lists (``accumulate`` with a reusable ``AccumulatorScratch``).
``termcount``   per-document term counts in first-seen order (``count_terms``: the lexical index's body field).
``wordfold``    written words of line runs to folded texts (``WordFolds``: extraction's body terms).
"""

NODE_DTYPE = "int32"
EDGE_DTYPE = "int64"
WEIGHT_DTYPE = "float32"
REL_DTYPE = "uint8"
N_RELATION_SLOTS = 16
ALL_RELATIONS = 0xFFFFFFFF

__all__ = [
    "ALL_RELATIONS",
    "EDGE_DTYPE",
    "NODE_DTYPE",
    "N_RELATION_SLOTS",
    "REL_DTYPE",
    "WEIGHT_DTYPE",
]
