"""Fixtures: the shop repository (optionally a git repo) and Workspaces over a tmp home."""

from __future__ import annotations

from pathlib import Path

import pytest

from shop_repo import git, write_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo")


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    root = write_repo(tmp_path / "grepo")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init", date="2026-01-01T12:00:00Z")
    for k, day in enumerate(("02", "03", "04")):
        (root / "src/shop/cart.py").write_text((root / "src/shop/cart.py").read_text() + f"\n# change {k}\n")
        (root / "src/shop/pricing.py").write_text((root / "src/shop/pricing.py").read_text() + f"\n# change {k}\n")
        git(root, "commit", "-q", "-am", f"change {k}", date=f"2026-01-{day}T12:00:00Z")
    return root


@pytest.fixture
def ws_factory(workspace_factory):
    """``make(key, home=None)``: workspaces over the test's home (the root conftest's ``workspace_factory``)."""
    return workspace_factory
