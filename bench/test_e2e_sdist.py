"""End to end on a large PyPI sdist the project did not write (Django 5.1.4: ~2,800 files of Python, JS, CSS,
HTML templates and docs). The sdist is fetched once with ``pip download --no-binary :all:`` into ``bench/corpora/``
(or ``$M1ND_CORPORA``) and reused; without network access the module is skipped with the reason."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from corpus import bench_activate, workspace
from m1nd.tools.registry import call_tool

NAME, VERSION = "django", "5.1.4"
CORPORA = Path(os.environ.get("M1ND_CORPORA", Path(__file__).parent / "corpora"))
QUERIES = ["queryset filter lookup", "csrf middleware token check", "template variable resolution",
           "database migration autodetector", "admin changelist view", "password hashing"]


def fetch_sdist() -> Path:
    root = CORPORA / f"{NAME}-{VERSION}"
    if root.is_dir():
        return root
    CORPORA.mkdir(parents=True, exist_ok=True)
    out = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-q",
                          "-d", str(CORPORA), f"{NAME}=={VERSION}"], capture_output=True, text=True, timeout=900)
    archives = sorted(CORPORA.glob(f"[Dd]jango-{VERSION}.tar.gz"))
    if out.returncode != 0 or not archives:
        pytest.skip(f"cannot download the {NAME} {VERSION} sdist: {out.stderr.strip()[-300:]}")
    with tarfile.open(archives[0]) as tf:
        tf.extractall(CORPORA, filter="data")
    extracted = CORPORA / archives[0].name[: -len(".tar.gz")]
    extracted.rename(root)
    return root


@pytest.fixture(scope="module")
def sdist_root() -> Path:
    return fetch_sdist()


@pytest.fixture(scope="module")
def sdist_ws(sdist_root, tmp_path_factory):
    ws = workspace(tmp_path_factory.mktemp("home"), sdist_root)
    r = call_tool(ws, "ingest", {"agent_id": "b", "path": str(sdist_root)})
    assert not r.is_error, r.structured
    yield ws, r.structured
    ws.close()


def test_ingest_sdist(benchmark, sdist_root, tmp_path) -> None:
    ws = workspace(tmp_path / "home", sdist_root)

    def run() -> dict:
        r = call_tool(ws, "ingest", {"agent_id": "b", "path": str(sdist_root)})
        assert not r.is_error, r.structured
        return r.structured

    report = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update({"files": report["files_scanned"], "nodes": report["nodes"]["total"],
                                 "edges": report["edges"]["total"], "languages": report["languages"]})
    assert report["files_scanned"] > 1500 and report["languages"].get("python", 0) > 500
    ws.close()


@pytest.mark.parametrize("new_words", [False, True], ids=["repeated-words", "new-words"])
def test_activate_latency_sdist(benchmark, sdist_ws, new_words: bool) -> None:
    ws, _ = sdist_ws
    assert bench_activate(benchmark, ws, QUERIES, new_words=new_words).activated


def test_sdist_answers_are_on_topic(sdist_ws) -> None:
    ws, _ = sdist_ws
    r = ws.graph.activate("q", "csrf middleware token check", top_k=10, learn=False)
    assert any("csrf" in a.source_path for a in r.activated[:5]), r.node_ids
