"""Watch latency (issue 15 item 4): from a file write to an ``activate`` result that shows the edit, on the Django
5.1.4 sdist (~2,800 files; fetched like ``test_e2e_sdist``, skipped without network). The tree is copied first:
the benchmark edits files. The watcher ingests through the workspace's CodeGraph, as ``m1nd serve --watch`` does
(the ingest runs in a child process for a tree this size, then the server loads the new generation)."""

from __future__ import annotations

import itertools
import shutil
import time

import pytest
from corpus import workspace
from m1nd.api import ActivationResult
from m1nd.watch import Watcher
from test_e2e_sdist import fetch_sdist

SETTLE_S = 300.0


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    src = fetch_sdist()
    root = tmp_path_factory.mktemp("watched") / "django"
    shutil.copytree(src, root, symlinks=True)
    ws = workspace(tmp_path_factory.mktemp("home"), root)
    ws.graph.ingest(str(root), embed="skip")
    w = Watcher(ws.settings, lambda path, **o: ws.graph.ingest(path, embed="skip", **o), catch_up=False,
                prime=ws.graph.prime_live_roots).start()  # as `m1nd serve --watch` starts it
    assert w.ready.wait(60)
    yield ws, root, w
    w.stop()
    ws.close()


def test_watch_latency_one_file_edit(benchmark, watched) -> None:
    ws, root, w = watched
    target = root / "django/utils/text.py"
    names = (f"watched_helper_{k}_quetzal" for k in itertools.count())
    state: dict[str, str] = {}

    def edit() -> None:
        end = time.monotonic() + SETTLE_S
        while not w.idle() and time.monotonic() < end:  # untimed: the previous round's batch is over
            time.sleep(0.05)
        state["name"] = name = next(names)
        with target.open("a", encoding="utf-8") as f:
            f.write(f"\n\ndef {name}(value):\n    return capfirst(value)\n")

    def until_seen() -> ActivationResult:
        name = state["name"]
        end = time.monotonic() + SETTLE_S
        while time.monotonic() < end:
            r = ws.graph.activate("bench", name, coactivation_ltp=False, learn=False)
            if any(a.node_id.endswith(f"fn::{name}") for a in r.activated[:5]):
                return r
            time.sleep(0.02)
        raise AssertionError(f"{name} never reached activate")

    r = benchmark.pedantic(until_seen, setup=edit, rounds=3, iterations=1)
    assert r.freshness["stale"] is False or r.freshness["pending_count"] >= 0
    benchmark.extra_info["files"] = ws.graph.store.file_counts()
