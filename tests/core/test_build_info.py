"""How the kernels were built (issue 17): ``health.core`` reports the ABI, bounds checks, compiler and build type of
the modules actually loaded. CI exports ``M1ND_EXPECT_BOUNDSCHECK`` (0 or 1) for the build it installed."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

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
    from m1nd.tools.registry import call_tool
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


def test_ci_tests_the_installed_wheel_not_the_source_tree() -> None:
    """ci/test.sh sets ``M1ND_TEST_INSTALLED=1``: both packages must then come from the virtualenv's site-packages
    (an editable install or the source tree on ``sys.path`` would resolve elsewhere)."""
    if os.environ.get("M1ND_TEST_INSTALLED") != "1":
        pytest.skip("set by ci/test.sh, which runs the suite against the installed wheel")
    import m1nd
    import m1nd_core

    site = {Path(sysconfig.get_paths()[k]).resolve() for k in ("purelib", "platlib")}
    for module in (m1nd, m1nd_core):
        path = Path(module.__file__).resolve()
        assert any(path.is_relative_to(s) for s in site), f"{module.__name__} imported from {path}, not {site}"
