"""Suite-wide fixtures (issue 16 item 8): the fake (hashing) embedder for every test not marked ``model``
(issue 14: a memory test loaded the real ONNX model by accident and took 15 s), the in-process CLI runner and
tool client of :mod:`testkit`, the two memory stores every memory suite runs on, and a PostgreSQL server for
those that need one. Tests that need another embedder set ``M1ND_EMBEDDER`` themselves; subprocesses inherit
the environment set here."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from memory_backends import STORES, store_param
from testkit import CliResult, ToolClient, open_workspace, run_cli


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


@pytest.fixture
def cli_runner() -> Callable[..., CliResult]:
    """``cli_runner(argv, input=None, env=None)``: ``m1nd ARGV`` in this process (:func:`testkit.run_cli`)."""
    return run_cli


@pytest.fixture
def tool_client() -> Callable[..., ToolClient]:
    """``tool_client(ws, agent="agent-1")``: in-process tool calls on a workspace
    (:class:`testkit.ToolClient`)."""
    return ToolClient


@pytest.fixture
def workspace_factory(tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """``make(key, home=None, transport="cli", **settings)``: workspaces for the repository (or key) ``key`` on
    ``home`` (default: the test's ``home``), all closed after the test."""
    made: list[Any] = []

    def make(key: Path, home: Path | None = None, transport: str = "cli", **settings: Any) -> Any:
        ws = open_workspace(home or tmp_path / "home", key, transport=transport, **settings)
        made.append(ws)
        return ws

    yield make
    for ws in made:
        ws.close()


@pytest.fixture(params=STORES)
def memory_store(request: pytest.FixtureRequest) -> str | None:
    """A test that asks for it runs on both memory stores: None (the memory.db file) or a fresh PostgreSQL
    database's address."""
    return store_param(request)


@pytest.fixture
def memory_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory_store: str | None) -> Iterator[Any]:
    """A workspace (MCP transport) whose memory is on :func:`memory_store`."""
    monkeypatch.delenv("M1ND_MEMORY_DB", raising=False)
    ws = open_workspace(tmp_path / "home", tmp_path, transport="mcp", busy_timeout_ms=5000,
                        memory_url=memory_store)
    yield ws
    ws.close()


@pytest.fixture
def memory_tools(memory_ws: Any) -> ToolClient:
    """Tool calls on :func:`memory_ws` as ``alice``."""
    return ToolClient(memory_ws, "alice")


def _server(pgvector: bool):
    from pg_cluster import start_or_skip

    cluster = start_or_skip(pgvector=pgvector)
    yield cluster
    cluster.close()


def _database(server, prefix: str):
    name = prefix + secrets.token_hex(6)
    yield server.new_database(name)
    server.drop_database(name)


@pytest.fixture(scope="session")
def pg_server():
    """One throwaway PostgreSQL server for the session (:mod:`pg_cluster`); skipped where none can start, except
    in CI."""
    yield from _server(pgvector=False)


@pytest.fixture
def pg_url(pg_server) -> str:
    """A fresh, empty database on the session's server; dropped afterwards."""
    yield from _database(pg_server, "t_")


@pytest.fixture(scope="session")
def pgvector_server():
    """A throwaway PostgreSQL server that offers pgvector (the pgserver wheel's binaries); skipped where pgserver
    is not installed, except in CI on the Pythons it has wheels for."""
    yield from _server(pgvector=True)


@pytest.fixture
def pgvector_url(pgvector_server) -> str:
    """A fresh, empty database on the pgvector server; dropped afterwards."""
    yield from _database(pgvector_server, "v_")
