"""The two text indexes of a new generation (trigram and BM25F), built side by side in the cache child.

They read the same node table and nothing of each other, and each is seconds of mostly single-threaded work on a
large tree (stdlib: ~1.5 s trigram, ~2 s lexical). The cache child (``build_cache_in_child``) is a short-lived,
single-threaded process, so it forks once: the fork builds the trigram index while the child builds the lexical
one, and sends its arrays back through a pipe. Each process holds only its own index's temporaries, so neither
peaks higher than the one-after-the-other build did. Anywhere else (a server with threads, a platform without
``fork``) the two are built one after the other, as before.

After a fresh ingest (every file of the only root just extracted) the ingest child also sends the node rows and term
blobs it is about to write (:func:`prebuild`): the cache child builds both indexes while the ingest child writes
(~2 s on one core for the stdlib), and, once the write is committed, uses them when the table it reads back is
that one (:func:`prebuilt_for`); else it builds them from the store as before.
"""

from __future__ import annotations

import logging
import multiprocessing
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

from m1nd.fork_safety import fork_is_safe
from m1nd.graph.lexicon import TermIndex, node_terms_from_blobs
from m1nd.graph.nodes import NodeTable
from m1nd.graph.semantic import TrigramIndex
from m1nd.store.graph_repo import NODE_COLUMNS, GraphStore, reads_back_as_written, terms_rows

log = logging.getLogger(__name__)


def build(nodes: NodeTable, lexicon: Callable[[], TermIndex], *, side_by_side: bool) -> tuple[TrigramIndex, TermIndex]:
    """(trigram index, lexical index) of ``nodes``; ``lexicon`` builds the latter (it reads the term strings). With
    ``side_by_side`` (and :func:`m1nd.fork_safety.fork_is_safe`), the trigram index is built in a forked process
    meanwhile: the same arrays, without the (node, trigram) pairs a later patched build would start from (the cache
    child, the one caller that asks, saves the arrays and exits)."""
    if not (side_by_side and fork_is_safe()):
        # one after the other, the trigram build first: it peaks higher, and the term strings are not read yet
        trigram = TrigramIndex.build(nodes)
        return trigram, lexicon()
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_trigram_arrays, args=(nodes, send), name="m1nd-trigram", daemon=True)
    proc.start()
    send.close()
    try:
        lex = lexicon()
        try:
            arrays: Any = receive.recv()
        except EOFError:
            arrays = None
    finally:
        receive.close()
        proc.join()
    if not isinstance(arrays, dict):
        log.warning("the trigram index could not be built beside the lexical one (%s); building it here",
                    arrays if arrays is not None else f"exit code {proc.exitcode}")
        return TrigramIndex.build(nodes), lex
    return TrigramIndex.from_arrays(arrays), lex


def _trigram_arrays(nodes: NodeTable, send: Any) -> None:
    try:
        out: Any = TrigramIndex.build(nodes).arrays()
    except BaseException as e:  # noqa: BLE001 — reported to the parent, which builds it itself
        out = f"{type(e).__name__}: {e}"
    send.send(out)
    send.close()


@dataclass
class Prebuilt:
    """Both text indexes of a node table that is being written, with the columns they were built from."""

    columns: dict[str, list[Any]]
    nodes: NodeTable
    trigram: TrigramIndex
    lexicon: TermIndex
    #: (graph generation, node count) of the commit that inserted exactly these rows, when the ingest child says
    #: so (its report: every node of the table created by that write); see :func:`committed_ids`
    written: tuple[int, int] | None = None


def prebuild(rows: list[tuple[Any, ...]], terms: list[tuple[int, str, bytes | None]]) -> Prebuilt:
    """The text indexes of the nodes ``rows`` (``NODE_COLUMNS`` tuples, any order) whose body terms are the
    ``terms`` blobs ``(root id, relpath, files.terms_blob)``: what :meth:`m1nd.codegraph.service.CodeGraph` would
    build once they are in the store (nodes in ``ext_id`` order, as the store reads them)."""
    rows.sort(key=itemgetter(0))
    columns = {name: [r[j] for r in rows] for j, name in enumerate(NODE_COLUMNS)}
    del rows[:]
    nodes = NodeTable.from_columns(columns)
    trigram, lexicon = build(nodes, lambda: TermIndex.build(nodes, node_terms_from_blobs(nodes, terms_rows(terms))),
                             side_by_side=True)
    return Prebuilt(columns, nodes, trigram, lexicon)


def committed_ids(prebuilt: Prebuilt | None, store: GraphStore, gen: int) -> np.ndarray | None:
    """The row ids of the nodes (ext_id order) when the table of generation ``gen`` in ``store`` is the one
    ``prebuilt`` was built from, known without reading it back: the ingest child's commit of generation ``gen``
    inserted exactly these rows (``prebuilt.written``), the table holds their ext_ids in their order, and each
    value reads back as the value sent (:func:`m1nd.store.graph_repo.reads_back_as_written`). Else None (then
    :func:`prebuilt_for` compares the columns read back). Saves reading and comparing the node table after the
    commit: ~0.2 s of the wait for a fresh stdlib graph."""
    if prebuilt is None or prebuilt.written is None or prebuilt.written[0] != gen:
        return None
    ids, ext_ids = store.node_ids_and_ext_ids()
    if len(ext_ids) != prebuilt.written[1] or ext_ids != prebuilt.columns["ext_id"]:
        return None
    return ids if reads_back_as_written(prebuilt.columns) else None


def prebuilt_for(prebuilt: Prebuilt | None, columns: dict[str, list[Any]]) -> Prebuilt | None:
    """``prebuilt`` when ``columns`` (the node table as read back from the store) are the ones it was built from,
    so the indexes, and the table itself, are what a build from ``columns`` gives; else None."""
    if prebuilt is None:
        return None
    if all(columns[k] == prebuilt.columns[k] for k in NODE_COLUMNS):
        return prebuilt
    log.warning("the node table written differs from the one sent ahead; building the text indexes again")
    return None
