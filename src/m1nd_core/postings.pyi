"""Scatter-accumulation over posting lists (lexical and trigram indexes)."""

import numpy as np
import numpy.typing as npt

class AccumulatorScratch:
    """Reusable working memory of ``accumulate`` for values in ``[0, n)`` (one per concurrent caller)."""

    n: int
    def __init__(self, n: int) -> None: ...

def accumulate(
    flat: npt.NDArray[np.int32],
    offsets: npt.NDArray[np.int64],
    keys: npt.NDArray[np.int64],
    scratch: AccumulatorScratch,
    weights: npt.NDArray[np.float32] | None = None,
    key_weights: npt.NDArray[np.float32] | None = None,
    min_sum: float | None = None,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float64], npt.NDArray[np.int32]]:
    """For the posting lists of ``keys`` (``flat[offsets[k]:offsets[k+1]]``): every value with a posting (ascending),
    the float64 sum of its terms ``float32(weights[p]·key_weights[k])`` in key then posting order (as
    ``np.bincount`` over the concatenated postings), and its posting count. ``min_sum``: only the values whose sum
    rounded to float32 is at least ``float32(min_sum)``."""
