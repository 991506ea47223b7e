"""Lazy command loading (issue 17 item 4): ``m1nd --help``, ``--version`` and shell completion answer from the
table in :mod:`m1nd.cli.app` without importing the command modules (and with them numpy and the services); the
table must agree with what the modules register."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import click
import pytest

from m1nd.cli.app import COMMAND_MODULES, COMMANDS

# Imported by the command modules (directly or through the tool registry), never needed to list commands.
HEAVY = ("numpy", "m1nd.tools.registry", "m1nd.workspace", "m1nd.cli.graph", "m1nd.cli.learning", "m1nd.cli.memory",
         "m1nd.cli.serve", "m1nd.cli.evaluation")

_PROBE = """
import json, sys
from m1nd.cli.app import run
code = run(sys.argv[1:])
print(json.dumps({"code": code, "heavy": sorted(m for m in sys.modules if m in HEAVY or m.startswith("numpy."))}),
      file=sys.stderr)
"""


def _probe(args: list[str], env: dict[str, str] | None = None) -> tuple[str, int, list[str]]:
    code = f"HEAVY = {HEAVY!r}\n" + _PROBE
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                         env={**os.environ, **(env or {})})
    report = json.loads(out.stderr.strip().splitlines()[-1])
    return out.stdout, report["code"], report["heavy"]


def _registered() -> dict[str, tuple[str, click.Command]]:
    """Every top-level command, with the module whose ``register`` adds it."""
    out: dict[str, tuple[str, click.Command]] = {}
    for module in COMMAND_MODULES:
        group = click.Group("probe")
        importlib.import_module(f"m1nd.cli.{module}").register(group)
        out.update({name: (module, cmd) for name, cmd in group.commands.items()})
    return out


def test_the_table_names_every_registered_command_with_its_module_and_short_help() -> None:
    registered = _registered()
    assert set(COMMANDS) == set(registered), "update m1nd.cli.app.COMMANDS to match the registered commands"
    for name, (module, cmd) in registered.items():
        assert COMMANDS[name][0] == module, name
        assert click.Command(name, help=COMMANDS[name][1]).get_short_help_str(200) == cmd.get_short_help_str(200), name


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["-h"]])
def test_help_and_version_import_no_command_module(args: list[str]) -> None:
    stdout, code, heavy = _probe(args)
    assert code == 0 and stdout.strip()
    assert heavy == []


def test_version_is_the_package_version() -> None:
    from m1nd import __version__

    stdout, code, _ = _probe(["--version"])
    assert stdout.strip() == f"m1nd, version {__version__}"


def test_completion_of_command_names_imports_no_command_module() -> None:
    stdout, code, heavy = _probe([], env={"_M1ND_COMPLETE": "bash_complete", "COMP_WORDS": "m1nd ", "COMP_CWORD": "1"})
    names = [line.split(",", 1)[1] for line in stdout.splitlines()]
    assert names == sorted(COMMANDS)
    assert heavy == []
    stdout, _, _ = _probe([], env={"_M1ND_COMPLETE": "bash_complete", "COMP_WORDS": "m1nd me", "COMP_CWORD": "1"})
    assert stdout.split() == ["plain,memory"]


def test_completion_inside_a_command_loads_that_command() -> None:
    stdout, _, heavy = _probe([], env={"_M1ND_COMPLETE": "bash_complete", "COMP_WORDS": "m1nd activate --top",
                                       "COMP_CWORD": "2"})
    assert stdout.split() == ["plain,--top-k"]
    assert "m1nd.cli.graph" in heavy
    stdout, _, _ = _probe([], env={"_M1ND_COMPLETE": "bash_complete", "COMP_WORDS": "m1nd trail ", "COMP_CWORD": "2"})
    assert {"plain,list", "plain,show", "plain,resume"} <= set(stdout.split())


def test_lazy_help_matches_the_help_of_the_loaded_tree() -> None:
    lazy, _, _ = _probe(["--help"], env={"COLUMNS": "110"})
    code = ("import sys\nfrom m1nd.cli.app import _register_commands, run\n_register_commands()\n"
            "sys.exit(run(['--help']))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "COLUMNS": "110"}, check=True).stdout
    assert lazy == loaded
    assert "activate" in lazy and "memory" in lazy


def test_a_command_runs_and_a_command_help_shows_its_options(tmp_path) -> None:
    stdout, code, heavy = _probe(["activate", "--help"])
    assert code == 0 and "--top-k" in stdout and "m1nd.cli.graph" in heavy
    stdout, code, _ = _probe(["--home", str(tmp_path), "memory", "--help"])
    assert code == 0 and "add-batch" in stdout


def test_an_unknown_command_is_a_usage_error() -> None:
    out = subprocess.run([sys.executable, "-m", "m1nd", "activat"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "No such command 'activat'" in out.stderr and "Traceback" not in out.stderr
