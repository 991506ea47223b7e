"""The two text indexes of a new generation (trigram and BM25F), built side by side in the cache child.

They read the same node table and nothing of each other, and each is seconds of mostly single-threaded work on a
large tree (stdlib: ~1.5 s trigram, ~2 s lexical). The cache child (``build_cache_in_child``) is a short-lived,
single-threaded process, so it forks once: the fork builds the trigram index while the child builds the lexical
one, and sends its arrays back through a pipe. Each process holds only its own index's temporaries, so neither
peaks higher than the one-after-the-other build did. Anywhere else (a server with threads, a platform without
``fork``) the two are built one after the other, as before.
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Callable
from typing import Any

from m1nd.graph.lexicon import TermIndex
from m1nd.graph.nodes import NodeTable
from m1nd.graph.semantic import TrigramIndex

log = logging.getLogger(__name__)


def can_fork() -> bool:
    """Whether forking is safe here: available, and no other thread whose locks the fork could inherit held."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def build(nodes: NodeTable, lexicon: Callable[[], TermIndex], *, side_by_side: bool) -> tuple[TrigramIndex, TermIndex]:
    """(trigram index, lexical index) of ``nodes``; ``lexicon`` builds the latter (it reads the term strings). With
    ``side_by_side`` (and :func:`can_fork`), the trigram index is built in a forked process meanwhile: the same
    arrays, without the (node, trigram) pairs a later patched build would start from (the cache child, the one
    caller that asks, saves the arrays and exits)."""
    if not (side_by_side and can_fork()):
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
