"""How a long-running command ends its process (``m1nd serve``, ``m1nd watch``, the ingest's cache child):
:func:`exit_process`."""

from __future__ import annotations

import os
import sys
from typing import NoReturn


def exit_process(code: int) -> NoReturn:
    """End a long-running command (``m1nd serve``, ``m1nd watch``) after its own shutdown: run the exit handlers
    (index saves, child processes), flush stdout and stderr, then ``os._exit``.

    Why not ``sys.exit``: interpreter finalisation ends the daemon threads still running (the file watcher inside
    watchfiles' Rust loop, a tool call past its grace period, a patch batch in a Cython kernel) by making each one
    that reacquires the GIL call ``pthread_exit``, whose forced unwind through a native frame that may not unwind
    calls ``std::terminate``, and C++ static destructors run under threads still using them. Either one aborts the
    process with SIGABRT ("terminate called without an active exception") now and then on a loaded machine (seen on
    CI, one stop in a few hundred). Everything that must be durable is committed and closed before this point, so
    nothing is lost by skipping finalisation; the same reasoning as the embedding child (:mod:`m1nd.embed_worker`).
    """
    import atexit

    try:
        atexit._run_exitfuncs()  # what finalisation would have run first (they log their own failures)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe (the client left): nothing more can be said
                pass
        os._exit(code)
