"""Moving the knowledge memory to another store (``m1nd memory migrate --to``, issue 18 item 3): the ``memory.db``
file to a PostgreSQL server and back. Opens the target as a memory of its own (schema applied) and hands both to
:func:`m1nd.store.memory_copy.copy_memory`, which copies and verifies inside one target transaction."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from m1nd.errors import InvalidInputError
from m1nd.memory.fts import ident_text
from m1nd.memory.results import Migrated
from m1nd.store.memory_copy import copy_memory, describe
from m1nd.store.pg_url import is_postgres_url


def parse_target(raw: str) -> str | Path:
    """``postgresql://…``, ``sqlite:PATH`` or a plain path (a ``memory.db`` file)."""
    raw = raw.strip()
    if is_postgres_url(raw):
        return raw
    raw = raw.removeprefix("sqlite:")
    if not raw or "://" in raw:
        raise InvalidInputError(f"--to {raw!r} names no store: use postgresql://user@host/db, sqlite:PATH or a path",
                                recover="use postgresql://user@host/db, sqlite:PATH or a path to a memory.db file")
    return Path(raw).expanduser().absolute()


def migrate_to(src: Any, to: str, *, replace: bool = False,
               progress: Callable[[str, int, int], None] | None = None,
               on_start: Callable[[str, str], None] | None = None) -> Migrated:
    """Copy memory service ``src`` to the store ``to`` (verified before the target commits)."""
    from m1nd.memory.service import MemoryService

    dst = MemoryService(parse_target(to))
    try:
        if on_start is not None:
            on_start(describe(src), describe(dst))
        counts = copy_memory(src, dst, ident=ident_text, replace=replace, progress=progress)
        return Migrated(source=describe(src), target=describe(dst), tables=counts, entries=counts.get("entries", 0))
    finally:
        dst.close()
