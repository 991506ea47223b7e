"""Git-derived temporal data for one ingest root (graph.md §9).

:func:`read_git` runs one ``git log --no-merges --since=<window> --max-count=<max> --name-only`` at the top level
of the work tree, converts the top-level-relative paths to root-relative ones (paths outside the root are
ignored) and computes per file ``(last_change_ms, commit_count)`` and the co-change pairs. It never raises for git
problems: ``GitData(available=False, reason=...)`` instead.

History: the subject of every commit that touched 1..HISTORY_MAX_FILES of the root's files is kept with its commit
time and those files (:attr:`GitData.history`): the ranking's history field (``graph/history.py``) finds the files
that earlier changes described in the same words touched.

Co-change: only commits touching 2..50 files count (larger ones are sweeps); ``n(a, b)`` = such commits touching
both, ``s = n / min(commit_count(a), commit_count(b))``; a pair is kept when ``n >= 2`` and ``s >= 0.2`` and it
is among the 20 strongest partners (by ``s``, then ``n``, then path) of at least one of its two files. Pairs are
returned with ``a < b`` (by relpath), sorted.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from m1nd.defaults import GIT_WINDOW_DAYS
from m1nd.ingest._git import run_git, toplevel_and_prefix

log = logging.getLogger(__name__)

SWEEP_MAX_FILES = 50
CO_CHANGE_MIN_N = 2
CO_CHANGE_MIN_S = 0.2
CO_CHANGE_MAX_PARTNERS = 20
CHURN_FULL_AT = 50
# subjects are read further back than the temporal window: their words age well (H halves their weight per year of
# age), and a query is asked as of its commit (`m1nd eval`): with 3 years, 97 of javapoet's 100 queries and 86 of
# lodash's predated every subject read and had no history field at all. 10 years: +0.0065 MRR on the 15 tuning
# projects, +0.005 on 5 fresh ones, cache +1.6 %; max_commits still bounds what an active repository reads
HISTORY_WINDOW_DAYS = 10 * 365
HISTORY_MAX_FILES = 30  # a commit touching more is a sweep: its subject describes none of its files in particular
HISTORY_SUBJECT_CHARS = 300


@dataclass(slots=True)
class GitData:
    available: bool
    reason: str | None = None
    head: str | None = None
    commits_read: int = 0
    #: root-relative path -> (last_change_ms, commit_count)
    files: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: (a_relpath, b_relpath, n, s) with a < b
    co_change: list[tuple[str, str, int, float]] = field(default_factory=list)
    #: (commit_time_s, subject, [root-relative paths]) of the commits touching 1..HISTORY_MAX_FILES files, newest first
    history: list[tuple[int, str, list[str]]] = field(default_factory=list)
    #: the parameters the history was read with (lets a cache tell whether it can be re-used)
    window_days: int = GIT_WINDOW_DAYS
    max_commits: int = 5000
    history_days: int = 0  # how far back subjects were read (HISTORY_WINDOW_DAYS when they were)

    def churn(self, relpath: str) -> float:
        got = self.files.get(relpath)
        return min(1.0, got[1] / CHURN_FULL_AT) if got else 0.0


_OCTAL = re.compile(r"\\([0-7]{3})")


def _unquote(path: str) -> str:
    """Undo git's C-style quoting of unusual paths (``"a\\tb"``)."""
    if len(path) < 2 or not (path.startswith('"') and path.endswith('"')):
        return path
    inner = path[1:-1]
    raw = bytearray()
    i = 0
    esc = {"n": 10, "t": 9, "r": 13, '"': 34, "\\": 92, "a": 7, "b": 8, "f": 12, "v": 11}
    while i < len(inner):
        c = inner[i]
        if c == "\\" and i + 1 < len(inner):
            nxt = inner[i + 1]
            if nxt in "01234567" and i + 3 < len(inner) + 1 and _OCTAL.match(inner, i):
                raw.append(int(inner[i + 1 : i + 4], 8))
                i += 4
                continue
            if nxt in esc:
                raw.append(esc[nxt])
                i += 2
                continue
        raw.extend(c.encode("utf-8", "surrogateescape"))
        i += 1
    return raw.decode("utf-8", "replace")


def _parse_log(out: str) -> Iterable[tuple[int, int, str, list[str]]]:
    """Yield ``(author_time_s, commit_time_s, subject, [paths])`` from
    ``--format=%x1e%H%x1f%at%x1f%ct%x1f%s --name-only`` output."""
    for rec in out.split("\x1e"):
        if not rec.strip():
            continue
        header, _, body = rec.partition("\n")
        parts = header.split("\x1f", 3)
        try:
            at, ct = int(parts[1].strip()), int(parts[2].strip())
        except (IndexError, ValueError):
            continue
        paths = [_unquote(p) for p in body.split("\n") if p.strip()]
        yield at, ct, parts[3] if len(parts) > 3 else "", paths


def read_git(root: Path, *, window_days: int = GIT_WINDOW_DAYS, max_commits: int = 5000) -> GitData:
    """Read the history of the work tree containing ``root`` (see module docstring)."""
    import unicodedata

    root = Path(root)
    tp = toplevel_and_prefix(root)
    params = {"window_days": int(window_days), "max_commits": int(max_commits)}
    if tp is None:
        rc, _, err = run_git(root, "--version", timeout=10.0)
        if rc == -1:
            return GitData(False, reason=err or "git not available", **params)
        return GitData(False, reason="not inside a git work tree", **params)
    top, prefix = tp
    prefix = unicodedata.normalize("NFC", prefix)
    rc, out, err = run_git(top, "rev-parse", "--verify", "-q", "HEAD", timeout=30.0)
    if rc != 0:
        return GitData(False, reason="the repository has no commits yet" if rc > 0 else err, **params)
    head = out.decode("ascii", "replace").strip() or None
    # The window ends at HEAD's commit time, not at the wall clock: an archived repository, or a checkout of an
    # older commit, still has its last year of history (a window counted from "now" would hold no commit at all).
    rc, out, _ = run_git(top, "log", "-1", "--format=%ct", "HEAD", timeout=30.0)
    try:
        head_time = int(out.decode("ascii", "replace").strip()) if rc == 0 else int(time.time())
    except ValueError:
        head_time = int(time.time())
    window_start = head_time - int(window_days) * 86_400
    since = datetime.fromtimestamp(min(window_start, head_time - HISTORY_WINDOW_DAYS * 86_400),
                                   tz=timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    rc, out, err = run_git(
        top,
        "log",
        "--no-merges",
        f"--since={since}",
        f"--max-count={int(max_commits)}",
        "--format=%x1e%H%x1f%at%x1f%ct%x1f%s",
        "--name-only",
        "--no-renames",
        timeout=300.0,
    )
    if rc != 0:
        return GitData(False, reason=f"git log failed: {err[:200]}", head=head, **params)
    text = out.decode("utf-8", "surrogateescape")

    last: dict[str, int] = {}
    count: dict[str, int] = {}
    pairs: dict[tuple[str, str], int] = {}
    history: list[tuple[int, str, list[str]]] = []
    commits = 0
    plen = len(prefix)
    for t, ct, subject, paths in _parse_log(text):
        ms = t * 1000
        n_all = len(set(paths))
        mine = sorted(
            {
                unicodedata.normalize("NFC", p)[plen:]
                for p in paths
                if unicodedata.normalize("NFC", p).startswith(prefix)
            }
        )
        if mine and n_all <= HISTORY_MAX_FILES:
            history.append((ct, subject[:HISTORY_SUBJECT_CHARS], mine))
        if ct < window_start:
            continue  # older than the temporal window (which --since measures by commit time): its subject only
        commits += 1
        for p in mine:
            count[p] = count.get(p, 0) + 1
            if ms > last.get(p, -1):
                last[p] = ms
        if 2 <= n_all <= SWEEP_MAX_FILES and len(mine) >= 2:
            for i in range(len(mine)):
                a = mine[i]
                for j in range(i + 1, len(mine)):
                    key = (a, mine[j])
                    pairs[key] = pairs.get(key, 0) + 1

    files = {p: (last[p], count[p]) for p in sorted(count)}
    co = _co_change(pairs, count)
    return GitData(True, reason=None, head=head, commits_read=commits, files=files, co_change=co, history=history,
                   history_days=HISTORY_WINDOW_DAYS, **params)


def _co_change(pairs: dict[tuple[str, str], int], count: dict[str, int]) -> list[tuple[str, str, int, float]]:
    cand: list[tuple[str, str, int, float]] = []
    for (a, b), n in pairs.items():
        if n < CO_CHANGE_MIN_N:
            continue
        s = n / min(count[a], count[b])
        if s >= CO_CHANGE_MIN_S:
            cand.append((a, b, n, min(1.0, s)))
    partners: dict[str, list[tuple[float, int, str]]] = {}
    for a, b, n, s in cand:
        partners.setdefault(a, []).append((-s, -n, b))
        partners.setdefault(b, []).append((-s, -n, a))
    keep: set[tuple[str, str]] = set()
    for f, lst in partners.items():
        lst.sort()
        for _, _, other in lst[:CO_CHANGE_MAX_PARTNERS]:
            keep.add((f, other) if f < other else (other, f))
    return sorted(c for c in cand if (c[0], c[1]) in keep)


def worktree_state(root: Path) -> str | None:
    """Cheap fingerprint of ``HEAD`` + ``git status --porcelain`` (None outside a work tree / without git).

    Equal fingerprints mean neither the history nor the work tree moved, so :func:`read_git` can be skipped.
    """
    root = Path(root)
    rc, head, _ = run_git(root, "rev-parse", "-q", "--verify", "HEAD", timeout=30.0)
    if rc == -1:
        return None
    if rc != 0:
        rc2, _, _ = run_git(root, "rev-parse", "--is-inside-work-tree", timeout=30.0)
        if rc2 != 0:
            return None
        head = b"(no commits)"
    rc, status, _ = run_git(root, "status", "--porcelain", "-z", "--untracked-files=normal", timeout=120.0)
    if rc != 0:
        return None
    h = hashlib.sha256()
    h.update(head.strip())
    h.update(b"\0")
    h.update(os.fsencode(str(root.resolve())))
    h.update(b"\0")
    h.update(status)
    return h.hexdigest()


def status(root: Path) -> dict[str, object]:
    """Cheap git facts about ``root`` for health reports.

    ``{"available", "missing_git", "root"/"toplevel", "branch", "head", "clean", "uncommitted_files", "reason"}``
    (activation.md §15: ``git{available, root, branch, head, clean, uncommitted_files}``);
    ``missing_git`` is true when the ``git`` executable is missing but ``root`` (or a parent) holds a ``.git``.
    """
    root = Path(root)
    rc, _, err = run_git(root, "--version", timeout=10.0)
    if rc == -1:
        has_dot_git = any((p / ".git").exists() for p in (root, *root.parents))
        return {
            "available": False,
            "missing_git": has_dot_git,
            "toplevel": None,
            "head": None,
            "reason": err or "git not available",
        }
    tp = toplevel_and_prefix(root)
    if tp is None:
        return {
            "available": False,
            "missing_git": False,
            "toplevel": None,
            "head": None,
            "reason": "not inside a git work tree",
        }
    rc, out, _ = run_git(root, "rev-parse", "-q", "--verify", "HEAD", timeout=30.0)
    head = out.decode("ascii", "replace").strip() if rc == 0 else None
    rc, out, _ = run_git(root, "symbolic-ref", "-q", "--short", "HEAD", timeout=30.0)
    branch = out.decode("utf-8", "replace").strip() if rc == 0 else None  # None: detached HEAD
    rc, out, _ = run_git(root, "status", "--porcelain", "-z", "--untracked-files=normal", "--", ".", timeout=120.0)
    dirty = [p for p in out.split(b"\0") if p.strip()] if rc == 0 else []
    return {"available": True, "missing_git": False, "root": str(tp[0]), "toplevel": str(tp[0]), "branch": branch,
            "head": head, "clean": rc == 0 and not dirty, "uncommitted_files": len(dirty), "reason": None}
