"""A small thread-safe least-recently-used map, bounded by entry count and optionally by a total weight.

Used for per-process caches of pure functions (query embeddings, per-token lexical matches, per-query trigram
similarities): values are never persisted, and a cache bound to a graph generation lives on that generation's
objects, so nothing can go stale.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    def __init__(self, max_entries: int, *, max_weight: int | None = None,
                 weigh: Callable[[V], int] | None = None) -> None:
        self.max_entries = max_entries
        self.max_weight = max_weight
        self._weigh = weigh or (lambda _v: 1)
        self._d: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            hit = self._d.get(key)
            if hit is None:
                return None
            self._d.move_to_end(key)
            return hit[0]

    def put(self, key: K, value: V) -> None:
        w = self._weigh(value)
        if self.max_weight is not None and w > self.max_weight:
            return  # larger than the whole budget: not worth evicting everything else for
        with self._lock:
            old = self._d.pop(key, None)
            if old is not None:
                self._weight -= old[1]
            self._d[key] = (value, w)
            self._weight += w
            while self._d and (len(self._d) > self.max_entries
                               or (self.max_weight is not None and self._weight > self.max_weight)):
                _, (_, ow) = self._d.popitem(last=False)
                self._weight -= ow

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self._weight = 0

    def __len__(self) -> int:
        return len(self._d)

    @property
    def weight(self) -> int:
        return self._weight
