"""Real corpora for benchmarks: the running interpreter's standard library (without site-packages)."""

from __future__ import annotations

import os
import shutil
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STDLIB = Path(sysconfig.get_paths()["stdlib"])
STDLIB_EXCLUDE = ["site-packages/", "config-*/", "__pycache__/"]
SUBSET = ("json", "email", "http", "asyncio", "collections", "concurrent", "logging", "urllib", "xml", "unittest")
#: the corpus of the latency benchmarks (server, perspectives, traces and pictures, CLI start): ~2-3k nodes
SERVING = ("json", "email", "http", "asyncio")


def full() -> bool:
    return os.environ.get("M1ND_BENCH_FULL", "0") == "1"


def copy_subset(dest: Path, packages: tuple[str, ...] = SUBSET) -> Path:
    """Copy a few stdlib packages into ``dest`` (a plain directory, not a git repo)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in packages:
        src = STDLIB / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "test", "tests"))
        elif (STDLIB / f"{name}.py").exists():
            shutil.copy2(STDLIB / f"{name}.py", dest / f"{name}.py")
    return dest


def workspace(home: Path, key: Path, *, memory_url: str | None = None):  # noqa: ANN201
    from m1nd.config import Settings
    from m1nd.workspace import Workspace

    return Workspace(Settings(home=home, workspace_key=key, busy_timeout_ms=10000, memory_url=memory_url))


@dataclass
class Ingested:
    """A corpus ingested into a workspace of its own home; ``report`` is the ``ingest`` tool's answer."""

    home: Path
    root: Path
    ws: Any
    report: dict[str, Any]

    @property
    def nodes(self) -> int:
        return self.report["nodes"]["total"]

    @property
    def edges(self) -> int:
        return self.report["edges"]["total"]


def ingest_stdlib(tmp_path_factory: Any, name: str, packages: tuple[str, ...] = SERVING, *,
                  home: Path | None = None, **options: Any) -> Ingested:
    """``packages`` of the stdlib copied into a temporary directory (the whole standard library with
    ``M1ND_BENCH_FULL=1``, read in place) and ingested through the ``ingest`` tool into ``home`` (default: a
    new temporary one). The workspace stays open: the caller closes it. ``options`` go to the tool."""
    from m1nd.tools.registry import call_tool

    home = home if home is not None else tmp_path_factory.mktemp(f"{name}-home")
    root = STDLIB if full() else copy_subset(tmp_path_factory.mktemp(f"{name}-corpus"), packages)
    ws = workspace(home, root)
    args: dict[str, Any] = {"agent_id": "bench", "path": str(root), **options}
    if full():
        args["exclude"] = STDLIB_EXCLUDE
    r = call_tool(ws, "ingest", args)
    assert not r.is_error, r.structured
    return Ingested(home, root, ws, r.structured)


def bench_activate(benchmark, ws, queries: list[str], *, new_words: bool, cycles: int = 3) -> Any:  # noqa: ANN001
    """Time ``activate`` over ``queries`` (each round the next query), after one untimed call that builds the
    generation's lazy state. ``new_words``: every per-query cache is dropped before each round (untimed), so each
    call costs what words never seen before do; otherwise the queries repeat, as an agent's vocabulary does."""
    ws.graph.activate("bench", queries[0], coactivation_ltp=False)
    g = ws.graph.graph()
    state = {"i": 0}

    def setup() -> None:
        if new_words:
            g.drop_query_caches()

    def one() -> Any:  # an ActivationResult
        q = queries[state["i"] % len(queries)]
        state["i"] += 1
        return ws.graph.activate("bench", q, coactivation_ltp=False)

    benchmark.extra_info["queries"] = len(queries)
    benchmark.extra_info["new_words"] = new_words
    return benchmark.pedantic(one, setup=setup, rounds=cycles * len(queries), iterations=1)


def file_quality(ws, cases, root: Path, *, top_k: int = 60, dimensions: list[str] | None = None  # noqa: ANN001
                 ) -> tuple[float, float, list[tuple[str, int | None]]]:
    """Recall@10 and MRR of ``activate`` over ``cases`` ([(query, expected relpaths)]) by the files of its ranked
    nodes in first-occurrence order; expected files missing under ``root`` are dropped (a case with none is
    skipped). Returns (recall@10, MRR, [(query, rank of the first expected file or None)])."""
    recalls, rr, ranks = [], [], []
    for query, expected in cases:
        expected = [e for e in expected if (root / e).exists()]
        if not expected:
            continue
        r = ws.graph.activate("quality", query, top_k=top_k, dimensions=dimensions, coactivation_ltp=False,
                              learn=False)
        files: list[str] = []
        for a in r.activated:
            if a.source_path not in files:
                files.append(a.source_path)
        recalls.append(len([e for e in expected if e in files[:10]]) / len(expected))
        first = next((k + 1 for k, f in enumerate(files) if f in expected), None)
        rr.append(1.0 / first if first else 0.0)
        ranks.append((query, first))
    return sum(recalls) / len(recalls), sum(rr) / len(rr), ranks
