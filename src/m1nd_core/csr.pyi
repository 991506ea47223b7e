"""Forward + reverse CSR graph (graph.md §13). Arrays are shared, never copied."""

import numpy as np
import numpy.typing as npt

class CSRGraph:
    """Directed, relation-labelled graph in CSR form; build with :meth:`from_edges` or :meth:`from_arrays`."""

    @classmethod
    def from_edges(
        cls,
        n_nodes: int,
        src: npt.NDArray[np.int32],
        dst: npt.NDArray[np.int32],
        weights: npt.NDArray[np.float32],
        base_weights: npt.NDArray[np.float32],
        relations: npt.NDArray[np.uint8],
    ) -> CSRGraph:
        """Build from E edges (no self loops, endpoints in range, unique (src, dst, relation), relation < 16).

        Each node's out-edges are sorted by (relation, target), its reverse slots by (relation, source).
        ``edge_order[i]`` is the forward position of input edge ``i``. Raises ValueError on bad input.
        """
    @classmethod
    def from_arrays(
        cls,
        n_nodes: int,
        indptr: npt.NDArray[np.int64],
        indices: npt.NDArray[np.int32],
        weights: npt.NDArray[np.float32],
        base_weights: npt.NDArray[np.float32],
        relations: npt.NDArray[np.uint8],
        rev_indptr: npt.NDArray[np.int64],
        rev_indices: npt.NDArray[np.int32],
        rev_edge: npt.NDArray[np.int64],
    ) -> CSRGraph:
        """Rebuild from saved arrays: validated (dtypes, lengths, offsets, ranges, reverse CSR consistent with the
        forward one) and shared without copies. Only ``weights`` must be writable."""
    @property
    def n_nodes(self) -> int: ...
    @property
    def n_edges(self) -> int: ...
    @property
    def indptr(self) -> npt.NDArray[np.int64]:
        """int64[N+1] forward offsets (read-only view)."""
    @property
    def indices(self) -> npt.NDArray[np.int32]:
        """int32[E] forward targets (read-only view)."""
    @property
    def weights(self) -> npt.NDArray[np.float32]:
        """float32[E] current weights; writable, shared with every kernel (learning mutates it in place)."""
    @property
    def base_weights(self) -> npt.NDArray[np.float32]:
        """float32[E] base weights w0 (read-only view)."""
    @property
    def relations(self) -> npt.NDArray[np.uint8]:
        """uint8[E] relation codes (read-only view)."""
    @property
    def rev_indptr(self) -> npt.NDArray[np.int64]:
        """int64[N+1] reverse offsets (read-only view)."""
    @property
    def rev_indices(self) -> npt.NDArray[np.int32]:
        """int32[E] source node of each reverse slot (read-only view)."""
    @property
    def rev_edge(self) -> npt.NDArray[np.int64]:
        """int64[E] forward position of each reverse slot (read-only view)."""
    @property
    def edge_order(self) -> npt.NDArray[np.int64]:
        """int64[E] forward position of input edge i (identity after ``from_arrays``)."""
    @property
    def nbytes(self) -> int:
        """Total size in bytes of the CSR arrays."""
    def find_edge(self, u: int, v: int, relation: int = -1) -> int:
        """Forward position of edge u→v with ``relation`` (-1: any, the strongest current weight), or -1."""
    def out_degree(self, mask: int = 0xFFFFFFFF) -> npt.NDArray[np.int32]:
        """int32[N] out-degree counting only edges whose relation bit is set in ``mask``."""
    def in_degree(self, mask: int = 0xFFFFFFFF) -> npt.NDArray[np.int32]:
        """int32[N] in-degree counting only edges whose relation bit is set in ``mask``."""
    def masked_degrees(self, mask: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """(out_degree, in_degree) for ``mask``, cached on the graph (read-only arrays; at most 4 masks kept)."""
    def edges_between(self, u: int, v: int) -> npt.NDArray[np.int64]:
        """Ascending forward positions of every edge u→v or v→u."""
