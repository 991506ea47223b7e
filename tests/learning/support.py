"""Helpers of the learning tests: the fixture repository, workspaces on a temporary home, tool calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from m1nd.config import Settings
from m1nd.workspace import Workspace
from testkit import ToolClient

FILES = {
    "pkg/__init__.py": "from .pool import SessionPool\nfrom .auth import login\n",
    "pkg/db.py": '''
"""Database access."""


class Connection:
    def execute(self, sql):
        return sql

    def close(self):
        pass


def connect(url):
    """Open a database connection."""
    return Connection()
''',
    "pkg/session.py": '''
from .db import connect


class Session:
    """A unit of work bound to one connection."""

    def __init__(self, url):
        self.conn = connect(url)

    def commit(self):
        self.conn.execute("COMMIT")

    def close(self):
        self.conn.close()
''',
    "pkg/pool.py": '''
from .session import Session
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

    def drain(self):
        for s in self.free:
            s.close()
''',
    "pkg/cache.py": '''
class Cache:
    """A tiny in-memory cache."""

    def __init__(self):
        self.data = {}

    def get(self, key):
        return self.data.get(key)

    def put(self, key, value):
        self.data[key] = value
''',
    "pkg/auth.py": '''
from .pool import SessionPool
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


def logout(user):
    _TOKENS.put(user, None)
''',
    "pkg/render.py": '''
from .template import Template


def render_page(name, context):
    """Render an HTML page from a template."""
    return Template(name).render(context)


def render_error(code):
    return render_page("error", {"code": code})
''',
    "pkg/template.py": '''
class Template:
    def __init__(self, name):
        self.name = name

    def render(self, context):
        return self.name.format(**context)
''',
    "tests/test_pool.py": '''
from pkg.pool import SessionPool


def test_acquire_release():
    pool = SessionPool("db://test")
    s = pool.acquire()
    pool.release(s)
''',
    "tests/test_auth.py": '''
from pkg.auth import login, logout


def test_login():
    assert login("a", "b")
    logout("a")
''',
}


def write_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    for rel, text in (files or FILES).items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text.lstrip("\n"), encoding="utf-8")
    return root


def open_workspace(home: Path, repo: Path, *, transport: str = "cli", memory_url: str | None = None) -> Workspace:
    """A workspace on ``home``; with ``memory_url`` its trails and learned weights live on that PostgreSQL server
    (issue 18), the code graph in the home as always."""
    return Workspace(Settings(home=home, workspace_key=repo, busy_timeout_ms=10000, memory_url=memory_url),
                     transport=transport)


def shared_db(ws: Workspace) -> Any:
    """The database holding the workspace's trails and learn log (``graph.db``, or the server), with the
    ``Database`` surface (SQLite spelling on both)."""
    return ws.graph.shared.db


def db_weights(ws: Workspace) -> dict[tuple[str, str, int], tuple[float, float, int, int]]:
    """Every edge's stored (w0, w, n_ltp, n_ltd): ``graph.db``'s edges, or on a server store the local edges'
    base weights overlaid with the learned weights the server holds."""
    rows = ws.graph.store.db.all("SELECT s.ext_id, d.ext_id, e.relation, e.w0, e.w, e.n_ltp, e.n_ltd FROM edges e "
                                 "JOIN nodes s ON s.id = e.src JOIN nodes d ON d.id = e.dst")
    out = {(r[0], r[1], r[2]): (r[3], r[4], r[5], r[6]) for r in rows}
    if ws.graph.shared.remote:
        out = {k: (v[0], v[0], 0, 0) for k, v in out.items()}
        for s, d, rel, w0, w, ltp, ltd in shared_db(ws).all(
                "SELECT src, dst, relation, w0, w, n_ltp, n_ltd FROM learned_edges"):
            base = out[(s, d, rel)][0]  # replayed as the graph does (CodeGraph._sync_weights)
            learned = base if w == w0 else w if abs(base - w0) < 1e-6 else base + (w - w0)
            out[(s, d, rel)] = (base, learned, ltp, ltd)
    return out


def call(ws: Workspace, tool: str, agent: str = "agent-1", **args: Any) -> dict[str, Any]:
    """A tool call that must succeed, as ``agent`` (the suite's shared client, :class:`testkit.ToolClient`)."""
    return ToolClient(ws, agent).ok(tool, **args)


def error(ws: Workspace, tool: str, agent: str = "agent-1", **args: Any) -> dict[str, Any]:
    """A tool call that must fail: its error object."""
    return ToolClient(ws, agent).err(tool, **args)
