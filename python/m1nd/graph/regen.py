"""A new generation's text indexes from the previous generation's, when a watcher patched a few files (issue 15
item 4): the two indexes whose build is per-node Python work (:class:`~m1nd.graph.lexicon.TermIndex`,
:class:`~m1nd.graph.semantic.TrigramIndex`) keep the per-node pieces they were built from, so only the nodes of
the edited files (and any node whose text changed or that is new) are made again and the vectorised half runs
over the whole graph as a full build does. The result equals a full build of the new node table (tests compare
every array)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from m1nd.graph.lexicon import TermIndex
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
    by_node: dict[int, str] = {}
    file_at: dict[tuple[int, str], int] = {}
    for j in nodes:
        f = int(t.file_of[j])
        if f >= 0:
            file_at[(int(t.root_id[f]), t.source_path[f])] = f
    index = t.index
    for root_id, relpath, file_terms, defs in read(wanted):
        f = file_at.get((int(root_id), relpath))
        if f is None:
            continue
        by_node[f] = file_terms or ""
        head = t.ext_id[f] + "::"
        for local, terms in defs:
            i = index.get(head + local)
            if i is not None:
                by_node[i] = terms or ""
    return {j: by_node.get(j, "") for j in nodes}


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


__all__ = ["node_changes", "node_terms_of", "patched_indexes", "reusable"]
