"""On-disk cache of a loaded graph generation, so start-up skips rebuilding arrays and indexes.

``graph.cache-<gen>.bin`` holds the CSR arrays, the node table and the query indexes as flat arrays (strings packed
as NUL-separated UTF-8) under group prefixes ``csr/``, ``nodes/``, ``seeds/``, ``tri/``, ``lex/``, ``meta/``. Layout: an
8-byte magic, an 8-byte little-endian header length, a JSON header listing ``(name, dtype, shape, offset)``, then
each array's raw bytes at a 64-byte aligned offset.

Why not ``.npz`` (which the spec names): a zip member is CRC-checked and copied on every read, while this file is
memory-mapped and every array is a zero-copy read-only view of the page cache — loading costs a JSON parse, and
several server processes on one workspace share the same physical pages. ``graph.db`` stays the source of truth:
a stale, truncated or foreign file is ignored and rebuilt.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
import os
import struct
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)
MAGIC = b"M1NDGC05"  # 05: the rank group holds the declaration mask
ALIGN = 64


def path_for(workdir: Path, generation: int) -> Path:
    return workdir / f"graph.cache-{generation}.bin"


def save(workdir: Path, generation: int, groups: dict[str, dict[str, np.ndarray]]) -> None:
    arrays = [(f"{g}/{k}", np.ascontiguousarray(v)) for g, d in groups.items() for k, v in d.items()]
    entries, offset = [], 0
    for name, a in arrays:
        entries.append({"name": name, "dtype": a.dtype.str, "shape": list(a.shape), "offset": offset})
        offset += -(-a.nbytes // ALIGN) * ALIGN
    header = json.dumps({"arrays": entries}).encode("utf-8")
    base = -(-(16 + len(header)) // ALIGN) * ALIGN
    target = path_for(workdir, generation)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(MAGIC + struct.pack("<Q", len(header)) + header)
            f.write(b"\0" * (base - 16 - len(header)))
            for (_, a), e in zip(arrays, entries):
                f.seek(base + e["offset"])
                f.write(a.tobytes(order="C"))
            f.truncate(base + offset)
        os.replace(tmp, target)
    except OSError as e:  # a cache that cannot be written is not an error
        log.warning("could not write graph cache in %s: %s", workdir, e)
        with contextlib.suppress(OSError):
            tmp.unlink()


def load(workdir: Path, generation: int) -> dict[str, dict[str, np.ndarray]] | None:
    target = path_for(workdir, generation)
    try:
        with open(target, "rb") as f:
            if f.read(8) != MAGIC:
                return None
            (hlen,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(hlen).decode("utf-8"))
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, struct.error) as e:
        log.warning("graph cache for generation %d unreadable (%s); rebuilding", generation, e)
        return None
    base = -(-(16 + hlen) // ALIGN) * ALIGN
    groups: dict[str, dict[str, np.ndarray]] = {}
    try:
        for e in header["arrays"]:
            dt = np.dtype(e["dtype"])
            count = int(np.prod(e["shape"])) if e["shape"] else 1
            a = np.frombuffer(mm, dtype=dt, count=count, offset=base + e["offset"]).reshape(e["shape"])
            g, _, k = e["name"].partition("/")
            groups.setdefault(g, {})[k] = a
    except (ValueError, KeyError, TypeError) as e:
        log.warning("graph cache for generation %d is damaged (%s); rebuilding", generation, e)
        return None
    return groups


def prune(workdir: Path, keep_generation: int) -> None:
    """Delete caches of other generations (after a successful load); mapped copies stay valid until unmapped."""
    keep = path_for(workdir, keep_generation).name
    for p in [*workdir.glob("graph.cache-*.bin"), *workdir.glob("graph.csr-*.npz"), *workdir.glob("graph.index-*.pkl")]:
        if p.name != keep:
            with contextlib.suppress(OSError):
                p.unlink()
