"""Packed string columns: a list of strings as one NUL-separated UTF-8 array (the array cache's format), and a
column that stays packed until first read. Its own module because the node table and the query indexes both use it
(it used to live in ``seeds``, which made ``nodes`` and ``seeds`` import each other)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["LazyStrings", "pack_strings", "unpack_strings"]


def pack_strings(items: Sequence[str]) -> np.ndarray:
    """A list of strings as one uint8 array (NUL-separated UTF-8) for the array cache."""
    if isinstance(items, LazyStrings):
        return items.packed()
    return np.frombuffer("\0".join(items).encode("utf-8", "surrogatepass"), np.uint8).copy()


def unpack_strings(arr: np.ndarray, count: int) -> list[str]:
    if count == 0:
        return []
    return arr.tobytes().decode("utf-8", "surrogatepass").split("\0")


class LazyStrings(Sequence[str]):
    """A packed string column that is split into a list only when first read.

    Start-up maps the cache and never touches columns such as ``doc`` or ``signature`` unless a tool needs them.
    """

    __slots__ = ("_count", "_items", "_packed")

    def __init__(self, packed: np.ndarray, count: int) -> None:
        self._packed = packed
        self._count = count
        self._items: list[str] | None = None

    def _list(self) -> list[str]:
        if self._items is None:
            self._items = unpack_strings(self._packed, self._count)
        return self._items

    def __getitem__(self, i):
        return self._list()[i]

    def __len__(self) -> int:
        return self._count

    def __iter__(self):
        return iter(self._list())

    def packed(self) -> np.ndarray:
        return self._packed

    def transient(self) -> list[str]:
        """The strings for a one-off pass, without keeping them split (embedding texts read ``doc`` and
        ``signature`` once per generation; kept, the lists would stay in a serving process for nothing)."""
        return self._items if self._items is not None else unpack_strings(self._packed, self._count)
