"""Bearer tokens of the shared HTTP runtime (issue 18, item 4): ``tokens.db`` in the home, beside ``memory.db``.

A token is shown once, when it is created; only its SHA-256 digest is stored. The token names its own row
(``m1nd_<id>_<secret>``), so a check is one primary-key lookup and a constant-time digest comparison. A plain
digest (no salt, no slow hash) is enough because the secret is 256 random bits, not a password.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from m1nd.store.db import Database, Migration, open_db

TOKEN_MIGRATIONS: list[Migration] = [
    # 1: one row per issued token; revoked rows stay (the list shows when and which)
    """
    CREATE TABLE tokens (
        id TEXT PRIMARY KEY, digest TEXT NOT NULL, agent TEXT NOT NULL, note TEXT,
        created_ms INTEGER NOT NULL, expires_ms INTEGER, revoked_ms INTEGER) WITHOUT ROWID;
    CREATE INDEX tokens_agent ON tokens(agent);
    """,
]


@dataclass(frozen=True, slots=True)
class TokenRow:
    id: str
    digest: str
    agent: str
    note: str | None
    created_ms: int
    expires_ms: int | None
    revoked_ms: int | None


_COLUMNS = "id, digest, agent, note, created_ms, expires_ms, revoked_ms"


class TokenRepository:
    """The ``tokens`` table. Every method is one transaction. The HTTP server checks tokens from short-lived
    request threads, so one connection is shared under a lock (a connection per thread would pile up)."""

    def __init__(self, path: Path, *, busy_timeout_ms: int = 10000) -> None:
        self._db: Database = open_db(path, TOKEN_MIGRATIONS, busy_timeout_ms=busy_timeout_ms)
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _using(self) -> Iterator[Database]:
        with self._lock:
            yield self._db

    def insert(self, row: TokenRow) -> bool:
        """Store ``row``; False when its id is taken (the caller draws another)."""
        with self._using() as db, db.write():
            if db.one("SELECT 1 FROM tokens WHERE id = ?", (row.id,)) is not None:
                return False
            db.execute(f"INSERT INTO tokens({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (row.id, row.digest, row.agent, row.note, row.created_ms, row.expires_ms, row.revoked_ms))
        return True

    def get(self, token_id: str) -> TokenRow | None:
        with self._using() as db, db.read():
            r = db.one(f"SELECT {_COLUMNS} FROM tokens WHERE id = ?", (token_id,))
        return TokenRow(*r) if r is not None else None

    def all(self) -> Sequence[TokenRow]:
        with self._using() as db, db.read():
            rows = db.all(f"SELECT {_COLUMNS} FROM tokens ORDER BY created_ms, id")
        return [TokenRow(*r) for r in rows]

    def count_usable(self, now_ms: int) -> int:
        with self._using() as db, db.read():
            return int(db.scalar("SELECT count(*) FROM tokens WHERE revoked_ms IS NULL AND "
                                 "(expires_ms IS NULL OR expires_ms > ?)", (now_ms,), default=0))

    def revoke(self, token_id: str, now_ms: int) -> TokenRow | None:
        """Mark ``token_id`` revoked (kept when already revoked); the row after, or None when unknown."""
        with self._using() as db, db.write():
            db.execute("UPDATE tokens SET revoked_ms = ? WHERE id = ? AND revoked_ms IS NULL", (now_ms, token_id))
            r = db.one(f"SELECT {_COLUMNS} FROM tokens WHERE id = ?", (token_id,))
        return TokenRow(*r) if r is not None else None

    def close(self) -> None:
        with self._lock:
            self._db.close()
