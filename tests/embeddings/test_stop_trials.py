"""Clean stops while code embedding runs (issue 13 item 3), with the real model and real processes.

A stop of ``m1nd serve`` used to abort with SIGABRT now and then ("terminate called without an active exception"):
the interpreter finalised while a thread was inside ONNX Runtime. The failure was intermittent, so each way of
stopping is tried ``M1ND_STOP_TRIALS`` times (default 10; the README's figures come from 50): close stdin, SIGTERM,
SIGINT, each at a random moment after the embedding worker has committed its first batch. Every trial must exit with
the clean code (the time to exit is reported on stderr, never asserted), leave no worker child behind, and keep
every vector committed before the stop; the
vectors keep growing from trial to trial (the work resumes where it stopped).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.model]

TRIALS = int(os.environ.get("M1ND_STOP_TRIALS", "10"))
PACKAGES = ("json", "email", "http", "logging", "urllib", "xml", "concurrent", "asyncio")  # ~120 files, ~4.5k nodes
CLEAN = {"eof": 0, "SIGTERM": 0, "SIGINT": 130}


def _env(home: Path, model_dir: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("M1ND_")}
    env.update(M1ND_HOME=str(home), M1ND_EMBEDDER="onnx", M1ND_TOOLS="all")
    if model_dir is not None:
        env["M1ND_EMBED_MODEL_DIR"] = str(model_dir)
    return env


def _make_corpus(root: Path, model_dir: Path | None = None) -> tuple[Path, Path, dict[str, str]]:
    from m1nd.memory import embeddings as E

    if E.default_spec() is None:
        pytest.skip("the default embedding model is not installed")
    repo, home = root / "repo", root / "home"
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for name in PACKAGES:
        shutil.copytree(stdlib / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", "test", "tests"))
    env = _env(home, model_dir)
    subprocess.run([sys.executable, "-m", "m1nd", "--workspace", str(repo), "ingest", str(repo), "--embed", "skip"],
                   env=env, check=True, capture_output=True, timeout=300)
    return repo, home, env


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    return _make_corpus(tmp_path_factory.mktemp("stops"))


def user_model_folder(dest: Path) -> Path:
    """A user model folder (embeddings.md §4) made offline from the installed int8 MiniLM: copies of its ONNX file
    and tokenizer, laid out like a BGE download, with CLS pooling and a query prefix."""
    import json

    from m1nd.memory import embeddings as E

    spec = E.default_spec()
    dest.mkdir(parents=True)
    shutil.copyfile(spec.model_path, dest / "model.onnx")
    shutil.copyfile(spec.tokenizer_path, dest / "tokenizer.json")
    (dest / "m1nd-embed.json").write_text(json.dumps({
        "model_id": "minilm-by-folder", "pooling": "cls", "query_prefix": "Represent this sentence for searching "
        "relevant passages: ", "sim_floor": 0.45, "sim_ceiling": 0.85}), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def folder_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("stops-folder")
    return _make_corpus(root, user_model_folder(root / "model"))


def _graph_db(home: Path) -> Path:
    (db,) = list((home / "workspaces").glob("*/graph.db"))
    return db


def _vectors(db: Path) -> int:
    con = sqlite3.connect(db, timeout=30)
    try:
        return con.execute("SELECT COUNT(*) FROM node_vectors").fetchone()[0]
    finally:
        con.close()


def _missing(db: Path) -> int:
    con = sqlite3.connect(db, timeout=30)
    try:
        nodes = con.execute("SELECT COUNT(*) FROM nodes").fetchone()[0]
        return nodes - con.execute("SELECT COUNT(*) FROM node_vectors").fetchone()[0]
    finally:
        con.close()


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except OSError:
        return False


def _trial(repo: Path, home: Path, env: dict[str, str], how: str, rng: random.Random) -> tuple[int, float, int, int]:
    """One stop: returns (exit code, seconds from the stop to the exit, vectors before, vectors after)."""
    db = _graph_db(home)
    if _missing(db) < 600:  # keep enough work for the worker to be busy when the stop arrives
        con = sqlite3.connect(db, timeout=30)
        con.execute("DELETE FROM node_vectors")
        con.commit()
        con.close()
    start = _vectors(db)
    proc = subprocess.Popen([sys.executable, "-m", "m1nd", "--workspace", str(repo), "serve"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while _vectors(db) <= start:  # the worker has committed a batch: it is embedding now
            assert proc.poll() is None, proc.stderr.read().decode(errors="replace")
            assert time.monotonic() < deadline, "the embedding worker committed nothing in 120 s"
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 1.0))  # anywhere inside a batch
        workers = _children(proc.pid)
        before = _vectors(db)
        t0 = time.monotonic()
        if how == "eof":
            proc.stdin.close()
        else:
            proc.send_signal(getattr(signal, how))
        rc = proc.wait(60)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode(errors="replace")
    assert "terminate called" not in err and rc == CLEAN[how], f"{how}: exit {rc}\n{err[-2000:]}"
    for w in workers:  # the worker child ends with the server
        end = time.monotonic() + 10  # a liveness guard, not a timing figure (those go to stderr and the README)
        while _alive(w) and time.monotonic() < end:
            time.sleep(0.02)
        assert not _alive(w), f"embedding worker {w} outlived the server"
    return rc, took, before, _vectors(db)


@pytest.mark.parametrize("how", ["eof", "SIGTERM", "SIGINT"])
def test_stops_while_embedding_are_clean_fast_and_keep_vectors(corpus, how: str) -> None:
    _trials(corpus, how, TRIALS)


@pytest.mark.parametrize("how", ["eof", "SIGTERM", "SIGINT"])
def test_stops_with_a_user_model_folder(folder_corpus, how: str) -> None:
    """Issue 13 item 7: a model chosen by ``M1ND_EMBED_MODEL_DIR`` is embedded by the worker child too (its vectors
    carry the folder's model id) and stops as cleanly."""
    _repo, home, _env = folder_corpus
    _trials(folder_corpus, how, max(3, TRIALS // 3))
    con = sqlite3.connect(_graph_db(home), timeout=30)
    ids = {m for (m,) in con.execute("SELECT DISTINCT model_id FROM node_vectors")}
    con.close()
    assert ids == {"minilm-by-folder"}


def _trials(corpus: tuple[Path, Path, dict[str, str]], how: str, trials: int) -> None:
    repo, home, env = corpus
    rng = random.Random(13)
    times = []
    for _ in range(trials):
        _rc, took, before, after = _trial(repo, home, env, how, rng)
        times.append(took)
        assert after >= before, f"{how}: vectors committed before the stop were lost ({before} -> {after})"
    times.sort()
    sys.stderr.write(f"\n{how}: {trials} trials, 0 aborts; exit after the stop: median {times[len(times) // 2]:.2f} s, "
                     f"max {times[-1]:.2f} s\n")
