"""Moving a workspace's trails and learned weights between its shared stores (issue 18 item 3):
``m1nd learning migrate --to postgresql://…`` uploads what ``graph.db`` holds into the server's project (the
workspace's :func:`m1nd.config.team_project`), ``--to local`` brings a project's trails and weights down into this
workspace's ``graph.db``.

Not part of ``m1nd memory migrate``: the memory belongs to the home (one per user), trails and learned weights to
a workspace (``graph.db``) or a project (on a server), so they move with their own command run inside the
workspace. Learned weights travel keyed by external ids with their base weight, and land replayed onto the
target's base weights (``w0_target + (w − w0)``, exact where both ingested the same code); weights naming edges a
local graph lacks are counted as skipped.

One transaction on the target: a non-empty target is refused unless ``replace``; the copy is read back and its
row counts compared with the source's before it commits; the source is left as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from m1nd.codegraph.results import LearningMigrated
from m1nd.errors import InvalidInputError, StoreError
from m1nd.graph.engine import W_MAX, W_MIN
from m1nd.store.pg_url import is_postgres_url, redact
from m1nd.store.team_contract import SharedLearningStore
from m1nd.store.team_sqlite import SqliteLearningStore
from m1nd.timeutil import now_ms

if TYPE_CHECKING:
    from m1nd.codegraph.service import CodeGraph

LOCAL = ("local", "graph.db")


def _describe(store: SharedLearningStore, cg: CodeGraph) -> str:
    if store.remote:
        return f"{redact(str(getattr(store, 'store').url))} (project {getattr(store, 'project')!r})"
    return str(cg.store.path)


def _open_target(cg: CodeGraph, to: str) -> SharedLearningStore:
    to = to.strip()
    if to in LOCAL:
        if not cg.shared.remote:
            raise InvalidInputError("trails and learned weights are already in this workspace's graph.db",
                                    recover="pass --to postgresql://… to upload them, or run with --memory-url "
                                            "to bring a server's down")
        return SqliteLearningStore(cg.store.db)
    if not is_postgres_url(to):
        raise InvalidInputError(f"--to {redact(to)!r} names no store: use postgresql://user@host/db or 'local'",
                                recover="use postgresql://user[:password]@host[:port]/db, or local for graph.db")
    if cg.shared.remote and redact(to) == redact(cg.settings.memory_url or ""):
        raise InvalidInputError("the target is the store in use (M1ND_MEMORY_URL / --memory-url)",
                                recover="pass --to local to copy the project into this workspace's graph.db")
    from m1nd.config import team_project
    from m1nd.store.pg_team_repo import open_pg_learning

    return open_pg_learning(to, team_project(cg.settings.workspace_key),
                            lock_timeout_ms=cg.settings.busy_timeout_ms)


def migrate_learning(cg: CodeGraph, to: str, *, replace: bool = False) -> LearningMigrated:
    """Copy the current shared store's trails, learn log and learned weights to ``to``; the counts."""
    with cg.lock:
        cg.require_graph()  # learned weights land on (or are read against) this workspace's graph
        src = cg.shared
        dst = _open_target(cg, to)
        try:
            with src.read():
                dump = src.dump()
            counts = dump.counts()
            with dst.write():
                if not dst.is_empty():
                    if not replace:
                        raise InvalidInputError(
                            f"{_describe(dst, cg)} already holds trails or learned weights",
                            recover="pass --replace to overwrite them, or migrate into another project "
                                    "(M1ND_TEAM_PROJECT)")
                    dst.clear(now_ms())
                applied = dst.load(dump, w_min=W_MIN, w_max=W_MAX, updated_ms=now_ms())
                back = dst.dump().counts()
                expected = dict(counts, learned_weights=applied)
                if back != expected:
                    raise StoreError(f"the copy does not match its source (source {counts}, copied {back}); "
                                     "nothing was written", recover="report this; the source is unchanged")
                generation = dst.learning.bump_generation()
            result = LearningMigrated(source=_describe(src, cg), target=_describe(dst, cg), tables=counts,
                                      learned_weights_applied=applied,
                                      learned_weights_skipped=len(dump.weights) - applied,
                                      weights_generation=generation)
        finally:
            if dst is not src and dst.remote:
                dst.close()
        return result
