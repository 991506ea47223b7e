"""Spreading activation (activation.md §2), hop BFS and top-k selection."""

import numpy as np
import numpy.typing as npt

from .csr import CSRGraph

MODE_FORWARD: int
MODE_REVERSE: int
MODE_BOTH: int

def spread(
    csr: CSRGraph,
    seeds: npt.NDArray[np.int32],
    amplitudes: npt.NDArray[np.float32],
    out_act: npt.NDArray[np.float32],
    out_hops: npt.NDArray[np.int16],
    *,
    decay: float = 0.55,
    threshold: float = 0.04,
    max_hops: int = 5,
    mode: int = 2,
    relation_mask: int = 0xFFFFFFFF,
    hub_ref: float = 16.0,
    fwd_mult: npt.ArrayLike | None = None,
    rev_mult: npt.ArrayLike | None = None,
    scratch: SpreadScratch | None = None,
) -> int:
    """Best-first spreading activation that keeps the strongest signal per node.

    Seeds start at ``min(1, amplitude)`` (amplitudes <= 0 are ignored; duplicates keep the max), hops 0.
    Forward edge u→v: ``s = a_u·w·decay·fwd_mult[rel]·h_out(u)``; reverse edge v→u walked from u:
    ``s = a_u·w·rev_mult[rel]·decay·h_in(u)``; v is updated when ``s >= threshold and s > a_v``. Nodes at
    ``max_hops`` are not expanded. ``h_out(u) = min(1, sqrt(hub_ref / outdeg_mask(u)))`` (``hub_ref=0`` disables).
    mode: 0 forward, 1 reverse, 2 both. Tables default to all 1.0 (length 16).

    Overwrites ``out_act`` (float32[N], 0 for unreached) and ``out_hops`` (int16[N], -1 for unreached);
    returns the number of nodes with activation > 0. ``scratch`` (sized for the graph) avoids allocating O(N)
    working memory per call.
    """

class SpreadScratch:
    """Reusable working memory of ``spread`` for a graph of ``n`` nodes (one per concurrent caller)."""

    n: int
    def __init__(self, n: int) -> None: ...

def spread_sparse(
    csr: CSRGraph,
    seeds: npt.NDArray[np.int32],
    amplitudes: npt.NDArray[np.float32],
    scratch: SpreadScratch,
    *,
    decay: float = 0.55,
    threshold: float = 0.04,
    max_hops: int = 5,
    mode: int = 2,
    relation_mask: int = 0xFFFFFFFF,
    hub_ref: float = 16.0,
    fwd_mult: npt.ArrayLike | None = None,
    rev_mult: npt.ArrayLike | None = None,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32], npt.NDArray[np.int16]]:
    """``spread`` restricted to the reached nodes: (ascending node indices, activation, hops), identical to the
    non-zero entries of the dense result. Costs the reached region only (the scratch is left at rest)."""

def bfs_hops(
    csr: CSRGraph,
    source: int,
    out_hops: npt.NDArray[np.int16],
    *,
    max_hops: int,
    mode: int = 2,
    relation_mask: int = 0xFFFFFFFF,
) -> int:
    """Unweighted BFS hop distance within ``max_hops`` into ``out_hops`` (-1 unreached); returns nodes reached."""

def top_k(values: npt.NDArray[np.float32], k: int, min_value: float = 0.0) -> npt.NDArray[np.int32]:
    """Indices of the ``k`` largest values ``> min_value``, sorted by value desc then index asc."""
