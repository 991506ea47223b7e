"""Whether this process may fork a worker: :func:`fork_is_safe`, the one rule for every fork m1nd makes.

Forking copies only the calling thread. A lock another thread held at that moment stays held forever in the child,
which then hangs on its first use (malloc's, the logging module's, a thread pool's). So m1nd forks (the ingest child
of the CLI, its extraction workers, the trigram build beside the lexicon) only from a process with one Python thread,
and otherwise spawns. Python's thread count does not see native thread pools: ONNX Runtime starts its own as soon as
a session exists, and a child forked after that got stuck in ONNX Runtime's clean-up (seen once in the test suite,
where the embedding tests had run an in-process session before an ingest test forked). ONNX Runtime does not support
fork, so its presence in the process also rules forking out. OpenBLAS's worker threads (numpy's) need no such rule:
OpenBLAS shuts its pool down before a fork (``pthread_atfork``) and starts it again when next needed.
"""

from __future__ import annotations

import multiprocessing
import sys
import threading

#: modules whose native thread pools do not survive a fork
_FORK_UNSAFE_MODULES = ("onnxruntime",)


def fork_is_safe() -> bool:
    """Whether forking is available here and no other thread's locks could be inherited held."""
    return ("fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
            and not any(name in sys.modules for name in _FORK_UNSAFE_MODULES))
