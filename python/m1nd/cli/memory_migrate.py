"""``m1nd memory migrate --to TARGET`` (issue 18 item 3): copy the knowledge memory between its two stores, the
``memory.db`` file and a PostgreSQL server, either way. An adapter over :func:`m1nd.memory.migration.migrate_to`,
called by the ``migrate`` command of :mod:`m1nd.cli.memory` when ``--to`` is given. Progress on stderr, the result
on stdout."""

from __future__ import annotations

import time

from m1nd.cli.memory import _service, emit_json, note, out


def copy_to(to: str, *, replace: bool, as_json: bool) -> None:
    """Copy the current memory to ``to``, reporting progress at most every 2 s per table."""
    from m1nd.memory.migration import migrate_to

    shown: dict[str, float] = {}

    def progress(table: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - shown.get(table, 0.0) >= 2.0:
            shown[table] = now
            note(f"migrate: {table} {done}/{total}")

    result = migrate_to(_service(), to, replace=replace, progress=progress,
                        on_start=lambda a, b: note(f"migrate: {a} -> {b}"))
    if as_json:
        emit_json(result)
        return
    counts = result["tables"]
    out(f"Copied {result['entries']} entries and {sum(counts.values()) - result['entries']} other rows "
        f"to {result['to']} (row counts verified).")
