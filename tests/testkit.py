"""The suite's two ways in, shared by every test folder (issue 16 item 8): the real ``m1nd`` command line run
in-process (:func:`run_cli`, :class:`MemoryCli`) and in-process tool calls (:class:`ToolClient`), the path
``m1nd call`` and the MCP server take. The root ``conftest.py`` offers them as fixtures; test modules may import the
classes from here (``from testkit import ToolClient``): ``tests/`` is on ``sys.path`` because its conftest is not in
a package.

Not a conftest: a module called ``conftest`` is imported once per folder, so ``from conftest import …`` would see
whichever folder's was loaded last.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from memory_backends import execute, rows


@dataclass
class CliResult:
    """What one command printed and its exit code."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def err_json(self) -> Any:
        return json.loads(self.err)


def run_cli(argv: list[str], *, input: str | None = None, env: Mapping[str, str | None] | None = None) -> CliResult:
    """``m1nd ARGV`` in this process: stdout and stderr captured apart, stdin from ``input``, ``env`` set for the
    call (None unsets a variable). stdout is not a terminal, as under an agent."""
    from m1nd.cli.app import run

    with CliRunner().isolation(input=input, env=dict(env or {})) as (out, err, _):
        try:
            code = run(argv)
        except SystemExit as e:  # pragma: no cover - run() turns exits into codes
            code = int(e.code or 0)
    return CliResult(code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8"))


#: What every in-process memory command starts from: no acting agent or database file from the environment.
MEMORY_ENV: dict[str, str | None] = {"M1ND_CURRENT_AGENT": None, "M1ND_MEMORY_DB": None}


class MemoryCli:
    """``m1nd --home H [--agent A] memory …`` in-process, on the ``memory.db`` file of ``home`` or, with ``url``,
    on a PostgreSQL database (``M1ND_MEMORY_URL``).

    ``agent`` is the acting agent of a call that names none; ``env`` (a dict the test may change) is laid over
    :data:`MEMORY_ENV` for every call, and a call's own ``env`` over that.
    """

    agent: str | None = None
    base_env: Mapping[str, str | None] = MEMORY_ENV

    def __init__(self, home: Path, url: str | None = None) -> None:
        self.home = home
        self.db_path = home / "memory.db"
        self.url = url
        self.env: dict[str, str | None] = {"M1ND_MEMORY_URL": url}

    def __call__(self, *args: str, input: str | None = None, agent: Any = ...,
                 env: Mapping[str, str | None] | None = None) -> CliResult:
        who = self.agent if agent is ... else agent
        argv = ["--home", str(self.home)] + (["--agent", who] if who else []) + ["memory", *args]
        return run_cli(argv, input=input, env={**self.base_env, **self.env, **(env or {})})

    def ok(self, *args: str, **kw: Any) -> CliResult:
        r = self(*args, **kw)
        assert r.code == 0, (args, r.err)
        return r

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return rows(self.db_path, self.url, sql, params)

    def scalar(self, sql: str, params: tuple = ()) -> Any:
        return self.rows(sql, params)[0][0]

    def execute(self, sql: str, params: tuple = ()) -> None:
        execute(self.db_path, self.url, sql, params)


class ToolClient:
    """Tool calls on a workspace in-process (``m1nd.call_tool``), as one agent: ``call`` returns
    ``(is_error, structured)``, ``ok`` asserts success and returns the result, ``err`` asserts a tool error and
    returns it."""

    def __init__(self, ws: Any, agent: str = "agent-1") -> None:
        self.ws = ws
        self.agent = agent

    def call(self, name: str, **args: Any) -> tuple[bool, dict[str, Any]]:
        from m1nd.tools.registry import call_tool

        args.setdefault("agent_id", self.agent)
        r = call_tool(self.ws, name, args)
        return r.is_error, r.structured

    def ok(self, name: str, **args: Any) -> dict[str, Any]:
        is_error, out = self.call(name, **args)
        assert not is_error, (name, out)
        return out

    def err(self, name: str, **args: Any) -> dict[str, Any]:
        is_error, out = self.call(name, **args)
        assert is_error, (name, out)
        return out["error"]

    def as_agent(self, agent: str) -> ToolClient:
        return ToolClient(self.ws, agent)


def open_workspace(home: Path, key: Path, *, transport: str = "cli", **settings: Any) -> Any:
    """A workspace on ``home`` for the repository (or key) ``key``, with a generous busy timeout for loaded
    machines."""
    from m1nd.config import Settings
    from m1nd.workspace import Workspace

    settings.setdefault("busy_timeout_ms", 10000)
    return Workspace(Settings(home=home, workspace_key=key, **settings), transport=transport)
