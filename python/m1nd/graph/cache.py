"""On-disk cache of a loaded graph generation, so start-up skips rebuilding arrays and indexes.

One uncompressed ``graph.csr-<gen>.npz`` (spec graph.md §1) holds the CSR arrays, the node table and the query
indexes as flat arrays (strings packed as NUL-separated UTF-8), under prefixes ``csr/``, ``nodes/``, ``seeds/``,
``tri/`` and ``meta/``. No pickle: loading is a few large array reads plus string splits, and a stale or corrupt
file is simply rebuilt from ``graph.db``, the source of truth.
"""

from __future__ import annotations

import contextlib
import logging
import os
import zipfile
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)
FORMAT = 2


def path_for(workdir: Path, generation: int) -> Path:
    return workdir / f"graph.csr-{generation}.npz"


def save(workdir: Path, generation: int, groups: dict[str, dict[str, np.ndarray]]) -> None:
    flat = {f"{g}/{k}": v for g, arrays in groups.items() for k, v in arrays.items()}
    flat["meta/format"] = np.asarray([FORMAT])
    target = path_for(workdir, generation)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            np.savez(f, **flat)
        os.replace(tmp, target)
    except OSError as e:  # a cache that cannot be written is not an error
        log.warning("could not write graph cache in %s: %s", workdir, e)
        with contextlib.suppress(OSError):
            tmp.unlink()


def load(workdir: Path, generation: int) -> dict[str, dict[str, np.ndarray]] | None:
    target = path_for(workdir, generation)
    if not target.exists():
        return None
    try:
        with np.load(target) as z:
            groups: dict[str, dict[str, np.ndarray]] = {}
            for name in z.files:
                g, _, k = name.partition("/")
                groups.setdefault(g, {})[k] = z[name]
        if int(groups.get("meta", {}).get("format", [0])[0]) != FORMAT:
            return None
        return groups
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as e:
        log.warning("graph cache for generation %d unreadable (%s); rebuilding", generation, e)
        return None


def prune(workdir: Path, keep_generation: int) -> None:
    """Delete caches of other generations (after a successful load)."""
    keep = path_for(workdir, keep_generation).name
    for p in list(workdir.glob("graph.csr-*.npz")) + list(workdir.glob("graph.index-*.pkl")):
        if p.name != keep:
            with contextlib.suppress(OSError):
                p.unlink()
