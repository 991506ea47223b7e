"""``m1nd memory migrate --to TARGET`` (issue 18 item 3): copy the knowledge memory between its two stores, the
``memory.db`` file and a PostgreSQL server, either way; with ``--to`` it is an adapter over
:func:`m1nd.memory.migration.migrate_to` (through :mod:`m1nd.tools.memory_ops`). Progress on stderr, the result on
stdout."""

from __future__ import annotations

import time

import click

from m1nd.cli.memory.common import (emit_json, handled, json_option, memory_group, memory_workspace, note,
                                    open_service, out, usage)


def copy_to(to: str, *, replace: bool, as_json: bool) -> None:
    """Copy the current memory to ``to``, reporting progress at most every 2 s per table."""
    from m1nd.tools.memory_ops import migrate_to

    shown: dict[str, float] = {}

    def progress(table: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - shown.get(table, 0.0) >= 2.0:
            shown[table] = now
            note(f"migrate: {table} {done}/{total}")

    result = migrate_to(memory_workspace(), to, replace=replace, progress=progress,
                        on_start=lambda a, b: note(f"migrate: {a} -> {b}"))
    if as_json:
        emit_json(result.to_dict())
        return
    out(f"Copied {result.entries} entries and {sum(result.tables.values()) - result.entries} other rows "
        f"to {result.target} (row counts verified).")


@memory_group.command("migrate")
@click.option("--to", "to", metavar="TARGET",
              help="Copy the whole memory to another store: postgresql://user[:password]@host[:port]/db, "
                   "sqlite:PATH or a path to a memory.db file (issue 18).")
@click.option("--replace", is_flag=True, help="With --to: overwrite a target that already holds a memory.")
@json_option
@handled
def migrate_cmd(to: str | None, replace: bool, as_json: bool) -> None:
    """Apply the memory schema explicitly (ignores M1ND_SKIP_SCHEMA); with --to, copy the whole memory (entries,
    sessions, relationships, registries, backups, vectors, wake logs) from the current store (M1ND_MEMORY_URL /
    --memory-url, else memory.db) to another one, in one transaction on the target, row counts compared table by
    table before it commits. The source is left as it was."""
    if to is not None:
        copy_to(to, replace=replace, as_json=as_json)
        return
    if replace:
        usage("--replace needs --to")
    svc = open_service(apply_schema=False)
    applied, version = svc.migrate()
    if applied:
        out(f"Applied {applied} migration(s); schema version {version}")
    else:
        out(f"Schema up to date (version {version})")
