"""Fixtures of the wake tests: a temporary home, the real ``m1nd`` CLI run in-process (CliRunner, so stdout is not a
terminal) or as a subprocess, and raw access to the database file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from m1nd.cli.app import run
from memory_backends import STORES, execute, rows, store_param

BASE_ENV = {"M1ND_CURRENT_AGENT": None, "M1ND_MEMORY_DB": None, "M1ND_RESONANCE_BASIS": None,
            "M1ND_SKIP_SCHEMA": None, "M1ND_WAKE_CHUNK_BYTES": None, "M1ND_EMBEDDER": "hashing",
            "M1ND_SKIP_WRITE_ANCHOR": "1"}


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def err_json(self) -> Any:
        return json.loads(self.err)


class Cli:
    """``m1nd --home H [--agent A] memory …`` in-process, capturing stdout and stderr separately."""

    def __init__(self, home: Path, url: str | None = None) -> None:
        self.home = home
        self.db_path = home / "memory.db"
        self.url = url  # the memory on a PostgreSQL server (M1ND_MEMORY_URL) instead of the file
        self.env: dict[str, str | None] = {"M1ND_MEMORY_URL": url}

    def __call__(self, *args: str, input: str | None = None, agent: str | None = "alice",
                 env: dict[str, str | None] | None = None) -> Result:
        argv = ["--home", str(self.home)] + (["--agent", agent] if agent else []) + ["memory", *args]
        environ = dict(BASE_ENV)
        environ.update(self.env)
        environ.update(env or {})
        with CliRunner().isolation(input=input, env=environ) as (out, err, _):
            try:
                code = run(argv)
            except SystemExit as e:  # pragma: no cover - run() turns exits into codes
                code = int(e.code or 0)
        return Result(code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8"))

    def ok(self, *args: str, **kw: Any) -> Result:
        r = self(*args, **kw)
        assert r.code == 0, (args, r.err)
        return r

    def add(self, title: str, content: str = "", *, category: str = "bloom", resonance: int = 0,
            agent: str | None = "alice", extra: tuple[str, ...] = ()) -> str:
        r = self("add", "--category", category, "-t", title, "--content", content, "--resonance", str(resonance),
                 "--json", *extra, agent=agent)
        assert r.code == 0, r.err
        return r.json()["id"]

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return rows(self.db_path, self.url, sql, params)

    def scalar(self, sql: str, params: tuple = ()) -> Any:
        return self.rows(sql, params)[0][0]

    def execute(self, sql: str, params: tuple = ()) -> None:
        execute(self.db_path, self.url, sql, params)


@pytest.fixture(params=STORES)
def memory_store(request: pytest.FixtureRequest) -> str | None:
    """Each wake test runs on both stores: None (the memory.db file) or a fresh PostgreSQL database's address."""
    return store_param(request)


@pytest.fixture
def cli(tmp_path: Path, memory_store: str | None) -> Cli:
    return Cli(tmp_path / "home", memory_store)


@pytest.fixture
def make_cli():
    return Cli


def subprocess_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("M1ND_")}
    env.update({"M1ND_HOME": str(home), "M1ND_EMBEDDER": "hashing", "SKBUILD_EDITABLE_VERBOSE": "0"})
    env.update(extra)
    return env


def run_m1nd(home: Path, *args: str, agent: str | None = "alice", **popen: Any) -> subprocess.CompletedProcess:
    """The real ``m1nd`` entry point in a child process (its stdout is whatever ``popen`` says: a pipe by default)."""
    argv = [sys.executable, "-m", "m1nd"] + (["--agent", agent] if agent else []) + ["memory", *args]
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(argv, env=subprocess_env(home), timeout=120, check=False, **popen)
