"""Shared fixtures and helpers of the MCP server tests (``test_server_*.py`` import them explicitly): a small fixture
repository, a server environment in a temporary home, a raw newline-JSON client for ``m1nd serve`` over pipes and an
HTTP server process.

Not a ``conftest.py`` on purpose: other test directories do ``from conftest import ...``, and a second top-level
``conftest`` module would shadow theirs. This module holds no tests.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

SERVE = [sys.executable, "-m", "m1nd", "serve"]

FIXTURE_FILES = {
    "shop/__init__.py": "",
    "shop/db.py": '''\
"""Database access."""


def connect(url):
    """Open a database connection."""
    return {"url": url}
''',
    "shop/pool.py": '''\
"""A pool of database sessions."""

from shop.db import connect


class SessionPool:
    """Hands out sessions."""

    def __init__(self, url):
        self.url = url

    def acquire(self):
        """Take a session from the pool."""
        return connect(self.url)

    def release(self, session):
        """Return a session to the pool."""
        return None
''',
    "shop/orders.py": '''\
"""Order handling on top of the session pool."""

from shop.pool import SessionPool


def place_order(item):
    """Place an order using a pooled session."""
    pool = SessionPool("sqlite://")
    session = pool.acquire()
    pool.release(session)
    return item
''',
    "tests/test_orders.py": '''\
from shop.orders import place_order


def test_place_order():
    assert place_order("book") == "book"
''',
}


def write_fixture_repo(root: Path) -> Path:
    for rel, text in FIXTURE_FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def fixture_repo(tmp_path: Path) -> Path:
    return write_fixture_repo(tmp_path / "repo")


@pytest.fixture
def server_env(tmp_path: Path, fixture_repo: Path) -> dict[str, str]:
    """Environment of a server process: its own home, the fixture repo as workspace, no model, quiet builds."""
    return {"M1ND_HOME": str(tmp_path / "home"), "M1ND_WORKSPACE": str(fixture_repo), "M1ND_EMBEDDER": "hashing",
            "SKBUILD_EDITABLE_VERBOSE": "0", "M1ND_TOOLS": "all"}


def full_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("M1ND_LOG_LEVEL", None)
    env.update(extra)
    return env


class RawServer:
    """``m1nd serve`` over pipes, spoken to line by line."""

    def __init__(self, env: dict[str, str], args: list[str] | None = None) -> None:
        self.proc = subprocess.Popen([*SERVE, *(args or [])], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=full_env(env))
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.raw_stdout: list[bytes] = []
        self.stderr_chunks: list[bytes] = []
        self._next_id = 0
        threading.Thread(target=self._pump_out, daemon=True).start()
        threading.Thread(target=self._pump_err, daemon=True).start()

    def _pump_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw_stdout.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for chunk in iter(lambda: self.proc.stderr.read1(65536), b""):  # type: ignore[union-attr]
            self.stderr_chunks.append(chunk)

    @property
    def stderr(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, obj: Any) -> None:
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def recv(self, timeout: float = 60.0) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)
        assert line is not None, f"server closed stdout; stderr:\n{self.stderr}"
        return json.loads(line)

    def no_reply(self, wait: float = 0.5) -> bool:
        try:
            self.lines.get(timeout=wait)
        except queue.Empty:
            return True
        return False

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60.0) -> dict[str, Any]:
        self._next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        reply = self.recv(timeout)
        assert reply.get("id") == self._next_id, reply
        return reply

    def initialize(self) -> dict[str, Any]:
        r = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "raw-test", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def call(self, name: str, arguments: dict[str, Any], timeout: float = 120.0) -> dict[str, Any]:
        r = self.request("tools/call", {"name": name, "arguments": arguments}, timeout)
        assert "result" in r, r
        return r["result"]

    def close(self, timeout: float = 30.0) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def terminate(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


@pytest.fixture
def raw_server(server_env: dict[str, str]):
    servers: list[RawServer] = []

    def start(env: dict[str, str] | None = None, args: list[str] | None = None) -> RawServer:
        s = RawServer({**server_env, **(env or {})}, args)
        servers.append(s)
        return s

    yield start
    for s in servers:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()


def ingest_fixture(env: dict[str, str], repo: Path) -> dict[str, Any]:
    """Ingest ``repo`` with ``m1nd call ingest`` (its own process), so a server can start on a persisted graph."""
    out = subprocess.run([sys.executable, "-m", "m1nd", "call", "ingest", json.dumps({"path": str(repo)})],
                         capture_output=True, text=True, env=full_env(env), timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


class HttpServerProcess:
    """``m1nd serve --http --port 0``; the bound address is read from stderr."""

    def __init__(self, env: dict[str, str], args: list[str] | None = None) -> None:
        self.proc = subprocess.Popen([*SERVE, "--http", "--port", "0", *(args or [])], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=full_env(env))
        self.stderr_lines: list[str] = []
        self._ready = threading.Event()
        self.url = ""
        threading.Thread(target=self._pump_err, daemon=True).start()
        if not self._ready.wait(60):
            self.proc.kill()
            raise AssertionError("server did not announce its address:\n" + "".join(self.stderr_lines))
        if not self.url:
            raise AssertionError("server exited:\n" + "".join(self.stderr_lines))

    def _pump_err(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace")
            self.stderr_lines.append(line)
            m = re.search(r"serving MCP on (https?://\S+/mcp)", line)
            if m:
                self.url = m.group(1)
                self._ready.set()
        self._ready.set()

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        finally:
            time.sleep(0.05)


@pytest.fixture
def http_server(server_env: dict[str, str]):
    servers: list[HttpServerProcess] = []

    def start(env: dict[str, str] | None = None, args: list[str] | None = None) -> HttpServerProcess:
        s = HttpServerProcess({**server_env, **(env or {})}, args)
        servers.append(s)
        return s

    yield start
    for s in servers:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()
