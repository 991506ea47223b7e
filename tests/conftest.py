"""Suite-wide rules: every test uses the fake (hashing) embedder unless it is marked ``model`` (issue 14: a memory
test loaded the real ONNX model by accident and took 15 s). Tests that need another choice set ``M1ND_EMBEDDER``
themselves; subprocesses inherit the environment set here."""

from __future__ import annotations

import os
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
    """One throwaway PostgreSQL server for the session (:mod:`pg_cluster`). Skips where none can start, except in
    CI, where the store suites must run against both backends (issue 18 item 5)."""
    from pg_cluster import PgCluster, available

    ok, why = available()
    if not ok:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is required in CI: {why}")
        pytest.skip(why)
    cluster = PgCluster()
    yield cluster
    cluster.close()


@pytest.fixture
def pg_url(pg_server) -> str:
    """A fresh, empty database on the session's server; dropped afterwards."""
    import psycopg

    name = "t_" + secrets.token_hex(6)
    admin = pg_server.url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    yield admin.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
