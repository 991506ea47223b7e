"""Semantic search on the memory server with pgvector (issue 18 item 2): the vector decoding in SQL, enabling the
extension on a server that gains it after vectors were written, a server that offers it but refuses to create it,
and no local mirror when the server searches. The search-agreement table with the SQLite store runs on this server
too (``tests/test_pg_memory.py::test_search_agrees_between_stores``)."""

from __future__ import annotations

import logging
import struct
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("psycopg")

from m1nd.memory import core
from m1nd.memory.semantic import vector_hook_for
from m1nd.memory.service import Filters, MemoryService

NOTES = [
    ("pattern", "Retry with exponential backoff", "Wrap network calls; double the delay after each failure."),
    ("gotcha", "Byte order marks break parsers", "Strip the BOM before handing a file to the tokenizer."),
    ("decision", "Connection pool size", "Eight connections per process; the server allows two hundred."),
]


def _service(url: str, home: Path) -> MemoryService:
    return MemoryService(url, vector_hook=vector_hook_for(home / "memory.db", url=url))


def _close(svc: MemoryService) -> None:
    svc.vector_hook.close()
    svc.close()


def _fill(svc: MemoryService) -> None:
    for cat, title, body in NOTES:
        svc.add({"category": cat, "title": title, "content": body}, agent="alice")


def _semantic(svc: MemoryService, query: str) -> list[str]:
    return [e["title"] for e in svc.search(query, Filters(), agent="alice", mode="semantic").entries]


def _searches_on_server(svc: MemoryService) -> bool:
    hook = svc.vector_hook
    with hook.db.read():
        return hook.server_searches(hook.db)


def test_float32_decoding_in_sql_is_exact(pgvector_url: str, tmp_path: Path) -> None:
    import psycopg

    svc = _service(pgvector_url, tmp_path)  # opening migrates: the decoder function exists afterwards
    _close(svc)
    rng = np.random.default_rng(7)
    specials = np.asarray([0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45, 1.17549435e-38, 3.4028235e38, -3.4028235e38,
                           0.1, 1 / 3], np.float32)
    values = np.concatenate([specials, rng.standard_normal(500).astype(np.float32),
                             (rng.standard_normal(100) * 1e-40).astype(np.float32)])
    blob = struct.pack(f"<{len(values)}f", *values.tolist())
    with psycopg.connect(pgvector_url) as conn:
        got = conn.execute("SELECT m1nd_f32le(%s)", (blob,)).fetchone()[0]
    assert np.asarray(got, np.float32).tobytes() == values.tobytes()


def test_server_searches_and_keeps_no_local_mirror(pgvector_url: str, tmp_path: Path) -> None:
    svc = _service(pgvector_url, tmp_path)
    try:
        _fill(svc)
        assert _searches_on_server(svc)
        assert _semantic(svc, "retrying failed network requests")[0] == "Retry with exponential backoff"
        assert svc.vector_hook.describe()["vector_search"] == "pgvector on the memory server"
        # the neighbours come from the HNSW index of the model's dimension, not a scan
        from memory_backends import rows

        dim = svc.vector_hook.dim
        names = {r[0] for r in rows(tmp_path, pgvector_url, "SELECT indexname FROM pg_indexes WHERE tablename = "
                                                            "'vectors'")}
        assert {f"vectors_hnsw_entry_{dim}", f"vectors_hnsw_chunk_{dim}"} <= names
        q = "[" + ",".join(["0.1"] * dim) + "]"
        import psycopg

        with psycopg.connect(pgvector_url) as conn:
            conn.execute("SET enable_seqscan = off")  # three rows: the planner would rather scan them
            plan = conn.execute(f"EXPLAIN SELECT rowid FROM vectors WHERE dim = {dim} AND owner_kind = 'entry' AND "
                                f"model_id = 'm' ORDER BY emb::vector({dim}) <=> '{q}'::vector({dim}) LIMIT 5"
                                ).fetchall()
        assert any(f"vectors_hnsw_entry_{dim}" in r[0] for r in plan), plan
    finally:
        _close(svc)
    assert not list(tmp_path.glob("*.usearch")), "the server searches: no local index should be written"


def test_a_server_that_gains_pgvector_backfills_existing_vectors(pgvector_url: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # first as on a server without the extension: vectors only as bytes, search on the local mirror
    with monkeypatch.context() as m:
        m.setattr(core, "enable_pgvector", lambda pg: False)
        svc = _service(pgvector_url, tmp_path / "before")
        try:
            _fill(svc)
            assert not _searches_on_server(svc)
            before = _semantic(svc, "parsing a file that starts with a BOM")
        finally:
            _close(svc)
    svc = _service(pgvector_url, tmp_path / "after")  # the next open enables it and fills emb from vec
    try:
        assert _searches_on_server(svc)
        assert _semantic(svc, "parsing a file that starts with a BOM") == before
        from memory_backends import rows

        assert rows(tmp_path, pgvector_url, "SELECT count(*) FROM vectors WHERE emb IS NULL")[0][0] == 0
        dim = svc.vector_hook.dim
        assert rows(tmp_path, pgvector_url, "SELECT count(*) FROM pg_indexes WHERE indexname = "
                    f"'vectors_hnsw_entry_{dim}'")[0][0] == 1
        assert rows(tmp_path, pgvector_url, "SELECT count(*) FROM vectors")[0][0] >= len(NOTES)
    finally:
        _close(svc)


def test_pgvector_offered_but_not_creatable_keeps_the_mirror(pgvector_server, tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    import psycopg

    admin = pgvector_server.url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS v_plain WITH (FORCE)")
        conn.execute("DROP ROLE IF EXISTS m1nd_plain")
        conn.execute("CREATE ROLE m1nd_plain LOGIN")
        conn.execute("CREATE DATABASE v_plain OWNER m1nd_plain")
    url = f"postgresql://m1nd_plain@127.0.0.1:{pgvector_server.port}/v_plain"
    try:
        with caplog.at_level(logging.WARNING, logger="m1nd.memory.service"):
            svc = _service(url, tmp_path)
        try:
            assert any("could not be enabled" in r.getMessage() for r in caplog.records)
            _fill(svc)
            assert not _searches_on_server(svc)
            assert _semantic(svc, "how many database connections")[0] == "Connection pool size"
        finally:
            _close(svc)
    finally:
        pgvector_server.drop_database("v_plain")


def test_migrating_onto_pgvector_builds_the_nearest_neighbour_indexes(pgvector_url: str, tmp_path: Path) -> None:
    # the migration copies meta (the model) without an embedded write, which is what used to create the indexes:
    # a migrated memory then searched by a scan of every vector
    from memory_backends import rows

    from m1nd.memory.migration import migrate_to

    src = MemoryService(tmp_path / "src" / "memory.db", vector_hook=vector_hook_for(tmp_path / "src" / "memory.db"))
    try:
        _fill(src)
        want = _semantic(src, "retrying failed network requests")
        assert migrate_to(src, pgvector_url).verified
    finally:
        _close(src)
    svc = _service(pgvector_url, tmp_path / "dst")
    try:
        assert _searches_on_server(svc)
        dim = svc.vector_hook.dim
        names = {r[0] for r in rows(tmp_path, pgvector_url, "SELECT indexname FROM pg_indexes WHERE tablename = "
                                                            "'vectors'")}
        assert {f"vectors_hnsw_entry_{dim}", f"vectors_hnsw_chunk_{dim}"} <= names
        assert _semantic(svc, "retrying failed network requests") == want
        assert [e["title"] for e in svc.search("backoff", Filters(), agent="alice").entries] == [
            "Retry with exponential backoff"]
    finally:
        _close(svc)
