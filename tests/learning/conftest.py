"""Fixtures of the learning tests: a small ingested Python repository and workspaces on a temporary home.

Ingesting costs ~0.5 s, so one template home is ingested per session and copied for every test; tests that change
the repository itself (re-ingest after deleting files) build their own with ``fresh_workspace``.
``tests/learning`` is a package so this conftest is ``learning.conftest`` and never shadows another directory's
``conftest`` module (some test directories import helpers with ``from conftest import …``).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from m1nd.workspace import Workspace

from .support import call, open_workspace, write_repo

STORES = ["sqlite", "postgresql"]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("M1ND_EMBEDDER", "hashing")
    monkeypatch.delenv("M1ND_COACTIVATION_RATE", raising=False)
    monkeypatch.delenv("M1ND_WEIGHT_RELAXATION_DAYS", raising=False)


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("learning-template")
    repo = write_repo(base / "repo")
    home = base / "home"
    ws = open_workspace(home, repo)
    call(ws, "ingest", path=str(repo))
    ws.close()
    return home, repo


@pytest.fixture(params=STORES)
def learning_store(request: pytest.FixtureRequest) -> str | None:
    """Each learning and trail test runs on both shared stores: None (``graph.db``) or a fresh PostgreSQL
    database's address (issue 18); the ingested graph itself is local either way."""
    if request.param == "sqlite":
        return None
    return request.getfixturevalue("pg_url")


@pytest.fixture
def home_repo(template: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A private copy of the ingested home (same repo path, so the same workspace key)."""
    home = tmp_path / "home"
    shutil.copytree(template[0], home)
    return home, template[1]


@pytest.fixture
def workspaces(home_repo: tuple[Path, Path], learning_store: str | None) -> Iterator[Callable[..., Workspace]]:
    """Factory of workspaces on the test's home (each one stands for a process); all closed at the end."""
    opened: list[Workspace] = []

    def make(transport: str = "cli") -> Workspace:
        ws = open_workspace(*home_repo, transport=transport, memory_url=learning_store)
        opened.append(ws)
        return ws

    yield make
    for ws in opened:
        ws.close()


@pytest.fixture
def ws(workspaces: Callable[..., Workspace]) -> Workspace:
    return workspaces()


@pytest.fixture
def fresh_workspace(tmp_path: Path, learning_store: str | None) -> Iterator[Callable[[], tuple[Workspace, Path]]]:
    """A repository of its own (the test may edit and re-ingest it) and a workspace on it."""
    opened: list[Workspace] = []

    def make() -> tuple[Workspace, Path]:
        repo = write_repo(tmp_path / "own-repo")
        ws = open_workspace(tmp_path / "own-home", repo, memory_url=learning_store)
        opened.append(ws)
        call(ws, "ingest", path=str(repo))
        return ws, repo

    yield make
    for w in opened:
        w.close()
