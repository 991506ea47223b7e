"""``m1nd eval``: change localization on the current repository's own history (adapter over
:mod:`m1nd.evaluation`; the set, the rankers and the figures are built there)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from m1nd.cli.app import CliContext
from m1nd.errors import GraphEmptyError, NotFoundError


def _obj() -> CliContext:
    return click.get_current_context().find_root().obj


class _Progress:
    """``ranker 37/100`` rewritten in place on stderr, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self.dirty = False

    def say(self, msg: str) -> None:
        self.clear()
        click.echo(msg, err=True)

    def step(self, ranker: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        click.echo(f"\r{ranker}: {done}/{total} queries", err=True, nl=False)
        self.dirty = True

    def clear(self) -> None:
        if self.dirty:
            click.echo("\r\033[K", err=True, nl=False)
            self.dirty = False


@click.command("eval")
@click.option("--max-queries", type=click.IntRange(1, 5000), default=100, show_default=True,
              help="Newest usable commits to take as queries.")
@click.option("--max-files", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Use commits touching 1..N non-test source files.")
@click.option("--top-k", type=click.IntRange(10, 200), default=200, show_default=True,
              help="Nodes asked from activate (collapsed to distinct files).")
@click.option("--dimensions", default=None, help="activate dimensions to use (comma-separated; default all).")
@click.option("--no-embeddings", is_flag=True, help="Run activate without the embedding model.")
@click.option("--ingest/--no-ingest", "ingest", default=None,
              help="Force an incremental re-ingest first / never ingest (default: ingest when the graph is empty "
                   "or older than the work tree).")
@click.option("--details", is_flag=True, help="Also list each query with the rank of its files per ranker.")
@click.option("--json", "json_out", is_flag=True, help="Print the figures and per-query ranks as JSON.")
def eval_cmd(max_queries: int, max_files: int, top_k: int, dimensions: str | None, no_embeddings: bool,
             ingest: bool | None, details: bool, json_out: bool) -> None:
    """Measure how well activate finds the files a change needed, on this repository's own git history.

    Each query is a commit subject; its answer, the non-test source files the commit touched (1-3, still present).
    Prints recall@1/5/10 and MRR of activate beside a plain BM25 file ranker (SQLite FTS5) on the same queries.
    Progress goes to stderr on a terminal.
    """
    from m1nd import evaluation as E

    obj = _obj()
    progress = _Progress()
    root = obj.settings.workspace_key
    qset = E.build_localization_set(root, max_queries=max_queries, max_files=max_files)
    if not qset.queries:
        reasons = ", ".join(f"{n} {r}" for r, n in qset.skipped.items()) or "none"
        raise NotFoundError(f"no usable commits in {root}: {qset.commits_scanned} commits read, skipped: {reasons}",
                            recover="run it in a repository whose history has commits with descriptive subjects "
                                    "that change source files (or raise --max-files)")
    ws = obj.workspace
    try:
        if ingest is not False:
            done = E.ensure_ingested(ws, root, force=bool(ingest), progress=progress.say)
            if done == "stale":
                progress.say("warning: the graph is older than the work tree (merged roots kept; re-ingest to "
                             "refresh)")
        elif not ws.graph.graph().n:
            raise GraphEmptyError("the graph is empty and --no-ingest was given",
                                  recover=f"run `m1nd ingest {root}` first, or drop --no-ingest")
        args: dict[str, Any] = {}
        if dimensions:
            args["dimensions"] = [d.strip() for d in dimensions.split(",") if d.strip()]
        ev = E.evaluate(ws, qset, activate_args=args, top_k=top_k, embeddings=not no_embeddings,
                        progress=progress.step)
    finally:
        progress.clear()
        ws.close()
    if json_out:
        out = ev.to_dict()
        out["set"] = {k: v for k, v in qset.to_dict().items() if k != "queries"}
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    click.echo(f"Change localization on {root} (HEAD {(qset.head or '?')[:12]}): {len(qset.queries)} queries from "
               f"{qset.commits_scanned} commits, {len(qset.source_files)} candidate files")
    click.echo(E.format_table(ev.scores, labels={"m1nd": "m1nd activate", "fts5": "BM25 (FTS5)"}))
    backends = ev.score("m1nd").notes.get("semantic_backends", {})
    if backends:
        click.echo("activate semantic backend: " + ", ".join(f"{b} ({n})" for b, n in backends.items()))
    if details:
        names = [s.name for s in ev.scores]
        cells = [[",".join("-" if r is None else str(r) for r in pq["ranks"][n]) for n in names] for pq in ev.per_query]
        width = max((len(c) for row in cells for c in row), default=1)
        click.echo("")
        click.echo("rank of each answer file per ranker (- = not ranked), query -> answer files")
        for pq, row in zip(ev.per_query, cells):
            ranks = "  ".join(f"{n} {c:<{width}}" for n, c in zip(names, row))
            click.echo(f"{pq['commit'][:8]}  {ranks}  {pq['query']} -> {', '.join(pq['gold'])}")


def register(cli: click.Group) -> None:
    cli.add_command(eval_cmd)
