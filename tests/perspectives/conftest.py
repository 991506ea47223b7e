"""Fixtures of the perspective tests: a small git repository ingested into a Workspace in a tmp home.

The repository ("shop") has a class hierarchy, calls, imports, a test, a config file read by name, a README whose
section mentions code, and three commits that change two files together (a co-change edge).
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from m1nd.tools.registry import call_tool
from m1nd.workspace import Workspace
from testkit import ToolClient as Client
from testkit import open_workspace

SHOP = {
    "src/shop/__init__.py": "",
    "src/shop/pool.py": '''
        """Generic resource pool."""


        class Pool:
            """A bounded pool of reusable resources."""

            def __init__(self, size=4):
                self.size = size
                self.free = []

            def acquire(self):
                """Take a resource from the pool."""
                return self.free.pop()

            def release(self, item):
                """Give a resource back."""
                self.free.append(item)
        ''',
    "src/shop/db.py": '''
        """Database connections."""


        def connect(url):
            """Open a database connection."""
            return {"url": url}


        def close(conn):
            """Close a connection."""
            conn.clear()
        ''',
    "src/shop/session_pool.py": '''
        """Sessions on top of the generic pool."""
        from shop.db import connect
        from shop.pool import Pool

        SETTINGS = "settings.toml"


        class SessionPool(Pool):
            """A pool of database sessions."""

            def acquire(self):
                """Take a session, connecting lazily."""
                conn = connect("db://")
                return conn

            def release(self, session):
                """Return a session."""
                super().release(session)
        ''',
    "src/shop/orders.py": '''
        """Orders use pooled sessions."""
        from shop.session_pool import SessionPool


        def place_order(item):
            """Place an order with a pooled session."""
            pool = SessionPool()
            session = pool.acquire()
            pool.release(session)
            return item
        ''',
    "src/shop/render.py": '''
        """HTML rendering, unrelated to sessions."""


        def render_page(template):
            """Render an HTML page."""
            return "<html>" + template + "</html>"
        ''',
    "tests/test_session_pool.py": '''
        from shop.session_pool import SessionPool


        def test_acquire():
            pool = SessionPool()
            assert pool.acquire() is not None
        ''',
    "config/settings.toml": "[pool]\nsize = 4\n",
    "README.md": "# Shop\n\nA tiny shop.\n\n## Sessions\n\n`SessionPool` lives in src/shop/session_pool.py.\n",
}

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV})


def write_files(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def make_shop(root: Path) -> Path:
    write_files(root, SHOP)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "initial")
    for n in (1, 2):  # db.py and session_pool.py change together twice more: a co_changes edge
        for rel in ("src/shop/db.py", "src/shop/session_pool.py"):
            with open(root / rel, "a", encoding="utf-8") as f:
                f.write(f"# revision {n}\n")
        git(root, "commit", "-qam", f"revision {n}")
    return root


def ingest(ws: Workspace, repo: Path) -> dict[str, Any]:
    r = call_tool(ws, "ingest", {"agent_id": "setup", "path": str(repo)})
    assert not r.is_error, r.structured
    return r.structured


@pytest.fixture
def shop_repo(tmp_path: Path) -> Path:
    return make_shop(tmp_path / "shop")


@pytest.fixture
def shop_ws(tmp_path: Path, shop_repo: Path):
    ws = open_workspace(tmp_path / "home", shop_repo)
    ingest(ws, shop_repo)
    yield ws
    ws.close()


@pytest.fixture
def client(shop_ws: Workspace) -> Client:
    return Client(shop_ws)


def route_to(routes: list[dict[str, Any]], target: str, family: str | None = None) -> dict[str, Any] | None:
    return next((r for r in routes if r["target_node"] == target and (family is None or r["family"] == family)),
                None)


def all_routes(c: Client, pid: str, version: int) -> list[dict[str, Any]]:
    out = c.ok("perspective_routes", perspective_id=pid, page=1, page_size=10, route_set_version=version)
    routes = list(out["routes"])
    for page in range(2, out["total_pages"] + 1):
        routes += c.ok("perspective_routes", perspective_id=pid, page=page, page_size=10,
                       route_set_version=version)["routes"]
    return routes
