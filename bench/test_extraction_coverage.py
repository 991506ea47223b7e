"""Extraction coverage against Universal Ctags, per language (issue 12): at least 98 % of ctags' definitions are
graph nodes with the right file, kind and line. See ``extraction_coverage_report.py`` for the method, the kind
mapping and where corpora come from; skipped when ctags or every corpus of a language is absent.

Run: ``pytest bench/test_extraction_coverage.py -s`` (prints each language's row and its first misses), or the
standalone ``python bench/extraction_coverage_report.py`` for the whole table.
"""

from __future__ import annotations

import extraction_coverage_report as report
import pytest
from extraction_coverage_report import CORPORA, format_table, measure

TARGET = 0.98


@pytest.fixture(scope="module")
def ctags() -> str:
    exe = report.ctags_path()
    if exe is None:
        pytest.skip("Universal Ctags with JSON output is not installed (apt-get install universal-ctags)")
    return exe


@pytest.mark.slow
@pytest.mark.parametrize("lang", sorted(CORPORA))
def test_coverage_against_ctags(lang: str, ctags: str, capsys) -> None:
    res = measure(lang, ctags)
    if not res.corpora:
        pytest.skip(f"no {lang} corpus found (M1ND_COVERAGE_CORPORA: {report.corpus_dirs()})")
    with capsys.disabled():
        print("\n" + format_table([res]))
        for repo, t in res.misses[:15]:
            print(f"  miss: {repo}  {t.path}:{t.line}  {t.kind} {t.name}")
    assert res.tags > 0, f"ctags found no {lang} definitions in {res.corpora}"
    assert res.share >= TARGET, f"{lang}: {100 * res.share:.1f} % of ctags definitions are nodes (< 98 %)"
