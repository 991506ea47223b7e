"""Ingest benchmark for the tags-query languages (issue 12 item 6): walk + read + extract + resolve of one real
corpus per language (C, C++, C#, Ruby, PHP, Kotlin), one round on one core.

Corpora are located like the coverage bench's (``M1ND_COVERAGE_CORPORA``, default ``/work/.mirror``; see
``extraction_coverage_report.py``); a language whose corpus is absent is skipped. With ``--benchmark-disable`` the
run is a correctness check: the language's files are read by its grammar, definitions, calls, imports and bases
come out, and a syntax error in a few files does not empty them.

Run: ``pytest bench/test_ingest_more_langs.py --benchmark-only -s`` (prints files per second and the phases).
"""

from __future__ import annotations

import extraction_coverage_report as report
import pytest
from m1nd.graph.schema import KINDS
from m1nd.ingest.pipeline import build_graph_parts

#: language -> (corpus, graph file languages counted)
CORPUS = {
    "c": ("redis/redis", ("c",)),
    "cpp": ("google/leveldb", ("cpp",)),
    "csharp": ("serilog/serilog", ("csharp",)),
    "ruby": ("heartcombo/devise", ("ruby",)),
    "php": ("thephpleague/commonmark", ("php",)),
    "kotlin": ("InsertKoinIO/koin", ("kotlin",)),
}


@pytest.mark.slow
@pytest.mark.parametrize("lang", sorted(CORPUS))
def test_ingest_corpus(lang: str, benchmark, capsys) -> None:
    repo, langs = CORPUS[lang]
    root = report.locate(repo)
    if root is None:
        pytest.skip(f"corpus {repo} not found (M1ND_COVERAGE_CORPORA: {report.corpus_dirs()})")
    out: dict = {}

    def run() -> None:
        out["result"] = build_graph_parts(root, workers=1, git_window_days=1)

    benchmark.pedantic(run, rounds=1, iterations=1, warmup_rounds=0)
    parts, _wr, _git, stats = out["result"]
    file_kind = KINDS["file"]
    files = {n.source_path for n in parts.nodes if n.kind == file_kind and n.lang in langs}
    defs = [n for n in parts.nodes if n.source_path in files and n.kind not in (file_kind, KINDS["dir"])]
    assert len(files) > 100, f"{repo}: only {len(files)} {lang} files"
    assert len(defs) > 5 * len(files) // 2, f"{repo}: {len(defs)} definitions in {len(files)} files"
    with_defs = {n.source_path for n in defs}
    assert len(with_defs) > 0.8 * len(files)
    rel = stats["edges_by_relation"]
    assert rel["calls"] > len(files) and rel["imports"] > len(files) // 10
    assert lang == "c" or rel["inherits"] > 10  # C has no inheritance
    errors = [p for p in stats["parse_errors"] if p in files]
    assert len(errors) < 0.5 * len(files)

    secs = {k: round(v, 3) for k, v in stats["seconds"].items()}
    benchmark.extra_info.update({"files": len(files), "definitions": len(defs), "seconds": secs,
                                 "parse_errors": len(errors)})
    with capsys.disabled():
        total = sum(secs.values())
        print(f"\n{lang} ({repo}): {len(files)} files, {len(defs)} definitions, {len(errors)} with syntax errors, "
              f"{len(files) / max(total, 1e-9):.0f} files/s; seconds {secs}; edges {rel}")
