"""Command-line start-up, end to end (issue 17 item 4): every round is a new ``m1nd`` process, timed from spawn to
exit, as a shell runs it.

* ``m1nd --help``, ``m1nd --version`` and bash completion of the command names (target < 150 ms each): they read
  the command table in :mod:`m1nd.cli.app` and import no command module;
* ``m1nd activate`` on a persisted graph (target < 400 ms on the whole standard library): interpreter start, imports,
  the memory-mapped graph cache, one query, exit.

Corpus for ``activate``: the stdlib's ``json``, ``email``, ``http`` and ``asyncio`` packages copied into a temporary
directory; with ``M1ND_BENCH_FULL=1`` the whole standard library. The figures are reported by pytest-benchmark and
never asserted. Measure on a regular install (``pip install .`` or the wheel): an editable install adds its rebuild
check to every process that imports the native core.

Run: ``pytest bench/test_cli_startup.py --benchmark-only``
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from corpus import SERVING, ingest_stdlib
from m1nd import __version__

ROUNDS = 15


def _m1nd() -> list[str]:
    """The installed console script beside this interpreter (what a user's shell runs), else ``python -m m1nd``."""
    bindir = Path(sys.executable).parent
    for name in ("m1nd", "m1nd.exe"):
        if (bindir / name).is_file():
            return [str(bindir / name)]
    return [sys.executable, "-m", "m1nd"]


def _run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_m1nd(), *argv], capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    out = {**os.environ, "M1ND_HOME": str(tmp_path_factory.mktemp("cli-home"))}
    out.pop("M1ND_LOG_LEVEL", None)
    return out


COMMANDS: dict[str, tuple[list[str], dict[str, str], str]] = {
    "help": (["--help"], {}, "Commands:"),
    "version": (["--version"], {}, f"m1nd, version {__version__}"),
    "complete": ([], {"_M1ND_COMPLETE": "bash_complete", "COMP_WORDS": "m1nd a", "COMP_CWORD": "1"},
                 "plain,activate"),
}


@pytest.mark.parametrize("case", list(COMMANDS))
def test_cli_answers_without_loading_commands(benchmark, env, case: str) -> None:
    argv, extra, expected = COMMANDS[case]
    full_env = {**env, **extra}
    _run(argv, full_env)  # warm the OS page cache
    benchmark.extra_info["command"] = " ".join(["m1nd", *argv]) or f"completion {extra['COMP_WORDS']!r}"
    out = benchmark.pedantic(_run, args=(argv, full_env), rounds=ROUNDS, iterations=1)
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout
    assert "Traceback" not in out.stderr


@pytest.fixture(scope="module")
def persisted(tmp_path_factory, env) -> dict[str, Any]:
    """A graph ingested and persisted (rows and array cache) in the benchmark's home; the CLI finds it by root."""
    c = ingest_stdlib(tmp_path_factory, "cli", SERVING, home=Path(env["M1ND_HOME"]), embed="skip")
    c.ws.close()
    return {"root": c.root, "nodes": c.nodes}


def test_cli_activate_on_a_persisted_graph(benchmark, env, persisted) -> None:
    argv = ["--workspace", str(persisted["root"]), "activate", "parse json string", "--top-k", "10"]
    _run(argv, env)  # warm the OS page cache
    benchmark.extra_info["nodes"] = persisted["nodes"]
    out = benchmark.pedantic(_run, args=(argv, env), rounds=ROUNDS, iterations=1)
    assert out.returncode == 0, out.stderr
    assert "json" in out.stdout and "Seeds:" in out.stdout
