"""m1nd forks only where a fork is safe (m1nd.fork_safety): never beside other Python threads, never once ONNX Runtime
(whose native thread pools a fork would copy mid-lock) is loaded."""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor

import pytest

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")


def _verdicts() -> dict[str, bool]:
    import sys

    from m1nd.fork_safety import fork_is_safe

    alone = fork_is_safe()
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    beside_thread = fork_is_safe()
    stop.set()
    t.join()
    had_ort = "onnxruntime" in sys.modules
    import onnxruntime  # noqa: F401

    return {"alone": alone, "beside_thread": beside_thread, "had_ort": had_ort, "with_ort": fork_is_safe()}


def _in_fresh_process(fn, *args):
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(fn, *args).result(timeout=300)


def test_fork_is_ruled_out_beside_threads_and_onnxruntime() -> None:
    pytest.importorskip("onnxruntime")
    got = _in_fresh_process(_verdicts)
    assert got == {"alone": True, "beside_thread": False, "had_ort": False, "with_ort": False}
