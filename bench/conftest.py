"""Shared benchmark fixtures and marks. ``bench/`` runs with ``--benchmark-disable`` in CI as a correctness pass.

The ``heavy`` mark (issue 16 item 8) is set here, per module, on the benchmarks that take most of that pass: real
corpora (the whole standard library, the Django sdist, the ctags coverage corpora, git mirrors) or the embedding
model. ``pytest bench --benchmark-disable -m "not heavy"`` is the quick pass (the rest: ~2 minutes of the ~34 of the
whole pass, measured on the shared 2-core machine). CI runs the quick pass (``M1ND_CI_HEAVY=1`` adds the heavy tier);
``ci/bench.sh`` runs both.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# Downloaded corpora (bench/corpora/<sdist>) carry their own test suites: never collect them.
collect_ignore_glob = ["corpora/*"]

# module -> seconds of the correctness pass (--durations, one run on the loaded machine, 2026-12-01)
HEAVY = {
    "test_extraction_coverage.py": 728,
    "test_embeddings_bench.py": 334,
    "test_e2e_stdlib.py": 286,
    "test_e2e_sdist.py": 112,
    "test_ingest_extract.py": 91,
    "test_embed_memory_bench.py": 90,
    "test_watch_bench.py": 79,
    "test_ingest_more_langs.py": 54,
    "test_retrieval_quality.py": 54,
    "test_localization.py": 49,
    "test_receiver_types_stdlib.py": 37,
    "test_embed_throughput_bench.py": 19,
    "test_conceptual.py": 4,  # (its git mirrors were absent: minutes where they are present)
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    gone = sorted(name for name in HEAVY if not (here / name).exists())
    if gone:
        raise pytest.UsageError(f"bench/conftest.py HEAVY names modules that do not exist: {gone}")
    for item in items:
        if item.path.parent == here and item.path.name in HEAVY:
            item.add_marker(pytest.mark.heavy)
