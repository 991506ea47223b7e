"""``m1nd memory migrate --to TARGET`` (issue 18 item 3): copy the knowledge memory between its two stores, the
``memory.db`` file and a PostgreSQL server, either way. An adapter over :func:`m1nd.store.memory_copy.copy_memory`;
registered on the ``memory`` group by :mod:`m1nd.cli.memory`. Progress on stderr, the result on stdout."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from m1nd.cli.memory import _service, emit_json, handled, json_option, memory_group, note, out


def _target(raw: str) -> str | Path:
    """``postgresql://…``, ``sqlite:PATH`` or a plain path (a ``memory.db`` file)."""
    from m1nd.errors import InvalidInputError
    from m1nd.store.pg_url import is_postgres_url

    raw = raw.strip()
    if is_postgres_url(raw):
        return raw
    if raw.startswith("sqlite:"):
        raw = raw[len("sqlite:"):]
    if not raw or "://" in raw:
        raise InvalidInputError(f"--to {raw!r} names no store",
                                recover="use postgresql://user@host/db, sqlite:PATH or a path to a memory.db file")
    return Path(raw).expanduser().absolute()


@memory_group.command("migrate")
@click.option("--to", "to", required=True, metavar="TARGET",
              help="Where to copy the memory: postgresql://user[:password]@host[:port]/db, sqlite:PATH or a path.")
@click.option("--replace", is_flag=True, help="Overwrite a target that already holds a memory (refused otherwise).")
@json_option
@handled
def migrate_cmd(to: str, replace: bool, as_json: bool) -> None:
    """Copy the whole knowledge memory (entries, sessions, relationships, registries, backups, vectors, wake
    logs) from the current store (M1ND_MEMORY_URL / --memory-url, else memory.db) to another one, in one
    transaction on the target; row counts are compared table by table before it commits. The source is left as
    it was. Then point M1ND_MEMORY_URL (or --memory-url) at the target."""
    from m1nd.memory.service import MemoryService
    from m1nd.store.memory_copy import copy_memory, describe

    src = _service()
    target = _target(to)
    dst = MemoryService(target)
    try:
        shown: dict[str, float] = {}

        def progress(table: str, done: int, total: int) -> None:
            now = time.monotonic()
            if done == total or now - shown.get(table, 0.0) >= 2.0:
                shown[table] = now
                note(f"migrate: {table} {done}/{total}")

        note(f"migrate: {describe(src)} -> {describe(dst)}")
        counts = copy_memory(src, dst, replace=replace, progress=progress)
    finally:
        dst.close()
    result: dict[str, Any] = {"status": "ok", "from": describe(src), "to": describe(dst), "tables": counts,
                              "entries": counts.get("entries", 0), "verified": True}
    if as_json:
        emit_json(result)
        return
    out(f"Copied {result['entries']} entries and {sum(counts.values()) - result['entries']} other rows "
        f"to {result['to']} (row counts verified).")
