"""Bounded Hebbian plasticity in place on the weights array (learning.md §1)."""

import numpy as np
import numpy.typing as npt

def apply(
    weights: npt.NDArray[np.float32],
    edges: npt.NDArray[np.int64],
    signs: npt.NDArray[np.int8],
    rate: float,
    *,
    w_min: float = 0.05,
    w_max: float = 1.0,
) -> int:
    """LTP (sign +1: ``w += rate·(w_max − w)``) / LTD (sign −1: ``w −= rate·(w − w_min)``) in place.

    Computed in float64, clamped into ``[w_min, w_max]``, stored float32. Sign 0 entries are ignored; an edge
    listed several times is updated once, by its first non-zero occurrence. A non-finite result leaves the edge
    unchanged. ``rate`` must be in [0, 1]. Returns the number of edges whose stored weight changed.
    """

def relax(
    weights: npt.NDArray[np.float32],
    base_weights: npt.NDArray[np.float32],
    age_days: npt.NDArray[np.float32],
    half_life_days: float,
) -> None:
    """In place ``w = w0 + (w − w0)·2**(−age/half_life)`` (negative ages count as 0, NaN ages are skipped)."""
