"""The README stays true: every MCP tool and every CLI command it ships is named there, with help text."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from m1nd.cli.app import _register_commands, cli
from m1nd.tools.registry import load_all

README = Path(__file__).resolve().parents[1] / "README.md"


def _readme() -> str:
    if not README.exists():
        pytest.skip("README.md is not beside the tests (installed-package run)")
    return README.read_text(encoding="utf-8")


def test_every_tool_is_in_the_readme_with_a_description() -> None:
    text = _readme()
    for name, tool in load_all().items():
        assert f"`{name}`" in text, f"tool {name} missing from README.md"
        assert tool.description.strip(), name


def _mentioned(text: str, path: str) -> bool:
    """``m1nd a b`` is documented when written out, when ``b`` is a backticked word, or when a line that runs
    ``m1nd a …`` also names ``b`` (``m1nd trail list  # also: trail show | resume``)."""
    import re

    parent, _, leaf = path.rpartition(" ")
    if f"m1nd {path}" in text or f"`{leaf}`" in text:
        return True
    return bool(parent) and any(f"m1nd {parent}" in line and re.search(rf"\b{re.escape(leaf)}\b", line)
                                for line in text.splitlines())


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name, cmd in group.commands.items():
        out.append((prefix + name, cmd))
        if isinstance(cmd, click.Group):
            out.extend(_commands(cmd, prefix + name + " "))
    return out


def test_every_cli_command_is_documented_and_has_help() -> None:
    text = _readme()
    _register_commands()
    for path, cmd in _commands(cli):
        assert (cmd.help or cmd.short_help or "").strip(), f"m1nd {path} has no help text"
        if path.count(" ") <= 1:  # top-level commands and first-level subcommands are named in the README
            assert _mentioned(text, path), f"m1nd {path} missing from README.md"
