"""PageRank prior (activation.md §6)."""

import numpy as np
import numpy.typing as npt

from .csr import CSRGraph

def pagerank(
    csr: CSRGraph,
    out: npt.NDArray[np.float32],
    *,
    relation_mask: int = 0xFFFFFFFF,
    damping: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 100,
    use_base_weights: bool = True,
) -> int:
    """PageRank over masked forward edges (transition ∝ base or current weight), uniform start, dangling mass
    spread uniformly, stop at L1 change < tol or max_iter; ``out`` (float32[N]) is scaled to max 1.
    Returns the number of iterations run."""
