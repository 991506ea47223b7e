"""Helpers and fixtures of the learning tests: a small ingested Python repository, workspaces on a temporary home,
tool calls.

Ingesting costs ~0.1 s, so one template home is ingested per session and copied for every test; tests that change
the repository itself (re-ingest after deleting files) build their own with ``fresh_workspace``.

Test modules import the fixtures from here (``from learning_support import ws, ...``). This is deliberately not a
``conftest.py``: other test directories import helpers with ``from conftest import …``, which resolves to whichever
conftest was loaded last, so one more conftest in the tree breaks them.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from m1nd.config import Settings
from m1nd.mcp.registry import call_tool
from m1nd.workspace import Workspace

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


def open_workspace(home: Path, repo: Path, *, transport: str = "cli") -> Workspace:
    return Workspace(Settings(home=home, workspace_key=repo, busy_timeout_ms=10000), transport=transport)


def call(ws: Workspace, tool: str, agent: str = "agent-1", **args: Any) -> dict[str, Any]:
    res = call_tool(ws, tool, {"agent_id": agent, **args})
    assert not res.is_error, res.structured
    return res.structured


def error(ws: Workspace, tool: str, agent: str = "agent-1", **args: Any) -> dict[str, Any]:
    res = call_tool(ws, tool, {"agent_id": agent, **args})
    assert res.is_error, res.structured
    return res.structured["error"]



@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("M1ND_EMBEDDER", "hashing")
    monkeypatch.delenv("M1ND_COACTIVATION_RATE", raising=False)
    monkeypatch.delenv("M1ND_WEIGHT_RELAXATION_DAYS", raising=False)


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("learning-template")
    repo = write_repo(base / "repo")
    home = base / "home"
    ws = open_workspace(home, repo)
    call(ws, "ingest", path=str(repo))
    ws.close()
    return home, repo


@pytest.fixture
def home_repo(template: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A private copy of the ingested home (same repo path, so the same workspace key)."""
    home = tmp_path / "home"
    shutil.copytree(template[0], home)
    return home, template[1]


@pytest.fixture
def workspaces(home_repo: tuple[Path, Path]) -> Iterator[Callable[..., Workspace]]:
    """Factory of workspaces on the test's home (each one stands for a process); all closed at the end."""
    opened: list[Workspace] = []

    def make(transport: str = "cli") -> Workspace:
        ws = open_workspace(*home_repo, transport=transport)
        opened.append(ws)
        return ws

    yield make
    for ws in opened:
        ws.close()


@pytest.fixture
def ws(workspaces: Callable[..., Workspace]) -> Workspace:
    return workspaces()


@pytest.fixture
def fresh_workspace(tmp_path: Path) -> Iterator[Callable[[], tuple[Workspace, Path]]]:
    """A repository of its own (the test may edit and re-ingest it) and a workspace on it."""
    opened: list[Workspace] = []

    def make() -> tuple[Workspace, Path]:
        repo = write_repo(tmp_path / "own-repo")
        ws = open_workspace(tmp_path / "own-home", repo)
        opened.append(ws)
        call(ws, "ingest", path=str(repo))
        return ws, repo

    yield make
    for w in opened:
        w.close()
