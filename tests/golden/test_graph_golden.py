"""Golden outputs of the code-graph side: a refactor must leave the graph arrays and the tool results byte-identical.

A small real repository (the learning tests' ``pkg`` package plus a test folder, written to ``tmp_path``, no git so
nothing depends on the clock) is ingested in-process; the test hashes every array of the loaded graph (CSR, node
table, seed, trigram, lexical indexes) and runs a fixed script of tool calls (activate, why, impact, hypothesize,
trail_save/resume, perspective_start/follow, learn, persist, drift) through ``m1nd.call_tool``. Values that measure the
moment rather than the graph (elapsed times, clocks, uptimes, generated ids) are replaced by a placeholder; all
else must equal ``graph_outputs.json``.

The slow tier does the same for the Python standard library (its sources vary per CPython version, so the saved
file is per version: ``graph_outputs_stdlib_<major>.<minor>.json``; a version without a saved file is skipped).

To regenerate after an intended change of outputs (say why in the commit message)::

    M1ND_UPDATE_GOLDEN=1 python -m pytest tests/golden/test_graph_golden.py -m "slow or not slow"

The memory side has its own golden file in this folder (``memstore``'s); this file never touches it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from m1nd.workspace import Workspace
from testkit import ToolClient, open_workspace

HERE = Path(__file__).parent
GOLDEN = HERE / "graph_outputs.json"
UPDATE = os.environ.get("M1ND_UPDATE_GOLDEN") == "1"
AGENT = "golden-agent"

# The learning tests' ``pkg`` package as it was when the outputs were saved, plus two JS files and a README: a
# frozen copy on purpose, so that a change to the learning fixture never moves the golden outputs.
FILES = {
    "pkg/__init__.py": "from .pool import SessionPool\nfrom .auth import login\n",
    "pkg/db.py": '''"""Database access."""


class Connection:
    def execute(self, sql):
        return sql

    def close(self):
        pass


def connect(url):
    """Open a database connection."""
    return Connection()
''',
    "pkg/session.py": '''from .db import connect


class Session:
    """A unit of work bound to one connection."""

    def __init__(self, url):
        self.conn = connect(url)

    def commit(self):
        self.conn.execute("COMMIT")

    def close(self):
        self.conn.close()
''',
    "pkg/pool.py": '''from .session import Session
from .cache import Cache


class SessionPool:
    """A pool of database sessions."""

    def __init__(self, url, size=4):
        self.url = url
        self.free = [Session(url) for _ in range(size)]
        self.cache = Cache()

    def acquire(self):
        if not self.free:
            return Session(self.url)
        return self.free.pop()

    def release(self, session):
        session.commit()
        self.free.append(session)
''',
    "pkg/cache.py": '''class Cache:
    """A tiny in-memory cache."""

    def __init__(self):
        self.data = {}

    def get(self, key):
        return self.data.get(key)

    def put(self, key, value):
        self.data[key] = value
''',
    "pkg/auth.py": '''from .pool import SessionPool
from .cache import Cache

_POOL = SessionPool("db://auth")
_TOKENS = Cache()


def login(user, password):
    """Check credentials and return a token."""
    s = _POOL.acquire()
    try:
        token = hash_password(user + password)
        _TOKENS.put(user, token)
        return token
    finally:
        _POOL.release(s)


def hash_password(text):
    return str(hash(text))
''',
    "web/app.js": '''import { login } from "./api.js";

export function onSubmit(form) {
  return login(form.user, form.password);
}
''',
    "web/api.js": '''export function login(user, password) {
  return fetch("/login", { method: "POST", body: JSON.stringify({ user, password }) });
}
''',
    "README.md": "# pkg\n\nA session `SessionPool` over `Connection`; `login` checks credentials.\n",
    "tests/test_pool.py": '''from pkg.pool import SessionPool


def test_acquire_release():
    pool = SessionPool("db://test")
    s = pool.acquire()
    pool.release(s)
''',
}

# Values that measure the moment (durations, process state, the response size that depends on them) or are
# generated per run (the random tail of a trail id, creation clocks), not the graph.
_VOLATILE_KEYS = {"elapsed_ms", "uptime_seconds", "last_persist_ms_ago", "memory_usage_bytes", "graph_bytes",
                  "response_chars", "first_seen_s_ago", "last_seen_s_ago"}
_EPOCH_MS = 10**12  # integers this large are clock readings in milliseconds (2001 onwards)
_TRAIL_ID = re.compile(r"(trail_[a-z0-9]+_\d{3})_[0-9a-f]{6}")
_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
_TEMP = re.compile(r"/[^\s\"']*?/(golden-repo|stdlib-copy)")
FIXED_MTIME = 1_700_000_000  # files get this modification time: nothing in the graph depends on when they were written


def _scrub(obj: Any, key: str = "") -> Any:
    if isinstance(obj, dict):
        return {k: _scrub(v, k) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub(v, key) for v in obj]
    if isinstance(obj, bool) or obj is None:
        return obj
    if key in _VOLATILE_KEYS:
        return "<volatile>"
    if isinstance(obj, int) and obj >= _EPOCH_MS:
        return "<clock-ms>"
    if isinstance(obj, str):
        return _ISO_TIME.sub("<iso-time>", _TRAIL_ID.sub(r"\1_<rand>", _TEMP.sub(r"<tmp>/\1", obj)))
    return obj


def _hash_arrays(arrays: dict[str, Any]) -> dict[str, str]:
    out = {}
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h = hashlib.sha256(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
        out[name] = h.hexdigest()
    return out


def _graph_hashes(ws: Workspace) -> dict[str, dict[str, str]]:
    g = ws.graph.graph()
    parts = {"engine": g.engine.arrays(), "nodes": g.nodes.arrays(), "seeds": g.seeds.arrays(),
             "trigram": g.trigram.arrays()}
    if g.lexicon is not None:
        parts["lexicon"] = g.lexicon.arrays()
    if g.history is not None:
        parts["history"] = g.history.arrays()
    return {k: _hash_arrays(v) for k, v in parts.items()}


def _script(ws: Workspace, repo: Path, query: str, claim: str) -> dict[str, Any]:
    """The fixed sequence of tool calls; each result is recorded under its step name."""
    _call = ToolClient(ws, AGENT).ok
    out: dict[str, Any] = {}
    out["ingest"] = _call("ingest", path=str(repo), embed="skip")
    out["graph_arrays"] = _graph_hashes(ws)
    out["persist_baseline"] = _call("persist", action="baseline")
    out["activate"] = act = _call("activate", query=query, top_k=10)
    top = [x["node_id"] for x in act["activated"]]
    assert len(top) >= 3, act
    out["why"] = _call("why", source=top[0], target=top[-1])
    out["impact"] = _call("impact", node_id=top[0], top_k=15)
    out["hypothesize"] = _call("hypothesize", claim=claim)
    saved = _call("trail_save", label="golden investigation",
                  hypotheses=[{"statement": claim, "confidence": 0.6, "supporting_nodes": top[:2]}],
                  open_questions=["what else reaches it?"])
    out["trail_save"] = saved
    out["trail_resume"] = _call("trail_resume", trail_id=saved["trail_id"])
    start = _call("perspective_start", query=query)
    out["perspective_start"] = start
    if start.get("routes"):
        out["perspective_follow"] = _call("perspective_follow", perspective_id=start["perspective_id"],
                                          route_index=start["routes"][0]["index"],
                                          route_set_version=start["route_set_version"])
    out["learn"] = _call("learn", query=query, feedback="correct", node_ids=top[:2])
    out["activate_after_learn"] = _call("activate", query=query, top_k=10)
    out["drift"] = _call("drift", since="last_session")
    out["graph_arrays_after_learn"] = _graph_hashes(ws)
    return _scrub(out)


def _compare(path: Path, got: dict[str, Any]) -> None:
    text = json.dumps(got, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.skip(f"no saved outputs at {path.name}: run with M1ND_UPDATE_GOLDEN=1 to write them")
    want = json.loads(path.read_text(encoding="utf-8"))
    for step in want:
        assert got.get(step) == want[step], f"step {step!r} differs from {path.name}"
    assert sorted(got) == sorted(want)


@pytest.fixture
def golden_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("M1ND_EMBEDDER", "hashing")
    for var in ("M1ND_COACTIVATION_RATE", "M1ND_WEIGHT_RELAXATION_DAYS"):
        monkeypatch.delenv(var, raising=False)


def test_fixture_repo_outputs_are_unchanged(tmp_path: Path, golden_env: None) -> None:
    repo = tmp_path / "golden-repo"
    for rel, text in FILES.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        os.utime(p, (FIXED_MTIME, FIXED_MTIME))
    ws = open_workspace(tmp_path / "home", repo)
    try:
        got = _script(ws, repo, "session pool acquire connection", "SessionPool depends on Connection")
    finally:
        ws.close()
    _compare(GOLDEN, got)


@pytest.mark.slow
def test_stdlib_outputs_are_unchanged(tmp_path: Path, golden_env: None) -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    if not (stdlib / "json" / "__init__.py").exists():
        pytest.skip("stdlib sources not available")
    saved = HERE / f"graph_outputs_stdlib_{sys.version_info[0]}.{sys.version_info[1]}.json"
    if not (UPDATE or saved.exists()):
        pytest.skip(f"no saved stdlib outputs for this CPython ({saved.name})")
    # A copy outside any git checkout: no history, so nothing depends on the clock.
    repo = tmp_path / "stdlib-copy"
    shutil.copytree(stdlib, repo, ignore=shutil.ignore_patterns("site-packages", "__pycache__", "*.pyc"),
                    symlinks=True)
    ws = open_workspace(tmp_path / "home", repo)
    try:
        got = _script(ws, repo, "json decoder scan string", "JSONDecoder depends on scanner")
    finally:
        ws.close()
    _compare(saved, got)
