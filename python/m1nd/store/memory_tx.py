"""One memory transaction's repositories on one SQLite connection: the SQLite :class:`MemoryUnitOfWork`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from m1nd.store.db import Database
from m1nd.store.memory_backups import BackupRepo
from m1nd.store.memory_registries import RegistryRepo
from m1nd.store.memory_relationships import RelationshipRepo
from m1nd.store.memory_repo import EntryRepo, MetaRepo
from m1nd.store.memory_sessions import SessionRepo
from m1nd.store.memory_vectors import VectorRepo
from m1nd.store.memory_wake import GuessLogRepo, RitualRepo, WakeRepo


class MemoryTx:
    """The repositories of one memory transaction, all on the same connection (:class:`MemoryUnitOfWork`).

    ``db`` stays reachable for the vector and wake modules whose SQL has not moved into repositories yet."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.entries = EntryRepo(db)
        self.sessions = SessionRepo(db)
        self.relationships = RelationshipRepo(db)
        self.registries = RegistryRepo(db)
        self.backups = BackupRepo(db)
        self.meta = MetaRepo(db)
        self.vectors = VectorRepo(db)
        self.wake = WakeRepo(db)
        self.ritual = RitualRepo(db)
        self.guesses = GuessLogRepo(db)

    @contextlib.contextmanager
    def savepoint(self, name: str = "line") -> Iterator[None]:
        """A nested unit inside the transaction: rolled back alone on any exception (partial batch success)."""
        self.db.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            self.db.execute(f"ROLLBACK TO {name}")
            self.db.execute(f"RELEASE {name}")
            raise
        self.db.execute(f"RELEASE {name}")
