"""A new generation's text indexes from the previous generation's, when a watcher patched a few files (issue 15
item 4): the two indexes whose build is per-node Python work (:class:`~m1nd.graph.lexicon.TermIndex`,
:class:`~m1nd.graph.semantic.TrigramIndex`) keep the per-node pieces they were built from, so only the nodes of
the edited files (and any node whose text changed or that is new) are made again and the vectorised half runs
over the whole graph as a full build does. The result equals a full build of the new node table (tests compare
every array)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from m1nd.graph.lexicon import TermIndex, blob_terms
from m1nd.graph.model import Graph
from m1nd.graph.nodes import DIR, NodeTable
from m1nd.graph.semantic import TrigramIndex


def reusable(prev: Graph | None) -> bool:
    """Was ``prev`` built here, with the pieces a patched build starts from (not mapped from the cache)?"""
    return (prev is not None and prev.trigram.parts is not None and prev.lexicon is not None
            and prev.lexicon.parts is not None)


def node_changes(old: NodeTable, new: NodeTable, files: set[tuple[int, str]]) -> tuple[np.ndarray, np.ndarray]:
    """(old position -> new position or -1, sorted new positions to make again): new nodes and every node of the
    given (root id, relpath) files. Only a patch of those files wrote between the two generations, so every other
    node kept its label, qualified name, doc, kind and path (directories change only their dates)."""
    index = new.index
    old_to_new = np.fromiter((index.get(e, -1) for e in old.ext_id), np.int64, count=old.n)
    seen = np.zeros(new.n, bool)
    seen[old_to_new[old_to_new >= 0]] = True
    paths = {p for _r, p in files}
    roots = new.root_id
    redo = [j for j, p in enumerate(new.source_path) if p in paths and (int(roots[j]), p) in files]
    return old_to_new, np.union1d(np.flatnonzero(~seen), np.asarray(redo, np.int64)).astype(np.int64)


def node_terms_of(t: NodeTable, nodes: Iterable[int],
                  read: Callable[[set[tuple[int, str]]], Iterable[tuple[int, str, str, list[tuple[str, str]]]]]
                  ) -> dict[int, str]:
    """Body terms of the given nodes (as :func:`~m1nd.graph.lexicon.node_terms_from_blobs` gives them), reading
    only their files' stored terms (``read`` takes (root id, relpath) pairs)."""
    nodes = [j for j in nodes if t.kind[j] != DIR]
    wanted = {(int(t.root_id[j]), t.source_path[j]) for j in nodes}
    file_at: dict[tuple[int, str], int] = {}
    for j in nodes:
        f = int(t.file_of[j])
        if f >= 0:
            file_at[(int(t.root_id[f]), t.source_path[f])] = f
    by_node = dict(blob_terms(t, read(wanted), file_at))
    return {j: by_node.get(j, "") for j in nodes}


def with_directories(files: set[tuple[int, str]]) -> set[tuple[int, str]]:
    """The (root id, path) pairs of the files and of every directory above them (their dates follow the files)."""
    out = set(files)
    for root_id, rel in files:
        parts = rel.split("/")[:-1]
        out.add((root_id, "."))
        for k in range(1, len(parts) + 1):
            out.add((root_id, "/".join(parts[:k])))
    return out


#: NodeTable columns in NODE_COLUMNS order: (name, numpy dtype or None for strings, default for NULL)
_COLUMNS = (("ext_id", None, ""), ("label", None, ""), ("qname", None, ""), ("kind", np.uint8, 0),
            ("lang", None, ""), ("root_id", np.int32, 0), ("source_path", None, ""), ("line_start", np.int32, 0),
            ("line_end", np.int32, 0), ("signature", None, ""), ("doc", None, ""), ("is_test", np.bool_, False),
            ("content_hash", None, ""), ("last_change_ms", np.int64, 0), ("churn", np.float32, 0),
            ("commit_count", np.int32, 0))


def patched_nodes(old: NodeTable, old_ids: np.ndarray, rows: list[tuple[Any, ...]], paths: set[tuple[int, str]]
                  ) -> tuple[NodeTable, np.ndarray]:
    """The node table (and the row id at each position) after a patch: ``old`` without its nodes at ``paths``
    (pairs of root id and source path: the patched files and their directories), plus ``rows`` — every node now
    at those paths, ``(id, *NODE_COLUMNS)`` as the store holds them — in ext_id order. Equal to
    :meth:`NodeTable.from_columns` of a full read: the other nodes' rows were not written."""
    names = {p for _r, p in paths}
    roots = old.root_id
    drop = [i for i, p in enumerate(old.source_path) if p in names and (int(roots[i]), p) in paths]
    keep = np.ones(old.n, bool)
    keep[drop] = False
    kept = np.flatnonzero(keep)
    rows = sorted(rows, key=lambda r: r[1])
    kept_ext = [old.ext_id[i] for i in kept.tolist()]
    at = [bisect_left(kept_ext, r[1]) for r in rows]
    order = np.insert(kept, at, -1 - np.arange(len(rows))) if rows else kept
    from_old = order >= 0
    old_at = order[from_old]
    new_at = -1 - order[~from_old]
    cols: dict[str, Any] = {}
    for c, (name, dtype, default) in enumerate(_COLUMNS, start=1):
        values = [default if r[c] is None else r[c] for r in rows]
        if dtype is None:
            src = getattr(old, name)
            values = [v or "" for v in values]
            cols[name] = [src[i] if i >= 0 else values[-1 - i] for i in order.tolist()]
        else:
            arr = np.empty(len(order), dtype)
            arr[from_old] = getattr(old, name)[old_at]
            if len(rows):
                arr[~from_old] = np.asarray(values, dtype)[new_at]
            cols[name] = arr
    ids = np.empty(len(order), np.int64)
    ids[from_old] = old_ids[old_at]
    if len(rows):
        ids[~from_old] = np.asarray([r[0] for r in rows], np.int64)[new_at]
    t = NodeTable(**cols)
    t.finish()
    return t, ids


def patched_indexes(prev: Graph, nodes: NodeTable, files: set[tuple[int, str]],
                    read: Callable[[set[tuple[int, str]]], Iterable[tuple[int, str, str, list[tuple[str, str]]]]]
                    ) -> tuple[TrigramIndex, TermIndex]:
    """The trigram and term indexes of ``nodes`` from those of ``prev`` (see the module docstring)."""
    assert prev.lexicon is not None and prev.lexicon.parts is not None
    old_to_new, redo = node_changes(prev.nodes, nodes, files)
    trigram = TrigramIndex.patched(prev.trigram, nodes, old_to_new, redo)
    terms = node_terms_of(nodes, redo.tolist(), read)
    lexicon = TermIndex.from_parts(nodes, prev.lexicon.parts.patched(prev.nodes, nodes, old_to_new, redo, terms))
    return trigram, lexicon


__all__ = ["node_changes", "node_terms_of", "patched_indexes", "patched_nodes", "reusable", "with_directories"]
