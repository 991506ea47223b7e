"""Suite-wide rules: every test uses the fake (hashing) embedder unless it is marked ``model`` (issue 14: a memory
test loaded the real ONNX model by accident and took 15 s). Tests that need another choice set ``M1ND_EMBEDDER``
themselves; subprocesses inherit the environment set here."""

from __future__ import annotations

import secrets

import pytest


@pytest.fixture(autouse=True)
def _fake_embedder_unless_model(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    if request.node.get_closest_marker("model") is not None:
        yield
        return
    from m1nd.memory import embeddings as E

    monkeypatch.setenv("M1ND_EMBEDDER", "hashing")
    monkeypatch.delenv("M1ND_EMBED_MODEL_DIR", raising=False)
    E.reset_embedder()
    yield
    E.reset_embedder()


@pytest.fixture(scope="session")
def pg_server():
    """One throwaway PostgreSQL server for the session (:mod:`pg_cluster`); skipped where none can start, except
    in CI."""
    from pg_cluster import start_or_skip

    cluster = start_or_skip()
    yield cluster
    cluster.close()


@pytest.fixture
def pg_url(pg_server) -> str:
    """A fresh, empty database on the session's server; dropped afterwards."""
    name = "t_" + secrets.token_hex(6)
    yield pg_server.new_database(name)
    pg_server.drop_database(name)


@pytest.fixture(scope="session")
def pgvector_server():
    """A throwaway PostgreSQL server that offers pgvector (the pgserver wheel's binaries); skipped where pgserver
    is not installed, except in CI on the Pythons it has wheels for."""
    from pg_cluster import start_or_skip

    cluster = start_or_skip(pgvector=True)
    yield cluster
    cluster.close()


@pytest.fixture
def pgvector_url(pgvector_server) -> str:
    """A fresh, empty database on the pgvector server; dropped afterwards."""
    name = "v_" + secrets.token_hex(6)
    yield pgvector_server.new_database(name)
    pgvector_server.drop_database(name)
