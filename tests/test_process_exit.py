"""``exit_process`` (how ``m1nd serve`` and ``m1nd watch`` end): exit handlers run, buffered output is flushed, the
exit code is the one given, and interpreter finalisation is skipped (a daemon thread still running is never torn
down by it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], capture_output=True, text=True, timeout=120,
                          check=False)


def test_exit_handlers_run_output_is_flushed_and_the_code_is_kept() -> None:
    out = _run("""
        import atexit, sys, threading, time
        from m1nd.process_exit import exit_process
        atexit.register(lambda: sys.stderr.write("handler ran\\n"))
        threading.Thread(target=lambda: time.sleep(60), daemon=True).start()
        sys.stdout.write("buffered line")  # no newline: still in the buffer when exit_process is called
        exit_process(130)
    """)
    assert out.returncode == 130, out.stderr
    assert out.stdout == "buffered line"
    assert "handler ran" in out.stderr


def test_finalisation_is_skipped() -> None:
    # an object whose finaliser would print at interpreter shutdown: exit_process leaves before that stage
    out = _run("""
        import sys
        from m1nd.process_exit import exit_process
        class Loud:
            def __del__(self):
                sys.stderr.write("finalised\\n")
        keep = Loud()
        exit_process(0)
    """)
    assert out.returncode == 0, out.stderr
    assert "finalised" not in out.stderr


def test_a_failing_exit_handler_does_not_change_the_exit() -> None:
    out = _run("""
        import atexit
        from m1nd.process_exit import exit_process
        def boom():
            raise RuntimeError("handler failed")
        atexit.register(boom)
        exit_process(0)
    """)
    assert out.returncode == 0, out.stderr
    assert "handler failed" in out.stderr  # reported by atexit, as at a normal exit
