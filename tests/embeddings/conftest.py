"""Fixtures of the embedding tests: the hashing embedder (unit tests), the real model (``@pytest.mark.model``), an
in-process ``m1nd memory`` runner and a small repository to ingest."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import testkit
from m1nd.memory import embeddings as E


@pytest.fixture(autouse=True)
def _fresh_embedder(monkeypatch):
    """Each test chooses its embedder from a clean environment (hashing unless it asks otherwise)."""
    monkeypatch.setenv("M1ND_EMBEDDER", "hashing")
    for k in ("M1ND_EMBED_MODEL_DIR", "M1ND_SKIP_WRITE_EMBED", "M1ND_SKIP_WRITE_ANCHOR", "M1ND_CURRENT_AGENT",
              "M1ND_MEMORY_DB", "M1ND_EMBED_BATCH", "M1ND_EMBED_THREADS"):
        monkeypatch.delenv(k, raising=False)
    E.reset_embedder()
    yield
    E.reset_embedder()


_REAL: list[Any] = []


@pytest.fixture
def real_model(monkeypatch):
    """The default int8 MiniLM (loaded once per test process)."""
    monkeypatch.setenv("M1ND_EMBEDDER", "onnx")
    if not _REAL:
        emb = E.OnnxEmbedder(E.default_spec())
        emb.load()
        _REAL.append(emb)
    E.set_embedder(_REAL[0])
    return _REAL[0]


class MemoryCli(testkit.MemoryCli):
    """``m1nd --home H [--agent A] memory …`` in-process (:class:`testkit.MemoryCli`), acting as ``alice``
    unless a call says otherwise."""

    agent = "alice"

    def add(self, title: str, content: str, *extra: str, agent: str | None = "alice", category: str = "insight"
            ) -> str:
        r = self("add", "--category", category, "-t", title, "--content", content, "--json", *extra, agent=agent)
        assert r.code == 0, r.err
        return r.json()["id"]


@pytest.fixture
def mcli(tmp_path: Path) -> MemoryCli:
    return MemoryCli(tmp_path / "home")


REPO = {
    "src/billing/invoice.py": '''
        """Invoices: totals, taxes and PDF rendering."""


        def compute_tax(amount: float, rate: float) -> float:
            """Tax owed on an amount at a given rate."""
            return amount * rate


        def render_pdf(invoice) -> bytes:
            """Render an invoice as a PDF document."""
            return b""
        ''',
    "src/net/retry.py": '''
        """Retrying flaky network calls."""
        import time


        def backoff_delays(attempts: int) -> list:
            """Exponential backoff delays with jitter between retries."""
            return [2 ** k for k in range(attempts)]


        def call_with_retry(fn, attempts: int = 3):
            """Call a function, retrying on connection errors."""
            for d in backoff_delays(attempts):
                try:
                    return fn()
                except ConnectionError:
                    time.sleep(d)
        ''',
    "src/auth/session.py": '''
        """User sessions and login tokens."""


        class Session:
            """A logged-in user session with an expiry."""

            def refresh_token(self) -> str:
                """Issue a new login token."""
                return ""
        ''',
    "README.md": "# Demo\n\n## Billing\n\nInvoices and taxes.\n",
}


def write_repo(root: Path) -> Path:
    for rel, text in REPO.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


@pytest.fixture
def small_repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo")


@pytest.fixture
def workspace_for(workspace_factory):
    """``make(key, transport="cli")``: workspaces on the test's home (the root conftest's ``workspace_factory``)."""
    return workspace_factory
