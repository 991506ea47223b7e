"""Fixtures of the wake tests: a temporary home, the real ``m1nd`` CLI run in-process (CliRunner, so stdout is not a
terminal) or as a subprocess, and raw access to the database file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from testkit import MEMORY_ENV, MemoryCli


class Cli(MemoryCli):
    """``m1nd --home H [--agent A] memory …`` in-process (:class:`testkit.MemoryCli`), acting as ``alice``
    unless a call says otherwise, with the hashing embedder and no automatic anchors."""

    agent = "alice"
    base_env = {**MEMORY_ENV, "M1ND_RESONANCE_BASIS": None, "M1ND_SKIP_SCHEMA": None,
                "M1ND_WAKE_CHUNK_BYTES": None, "M1ND_EMBEDDER": "hashing", "M1ND_SKIP_WRITE_ANCHOR": "1"}

    def add(self, title: str, content: str = "", *, category: str = "bloom", resonance: int = 0,
            agent: str | None = "alice", extra: tuple[str, ...] = ()) -> str:
        r = self("add", "--category", category, "-t", title, "--content", content, "--resonance", str(resonance),
                 "--json", *extra, agent=agent)
        assert r.code == 0, r.err
        return r.json()["id"]


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
