"""On-disk cache of a loaded graph generation, so start-up skips rebuilding arrays and indexes.

``graph.csr-<gen>.npz`` holds the CSR arrays (spec graph.md §1); ``graph.index-<gen>.pkl`` the node table and the
query indexes. Both are caches: deleting them only costs a rebuild from ``graph.db``. They live in the workspace
directory (mode 0700) written by this user only, which is why loading a pickle from there is acceptable.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


def paths(workdir: Path, generation: int) -> tuple[Path, Path]:
    return workdir / f"graph.csr-{generation}.npz", workdir / f"graph.index-{generation}.pkl"


def save(workdir: Path, generation: int, arrays: dict[str, np.ndarray], payload: dict[str, Any]) -> None:
    csr_path, idx_path = paths(workdir, generation)
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        tmp = csr_path.with_suffix(".tmp.npz")
        np.savez(tmp, **arrays)
        os.replace(tmp, csr_path)
        tmp2 = idx_path.with_suffix(".tmp")
        with open(tmp2, "wb") as f:
            pickle.dump(payload, f, protocol=5)
        os.replace(tmp2, idx_path)
    except OSError as e:  # a cache that cannot be written is not an error
        log.warning("could not write graph cache in %s: %s", workdir, e)


def load(workdir: Path, generation: int) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    csr_path, idx_path = paths(workdir, generation)
    if not (csr_path.exists() and idx_path.exists()):
        return None
    try:
        with np.load(csr_path) as z:
            arrays = {k: z[k] for k in z.files}
        with open(idx_path, "rb") as f:
            payload = pickle.load(f)
        return arrays, payload
    except (OSError, ValueError, pickle.UnpicklingError, EOFError, AttributeError) as e:
        log.warning("graph cache for generation %d unreadable (%s); rebuilding", generation, e)
        return None


def prune(workdir: Path, keep_generation: int) -> None:
    """Delete caches of other generations (after a successful load)."""
    keep = {p.name for p in paths(workdir, keep_generation)}
    for p in list(workdir.glob("graph.csr-*.npz")) + list(workdir.glob("graph.index-*.pkl")):
        if p.name not in keep:
            with contextlib.suppress(OSError):
                p.unlink()
