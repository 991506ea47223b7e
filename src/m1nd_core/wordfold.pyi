"""Written words of definitions' own lines, folded (extraction's body terms)."""

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

class WordFolds:
    """One process's table: written word -> id -> folded text."""

    max_words: int
    def __init__(self, max_words: int = 500_000) -> None: ...
    def __len__(self) -> int: ...
    def scan(
        self,
        data: npt.NDArray[np.uint8],
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
        owners: npt.NDArray[np.int32],
        n_owners: int,
        max_words: int,
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64], int, list[bytes]]:
        """(word ids grouped by owner, offsets per owner, first new id, new words)."""
    def set_folds(self, first_id: int, folds: list[str]) -> None:
        """The folded text of the last scan's new words, in id order."""
    def join(self, ids: npt.NDArray[np.int32], offsets: npt.NDArray[np.int64]) -> list[str]:
        """Per owner: its words' folded texts joined by spaces, stripped."""

def fold_forms(
    words: list[str],
    stop: frozenset[str],
    stem_words: Callable[[list[str]], list[str]],
    fallback: Callable[[str], list[str]],
    joined: bool,
) -> list[Any]:
    """Each word's distinct stemmed index parts (space-joined strings when ``joined``, else tuples)."""
