"""Fixtures of the memory tests: a temporary home, the real CLI run in-process, and raw row access."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from m1nd.cli.app import run
from memory_backends import STORES, execute, rows, store_param


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


class Cli:
    """``m1nd --home H [--agent A] memory …`` in-process, capturing stdout and stderr separately."""

    def __init__(self, home: Path, url: str | None = None) -> None:
        self.home = home
        self.db_path = home / "memory.db"
        self.url = url  # the memory on a PostgreSQL server (M1ND_MEMORY_URL) instead of the file

    def __call__(self, *args: str, input: str | None = None, agent: str | None = None,
                 env: dict[str, str | None] | None = None) -> Result:
        argv = ["--home", str(self.home)] + (["--agent", agent] if agent else []) + ["memory", *args]
        runner = CliRunner()
        # No embedding model unless a test asks for one (embedding behaviour is tested in tests/embeddings).
        environ = {"M1ND_CURRENT_AGENT": None, "M1ND_MEMORY_DB": None, "M1ND_RESONANCE_BASIS": None,
                   "M1ND_SKIP_SCHEMA": None, "M1ND_EMBEDDER": "none", "M1ND_MEMORY_URL": self.url}
        environ.update(env or {})
        with runner.isolation(input=input, env=environ) as (out, err, _):
            try:
                code = run(argv)
            except SystemExit as e:  # pragma: no cover - run() turns exits into codes
                code = int(e.code or 0)
        return Result(code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8"))

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return rows(self.db_path, self.url, sql, params)

    def execute(self, sql: str, params: tuple = ()) -> None:
        execute(self.db_path, self.url, sql, params)

    def scalar(self, sql: str, params: tuple = ()) -> Any:
        return self.rows(sql, params)[0][0]

    def add(self, *args: str, agent: str | None = "alice") -> str:
        """Add an entry and return its id (via --json)."""
        r = self("add", *args, "--json", agent=agent)
        assert r.code == 0, r.err
        return r.json()["id"]


@pytest.fixture(params=STORES)
def memory_store(request: pytest.FixtureRequest) -> str | None:
    """Each memory test runs on both stores: None (the memory.db file) or a fresh PostgreSQL database's address."""
    return store_param(request)


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
