"""Bounded best-first path search (activation.md §10 causal chains, §11 ``why``)."""

from typing import TypedDict

import numpy as np
import numpy.typing as npt

from .csr import CSRGraph

# (nodes int32[h+1], edges int64[h] forward positions, dirs int8[h] (+1 forward, -1 backward), strength)
Path = tuple[npt.NDArray[np.int32], npt.NDArray[np.int64], npt.NDArray[np.int8], float]

class KPathsResult(TypedDict):
    paths: list[Path]
    total_found: int
    budget_exhausted: bool
    shortest_hops: int

def k_paths(
    csr: CSRGraph,
    source: int,
    target: int,
    *,
    max_hops: int = 6,
    max_paths: int = 10,
    budget: int = 10000,
    min_strength: float = 1e-4,
    relation_mask: int = 0xFFFFFFFF,
) -> KPathsResult:
    """Strongest simple paths source → target following edges in both directions.

    strength = product of current weights (reverse steps too, no ρ); paths sorted by strength desc, then hops,
    then discovery order. Each edge examined costs one budget unit; after the budget is spent, complete paths
    already queued are still counted. ``shortest_hops`` is the undirected masked BFS distance (-1 if > max_hops).
    ValueError if source == target.
    """

def chains(
    csr: CSRGraph,
    source: int,
    *,
    mode: int = 0,
    max_depth: int = 6,
    min_strength: float = 0.1,
    budget: int = 10000,
    max_chains: int = 10,
    relation_mask: int = 0xFFFFFFFF,
    fwd_mult: npt.ArrayLike | None = None,
    rev_mult: npt.ArrayLike | None = None,
) -> list[Path]:
    """Strongest maximal causal chains (≥ 1 edge) from ``source``, strength desc.

    Factor per edge: forward ``w·fwd_mult[rel]``, reverse ``w·rev_mult[rel]`` (mode 0 forward, 1 reverse,
    2 both); simple paths, depth ≤ max_depth, extensions below ``min_strength`` dropped; budget counts pops.
    A chain that is a prefix of another found chain is not listed.
    """
