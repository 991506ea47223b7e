"""``m1nd watch``: keep the workspace's graph in step with its files until interrupted (see :mod:`m1nd.watch`)."""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from typing import Any

import click


@click.command("watch")
@click.argument("path", required=False)
@click.option("--json", "json_out", is_flag=True, help="Print one JSON ingest report per batch (JSON lines).")
def watch_cmd(path: str | None, json_out: bool) -> None:
    """Re-ingest changed files of the ingested roots as they change (debounced batches) until Ctrl-C.

    With PATH, PATH is ingested first when it is not yet a root of the workspace (as `m1nd ingest PATH` would).
    Queries from other processes on the same workspace (a server, `m1nd activate`) report `stale` while a batch
    is pending. One line per batch on stdout; errors on stderr.
    """
    import os
    from pathlib import Path

    from m1nd.errors import InvalidInputError, M1ndError
    from m1nd.watch import Watcher, timed_report

    obj = click.get_current_context().find_root().obj
    if path is not None and obj.workspace_path is None and not os.environ.get("M1ND_WORKSPACE"):
        target = Path(path).expanduser()
        if target.is_dir():
            from m1nd.config import git_toplevel

            obj.workspace_path = str(git_toplevel(target.absolute()) or target.absolute())
    ws = obj.workspace
    cg = ws.graph
    try:
        if path is not None:
            target = Path(path).expanduser().absolute()
            if not target.is_dir():
                raise InvalidInputError(f"path '{path}' is not a directory",
                                        recover="pass the repository root to watch")
            if not any(Path(r.path) == target.resolve() for r in cg.store.roots()):
                started = time.perf_counter()
                _emit(timed_report(cg.ingest(str(target)), started), json_out)
        if not cg.store.roots():
            raise InvalidInputError(f"nothing is ingested in workspace {ws.settings.workspace_key}",
                                    recover="run `m1nd watch PATH` (or `m1nd ingest PATH` first), or choose the "
                                            "workspace with --workspace")
    except M1ndError as e:
        click.echo(f"Error ({e.code}): {e.message} Recover: {e.recover}", err=True)
        ws.close()
        sys.exit(1)

    done = threading.Event()
    stopped_by: list[str] = []

    def on_signal(signum: int, _frame: Any) -> None:
        stopped_by.append(signal.Signals(signum).name)
        done.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    watcher = Watcher(ws.settings, cg.ingest, on_report=lambda r: _emit(r, json_out),
                      prime=cg.prime_live_roots).start()
    roots = ", ".join(r.path for r in cg.store.roots())
    click.echo(f"m1nd: watching {roots} (workspace {ws.settings.workspace_key}); Ctrl-C stops", err=True)
    try:
        while not done.wait(0.5):
            pass
    finally:
        watcher.stop()
        ws.close()
    from m1nd.process_exit import exit_process

    exit_process(130 if stopped_by == ["SIGINT"] else 0)  # (why not a normal return: see exit_process)


def _emit(report: dict[str, Any], json_out: bool) -> None:
    if json_out:
        click.echo(json.dumps(report, ensure_ascii=False, separators=(",", ":")))
    elif "error" in report:
        err = report["error"]
        click.echo(f"watch: {report.get('root')}: Error ({err.get('code')}): {err.get('message')}", err=True)
    elif report.get("changed"):
        click.echo(f"{report.get('root')}: {report.get('files_parsed', 0)} files re-parsed, "
                   f"{report.get('files_removed', 0)} removed; nodes {report['nodes']['total']}, "
                   f"edges {report['edges']['total']}; generation {report.get('graph_generation')} "
                   f"({report.get('elapsed_ms', 0) / 1000:.1f} s)")
    else:
        click.echo(f"{report.get('root')}: no change to the graph")
    sys.stdout.flush()


def register(cli: click.Group) -> None:
    cli.add_command(watch_cmd)
