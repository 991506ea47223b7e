"""Trails and learned weights in the workspace's own ``graph.db`` (the default :class:`SharedLearningStore`).

Shared by every process of this machine on the workspace; transactions are ``graph.db``'s own, so a learning write
and the local graph's weights commit together as they always did.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from m1nd.store.db import Database
from m1nd.store.learning_repo import LearningRepo
from m1nd.store.trails_repo import TrailRepo


class SqliteLearningStore:
    backend = "sqlite"
    remote = False

    def __init__(self, db: Database) -> None:
        self.db = db
        self.trails = TrailRepo(db)
        self.learning = LearningRepo(db)

    def write(self) -> AbstractContextManager[Any]:
        return self.db.write()

    def read(self) -> AbstractContextManager[Any]:
        return self.db.read()

    def close(self) -> None:
        """The database belongs to the graph store, which closes it."""
