"""Shared benchmark fixtures. ``bench/`` runs with ``--benchmark-disable`` in CI as a correctness pass."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# Downloaded corpora (bench/corpora/<sdist>) carry their own test suites: never collect them.
collect_ignore_glob = ["corpora/*"]
