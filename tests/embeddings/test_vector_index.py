"""usearch indexes: persistence, diff sync against rows, rebuild equals incremental adds, tombstones."""

from __future__ import annotations

import numpy as np
from m1nd.memory.vectors import VectorIndex, exact_top_k


def _data(n: int = 600, dim: int = 32, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, dim))
    x = centres[rng.integers(0, 20, n)] + 0.5 * rng.standard_normal((n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_rebuild_from_rows_equals_incremental_adds(tmp_path) -> None:
    x = _data()
    keys = np.arange(1, len(x) + 1, dtype=np.uint64)
    inc = VectorIndex(tmp_path / "a.usearch", model_id="m", dim=x.shape[1])
    for a in range(0, len(x), 50):
        inc.upsert(keys[a:a + 50], keys[a:a + 50].astype(np.int64), x[a:a + 50], generation=a)
    rebuilt = VectorIndex(tmp_path / "b.usearch", model_id="m", dim=x.shape[1])
    rebuilt.sync(7, lambda: (keys, keys.astype(np.int64)), lambda ks: x[ks.astype(np.int64) - 1])
    q = _data(100, seed=9)
    overlap = []
    for v in q:
        ka, sa = inc.search(v, 10)
        kb, sb = rebuilt.search(v, 10)
        assert ka.tolist() == kb.tolist()  # same top-10 on 100 queries
        np.testing.assert_allclose(sa, sb, atol=1e-6)
        ref, rs = exact_top_k(x, v, 10)
        overlap.append(len(set(ka.tolist()) & set((ref + 1).tolist())) / 10)
        np.testing.assert_allclose(sa, rs, atol=2e-3)  # f16 storage: similarities within rounding
    assert np.mean(overlap) >= 0.95


def test_persisted_index_reloads_and_syncs_only_the_difference(tmp_path) -> None:
    x = _data(200)
    keys = np.arange(1, 201, dtype=np.uint64)
    ix = VectorIndex(tmp_path / "i.usearch", model_id="m", dim=32)
    ix.sync(1, lambda: (keys, keys.astype(np.int64)), lambda ks: x[ks.astype(np.int64) - 1])
    ix.save()
    assert (tmp_path / "i.usearch.meta.json").exists() and (tmp_path / "i.usearch.keys.npy").exists()
    fetched: list[int] = []

    def fetch(ks: np.ndarray) -> np.ndarray:
        fetched.extend(ks.tolist())
        return x[ks.astype(np.int64) - 1]

    again = VectorIndex(tmp_path / "i.usearch", model_id="m", dim=32)
    assert again.sync(1, lambda: (keys, keys.astype(np.int64)), fetch) == {"added": 0, "removed": 0}
    assert len(again) == 200 and not fetched
    # generation moved: key 5 got new content (another tag), key 200 is gone, 201 is new
    keys2 = np.r_[keys[:-1], np.uint64(201)]
    tags2 = keys2.astype(np.int64).copy()
    tags2[4] = 999
    x2 = np.vstack([x, x[:1]])
    def fetch2(ks: np.ndarray) -> np.ndarray:
        fetched.extend(ks.tolist())
        return x2[ks.astype(np.int64) - 1]

    got = again.sync(2, lambda: (keys2, tags2), fetch2)
    assert got == {"added": 2, "removed": 2} and sorted(fetched) == [5, 201] and 200 not in again


def test_other_model_or_dimension_starts_empty(tmp_path) -> None:
    x = _data(50)
    keys = np.arange(1, 51, dtype=np.uint64)
    ix = VectorIndex(tmp_path / "i.usearch", model_id="m", dim=32)
    ix.upsert(keys, keys.astype(np.int64), x, generation=1)
    ix.save()
    assert len(VectorIndex(tmp_path / "i.usearch", model_id="other", dim=32)) == 0
    assert len(VectorIndex(tmp_path / "i.usearch", model_id="m", dim=32)) == 50
    (tmp_path / "i.usearch").write_bytes(b"garbage")
    assert len(VectorIndex(tmp_path / "i.usearch", model_id="m", dim=32)) == 0  # unreadable: rebuilt from rows


def test_zero_rows_are_not_indexed_and_replacing_a_key_keeps_one_vector(tmp_path) -> None:
    x = _data(10)
    ix = VectorIndex(tmp_path / "i.usearch", model_id="m", dim=32, persist=False)
    ix.upsert([1, 2], [1, 2], np.vstack([x[0], np.zeros(32, np.float32)]))
    assert len(ix) == 1 and 2 not in ix
    ix.upsert([1], [5], x[3:4])
    keys, sims = ix.search(x[3], 5)
    assert keys.tolist() == [1] and sims[0] > 0.99


def test_many_tombstones_trigger_a_rebuild(tmp_path) -> None:
    x = _data(100)
    keys = np.arange(1, 101, dtype=np.uint64)
    ix = VectorIndex(tmp_path / "i.usearch", model_id="m", dim=32, persist=False)
    ix.sync(1, lambda: (keys, keys.astype(np.int64)), lambda ks: x[ks.astype(np.int64) - 1])
    keep = keys[:50]
    ix.sync(2, lambda: (keep, keep.astype(np.int64)), lambda ks: x[ks.astype(np.int64) - 1])
    assert len(ix) == 50 and ix._removed == 0  # rebuilt instead of carrying 50 % tombstones


def test_removals_past_20_percent_compact_the_index(tmp_path) -> None:
    x = _data(600)
    keys = np.arange(1, 601, dtype=np.uint64)
    ix = VectorIndex(tmp_path / "i.usearch", model_id="m", dim=32, persist=False)
    ix.upsert(keys, keys.astype(np.int64), x)
    ix.remove(keys[:200])
    assert len(ix) == 400 and ix._removed == 0  # compacted from the live vectors
    k, s = ix.search(x[450], 1)
    assert k.tolist() == [451] and s[0] > 0.99


def test_a_persisted_index_opens_as_a_memory_map_and_copies_on_the_first_write(tmp_path) -> None:
    """Issue 13 (start-up): opening reads nothing but the key sidecar; searching a mapped index needs no key map;
    the first write works on an in-memory copy and the saved file stays readable throughout."""
    x = _data(300)
    keys = np.arange(1, 301, dtype=np.uint64)
    ix = VectorIndex(tmp_path / "m.usearch", model_id="m", dim=32)
    ix.upsert(keys, keys.astype(np.int64), x, generation=1)
    ix.save()
    want = [ix.search(v, 5)[0].tolist() for v in x[:10]]

    again = VectorIndex(tmp_path / "m.usearch", model_id="m", dim=32)
    assert len(again) == 300 and again._viewed and again._tag_map is None
    assert [again.search(v, 5)[0].tolist() for v in x[:10]] == want
    assert again._tag_map is None  # searching did not build the key map
    extra = _data(1, seed=5)
    again.upsert(np.asarray([999], np.uint64), np.asarray([999], np.int64), extra, generation=2)
    assert not again._viewed and len(again) == 301 and 999 in again and 1 in again
    assert again.search(extra[0], 1)[0].tolist() == [999]
    again.remove([1], generation=3)
    assert 1 not in again and len(again) == 300
    again.save()
    third = VectorIndex(tmp_path / "m.usearch", model_id="m", dim=32)
    assert len(third) == 300 and third.generation == 3 and third.search(extra[0], 1)[0].tolist() == [999]


def test_release_saves_and_searches_the_file_as_a_memory_map(tmp_path) -> None:
    x = _data(300)
    keys = np.arange(1, 301, dtype=np.uint64)
    ix = VectorIndex(tmp_path / "r.usearch", model_id="m", dim=32)
    ix.sync(5, lambda: (keys, keys.astype(np.int64)), lambda ks: x[ks.astype(np.int64) - 1])
    before = [ix.search(v, 10)[0].tolist() for v in x[:20]]
    assert not ix._viewed
    ix.release()
    assert ix._viewed and ix.generation == 5 and len(ix) == 300  # the in-memory copy is gone
    assert [ix.search(v, 10)[0].tolist() for v in x[:20]] == before
    # a later change copies it into memory again, and a release maps the new file
    ix.sync(6, lambda: (keys[:250], keys[:250].astype(np.int64)), lambda ks: x[ks.astype(np.int64) - 1])
    assert not ix._viewed and len(ix) == 250
    ix.release()
    assert ix._viewed and ix.generation == 6 and len(ix) == 250
