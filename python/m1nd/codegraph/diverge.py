"""``diverge`` (spec activation.md §14): how the code moved away from a baseline.

Baselines are either the file lists recorded at server starts (``baselines.files_blob``: ``relpath\\tcontent_hash``
lines) or a git commit found by date. Everything is computed on file nodes. Line counts come from git: for a date
baseline from ``git diff --numstat <commit>``; for a session baseline from the commit current at the baseline's
time, when there is one (otherwise they are reported as null rather than guessed).
"""

from __future__ import annotations

import re
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from m1nd.codegraph.results import DivergeResult
from m1nd.errors import InvalidInputError, M1ndError, NotFoundError

if TYPE_CHECKING:
    from m1nd.codegraph.service import CodeGraph

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")


def parse_time_ms(text: str) -> int | None:
    """ISO-8601 date or datetime → epoch ms (naive = UTC); None when it is not one."""
    s = text.strip()
    if not _DATE.match(s):
        return None
    try:
        dt = datetime.fromisoformat(s)  # Python 3.11 parses a trailing "Z"
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)


def _session_baseline(cg: CodeGraph, which: str) -> tuple[int, dict[str, str]]:
    repo = cg.store.baselines
    started_ms = int(cg.started * 1000)
    own = repo.own_server_start_files(__import__("os").getpid(), started_ms - 1)
    if which == "this_session" and own:
        row = own
    elif which == "last_session":
        row = repo.server_start_files_before(started_ms if own else started_ms + 1)
        row = row or own
    else:
        row = None
    if row is None:
        row = repo.newest_files()
    if row is None:
        raise NotFoundError("no baseline from a previous server start; use this_session or a date",
                            recover="run m1nd serve once (it records a baseline), or pass a date such as 2026-01-31")
    files: dict[str, str] = {}
    if row[1]:
        for line in zlib.decompress(row[1]).decode("utf-8").splitlines():
            rel, _, h = line.partition("\t")
            if rel:
                files[rel] = h
    return int(row[0]), files


def _git(root: Path, *args: str) -> tuple[int, str]:
    from m1nd.ingest._git import run_git

    rc, out, _err = run_git(root, *args, timeout=120.0)
    return rc, out.decode("utf-8", "replace")


def _walkable(rel: str) -> bool:
    from m1nd.ingest import walker

    parts = rel.split("/")
    if any(p in walker.ALWAYS_SKIPPED_DIRS for p in parts[:-1]) or any(p.startswith(".") for p in parts):
        return False
    return parts[-1] not in walker.LOCKFILES and walker.detect_lang(rel) is not None


def _pair_strengths(root: Path, prefix: str, since_ms: int | None, until_ms: int | None,
                    scope: str | None) -> dict[tuple[str, str], float]:
    from m1nd.ingest.gitdata import _parse_log

    args = ["log", "--no-merges", "--max-count=5000", "--format=%x1e%H%x1f%at%x1f%ct%x1f%s", "--name-only",
            "--no-renames"]
    if since_ms is not None:
        args.append(f"--since={since_ms // 1000}")
    if until_ms is not None:
        args.append(f"--until={until_ms // 1000}")
    rc, out = _git(root, *args)
    if rc != 0:
        return {}
    count: dict[str, int] = {}
    pairs: dict[tuple[str, str], int] = {}
    for _at, _ct, _subject, paths in _parse_log(out):
        mine = sorted({p[len(prefix):] for p in paths if p.startswith(prefix)})
        if scope:
            mine = [p for p in mine if p.startswith(scope)]
        for p in mine:
            count[p] = count.get(p, 0) + 1
        if 2 <= len(set(paths)) <= 50:
            for i, a in enumerate(mine):
                for b in mine[i + 1:]:
                    pairs[(a, b)] = pairs.get((a, b), 0) + 1
    return {k: n / min(count[k[0]], count[k[1]]) for k, n in pairs.items() if n >= 2}


def diverge(cg: CodeGraph, baseline: str, *, scope: str | None = None, include_coupling_changes: bool = True,
            include_anomalies: bool = True, top_k: int = 50) -> DivergeResult:
    """How the ingested files moved away from ``baseline`` (a session's baseline or a date; activation.md §14)."""
    with cg.lock:
        cg.require_graph()
        return _diverge(cg, baseline, scope=scope, include_coupling_changes=include_coupling_changes,
                        include_anomalies=include_anomalies, top_k=top_k)


def _diverge(cg: CodeGraph, baseline: str, *, scope: str | None, include_coupling_changes: bool,
             include_anomalies: bool, top_k: int) -> DivergeResult:
    from m1nd.ingest._git import toplevel_and_prefix

    g = cg.graph()
    roots = cg.store.roots()
    root = Path(roots[0].path) if roots else None
    tp = toplevel_and_prefix(root) if root is not None else None
    scope = scope.strip("/") + "/" if scope and scope.strip("/") else None
    commit: str | None = None
    if baseline in ("last_session", "this_session"):
        base_ms, base_files = _session_baseline(cg, baseline)
        base_hashes: dict[str, str] | None = base_files
        if tp is not None:
            rc, out = _git(tp[0], "rev-list", "-1", f"--before={base_ms // 1000}", "HEAD")
            commit = out.strip() or None if rc == 0 else None
    else:
        base_ms_opt = parse_time_ms(baseline)
        if base_ms_opt is None:
            raise InvalidInputError(f"baseline '{baseline}' is not understood; use last_session, this_session, or an "
                                    "ISO-8601 date or datetime such as 2026-01-31 or 2026-01-31T12:00:00Z",
                                    details={"argument": "baseline"})
        base_ms = base_ms_opt
        if tp is None:
            raise M1ndError("date baselines need git history; use last_session", code="git_unavailable",
                            recover="use baseline=last_session, or ingest a git repository")
        rc, out = _git(tp[0], "rev-list", "-1", f"--before={base_ms // 1000}", "HEAD")
        commit = out.strip() or None if rc == 0 else None
        base_hashes = None
        base_files = {}
        if commit:
            rc, out = _git(tp[0], "ls-tree", "-r", "--name-only", commit)
            pre = tp[1]
            for line in out.splitlines():
                if line.startswith(pre) and _walkable(line[len(pre):]):
                    base_files[line[len(pre):]] = ""
    t = g.nodes
    current: dict[str, int] = {}
    for i in range(t.n):
        if t.kind[i] == 1 and "::" not in t.ext_id[i][len("file::"):]:
            current[t.source_path[i]] = i
    if scope:
        base_files = {k: v for k, v in base_files.items() if k.startswith(scope)}
        current = {k: v for k, v in current.items() if k.startswith(scope)}
    a, b = set(base_files), set(current)
    union = a | b
    drift = 1.0 - (len(a & b) / len(union) if union else 1.0)
    new_files = sorted(b - a)
    removed = sorted(a - b)
    numstat: dict[str, tuple[int, int]] = {}
    if commit and tp is not None:
        rc, out = _git(tp[0], "diff", "--numstat", commit, "--", tp[1] or ".")
        for line in out.splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit() and parts[2].startswith(tp[1]):
                numstat[parts[2][len(tp[1]):]] = (int(parts[0]), int(parts[1]))
    file_hashes = cg.store.file_hashes()
    modified = []
    for rel in sorted(a & b):
        changed = (base_hashes[rel] != file_hashes.get(rel)) if base_hashes is not None else rel in numstat
        if not changed:
            continue
        added, removed_l = numstat.get(rel, (None, None))
        i = current[rel]
        now_lines = int(t.line_end[i])
        growth = None
        if added is not None:
            then = now_lines - added + removed_l
            growth = round(now_lines / then, 4) if then > 0 else None
        modified.append({"node_id": t.ext_id[i], "lines_added": added, "lines_removed": removed_l,
                         "growth_ratio": growth})
    modified.sort(key=lambda m: -((m["lines_added"] or 0) + (m["lines_removed"] or 0)))
    coupling: list[dict[str, Any]] = []
    if include_coupling_changes and tp is not None:
        before = _pair_strengths(tp[0], tp[1], None, base_ms, scope)
        after = _pair_strengths(tp[0], tp[1], base_ms, None, scope)
        for key in set(before) | set(after):
            x, y = before.get(key, 0.0), after.get(key, 0.0)
            if abs(y - x) < 0.15:
                continue
            kind = "new" if key not in before else "gone" if key not in after else \
                "strengthened" if y > x else "weakened"
            coupling.append({"a": f"file::{key[0]}", "b": f"file::{key[1]}", "before": round(x, 4),
                             "after": round(y, 4), "delta": round(y - x, 4), "change": kind})
        coupling.sort(key=lambda c: (-abs(c["delta"]), c["a"], c["b"]))
    anomalies: list[dict[str, Any]] = []
    if include_anomalies:
        new_code = [f for f in new_files if not t.is_test[current[f]] and t.lang[current[f]] not in
                    ("markdown", "config")]
        new_tests = [f for f in new_files if t.is_test[current[f]]]
        if len(new_code) >= 4 and not new_tests:
            anomalies.append({"type": "test_deficit", "severity": "warning",
                              "nodes": [f"file::{f}" for f in new_code[:20]],
                              "detail": f"{len(new_code)} new code files and no new test file"})
        for m in modified:
            g_ratio, added = m["growth_ratio"], m["lines_added"] or 0
            if g_ratio is not None and g_ratio > 3 and added >= 50:
                anomalies.append({"type": "velocity_spike", "severity": "critical" if g_ratio > 5 else "warning",
                                  "nodes": [m["node_id"]], "detail": f"grew {g_ratio:.1f}x (+{added} lines)"})
        removed_set = set(removed)
        for rel_path in removed:
            stem = rel_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            for f, i in current.items():
                if t.is_test[i] and stem and (f"test_{stem}" in f or f"{stem}_test" in f) and rel_path in removed_set:
                    anomalies.append({"type": "orphan_test", "severity": "warning", "nodes": [t.ext_id[i]],
                                      "detail": f"its subject {rel_path} was removed"})
    summary = (f"{len(new_files)} new, {len(removed)} removed, {len(modified)} modified files since the baseline; "
               f"structural drift {drift:.2f}; {len(coupling)} coupling changes; {len(anomalies)} anomalies")
    return DivergeResult(
        baseline=baseline, baseline_commit=commit, baseline_time_ms=base_ms, scope=scope,
        structural_drift=round(drift, 4), new_nodes=[f"file::{f}" for f in new_files[:top_k]],
        removed_nodes=[f"file::{f}" for f in removed[:top_k]], modified_nodes=modified[:top_k],
        coupling_changes=coupling[:top_k], anomalies=anomalies[:top_k], summary=summary)
