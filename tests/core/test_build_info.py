"""How the kernels were built (issue 17): ``health.core`` reports the ABI, bounds checks, compiler and build type of
the modules actually loaded. CI exports ``M1ND_EXPECT_BOUNDSCHECK`` (0 or 1) for the build it installed."""

from __future__ import annotations

import os
import sys

import pytest
from m1nd.graph.engine import core_build_info


def test_the_core_is_one_abi3_build_for_every_supported_python() -> None:
    info = core_build_info()
    assert info["abi3"] is True, info
    assert info["abi"].startswith("abi3 (CPython >= 3.11")
    assert info["compiler"] and info["compiler"] != "unknown"
    assert sys.version_info >= (3, 11)


def test_boundscheck_is_reported_as_built() -> None:
    expected = os.environ.get("M1ND_EXPECT_BOUNDSCHECK")
    if expected is None:
        pytest.skip("M1ND_EXPECT_BOUNDSCHECK is set by ci/test.sh for the build it installed")
    assert core_build_info()["boundscheck"] is (expected == "1")


def test_health_carries_the_core_build_info(tmp_path) -> None:
    from m1nd.config import load_settings
    from m1nd.mcp.registry import call_tool
    from m1nd.workspace import Workspace

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def f():\n    return 1\n")
    ws = Workspace(load_settings(home=str(tmp_path / "home"), workspace=str(repo)))
    try:
        r = call_tool(ws, "health", {"agent_id": "t"})
    finally:
        ws.close()
    assert not r.is_error
    assert r.structured["core"] == core_build_info()
