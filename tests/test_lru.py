"""m1nd.lru.LRU: recency order, entry and weight bounds, thread safety of concurrent puts."""

import threading

from m1nd.lru import LRU


def test_evicts_least_recently_used_by_count() -> None:
    c: LRU[str, int] = LRU(2)
    c.put("a", 1)
    c.put("b", 2)
    assert c.get("a") == 1  # a is now the most recent
    c.put("c", 3)
    assert c.get("b") is None and c.get("a") == 1 and c.get("c") == 3 and len(c) == 2


def test_weight_budget_and_oversized_values() -> None:
    c: LRU[str, list[int]] = LRU(100, max_weight=10, weigh=len)
    c.put("a", [0] * 4)
    c.put("b", [0] * 4)
    c.put("c", [0] * 4)  # 12 > 10: the oldest goes
    assert c.get("a") is None and c.weight == 8
    c.put("huge", [0] * 11)  # bigger than the whole budget: not cached, nothing evicted
    assert c.get("huge") is None and len(c) == 2
    c.put("b", [0])  # replacing a key re-weighs it
    assert c.weight == 5
    c.clear()
    assert len(c) == 0 and c.weight == 0


def test_concurrent_puts_keep_the_bounds() -> None:
    c: LRU[int, int] = LRU(50, max_weight=200, weigh=lambda v: v)

    def work(base: int) -> None:
        for i in range(2000):
            c.put(base * 10_000 + i, 1 + i % 7)
            c.get(base * 10_000 + i // 2)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(c) <= 50 and c.weight <= 200
