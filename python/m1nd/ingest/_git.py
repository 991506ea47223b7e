"""Tiny subprocess wrapper around the ``git`` executable (shared by the walker and :mod:`gitdata`).

Never raises for git problems: :func:`run_git` returns ``(returncode, stdout_bytes, stderr_text)`` and a
returncode of -1 when git is missing or timed out. The environment drops ``GIT_DIR``-style overrides (so a caller
running inside a git hook does not redirect us), forces the C locale and disables optional locks so read-only
commands such as ``git status`` never take the index lock.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

_DROP = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
)


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROP}
    env["LC_ALL"] = "C"
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def run_git(cwd: Path, *args: str, timeout: float = 120.0) -> tuple[int, bytes, str]:
    try:
        proc = subprocess.run(
            ["git", "-c", "core.quotepath=false", *args],
            cwd=str(cwd),
            env=git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        return -1, b"", "git executable not found"
    except subprocess.TimeoutExpired:
        return -1, b"", f"git {args[0] if args else ''} timed out after {timeout:.0f}s"
    except OSError as e:
        return -1, b"", f"cannot run git: {e}"
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace").strip()


def toplevel_and_prefix(root: Path) -> tuple[Path, str] | None:
    """``(top-level dir, root prefix relative to it with trailing '/' or '')`` or None outside a work tree."""
    rc, out, _ = run_git(root, "rev-parse", "--show-toplevel", "--show-prefix", timeout=30.0)
    if rc != 0:
        return None
    lines = os.fsdecode(out).split("\n")
    if len(lines) < 2 or not lines[0]:
        return None
    return Path(lines[0]), lines[1]
