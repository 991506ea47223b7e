"""Fixtures of the memory tests: a temporary home, the real CLI run in-process, and raw row access."""

from __future__ import annotations

from pathlib import Path

import pytest
from testkit import MEMORY_ENV, MemoryCli


class Cli(MemoryCli):
    """``m1nd --home H [--agent A] memory …`` in-process (:class:`testkit.MemoryCli`); no acting agent unless
    a call names one, and no embedding model unless a test asks for one (embedding behaviour is tested in
    tests/embeddings)."""

    base_env = {**MEMORY_ENV, "M1ND_RESONANCE_BASIS": None, "M1ND_SKIP_SCHEMA": None, "M1ND_EMBEDDER": "none"}

    def add(self, *args: str, agent: str | None = "alice") -> str:
        """Add an entry and return its id (via --json)."""
        r = self("add", *args, "--json", agent=agent)
        assert r.code == 0, r.err
        return r.json()["id"]


@pytest.fixture
def cli(tmp_path: Path, memory_store: str | None) -> Cli:
    return Cli(tmp_path / "home", memory_store)


@pytest.fixture
def make_cli():
    """The :class:`Cli` class, for tests that need a second home."""
    return Cli


@pytest.fixture
def service(tmp_path: Path, memory_store: str | None):
    from m1nd.memory.service import MemoryService

    svc = MemoryService(memory_store or tmp_path / "svc" / "memory.db")
    yield svc
    svc.close()
