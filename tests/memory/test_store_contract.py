"""The memory's storage contract (issue 16 item 4, ready for issue 18): SQL only in ``m1nd.store``, and the SQLite
repositories implement every method of the backend-neutral protocols with the same parameters."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import Protocol

import m1nd.memory
import pytest
from m1nd.store import memory_contract as C
from m1nd.store.memory_backups import BackupRepo
from m1nd.store.memory_registries import RegistryRepo
from m1nd.store.memory_relationships import RelationshipRepo
from m1nd.store.memory_repo import EntryRepo, MetaRepo
from m1nd.store.memory_sessions import SessionRepo
from m1nd.store.memory_tx import MemoryTx
from m1nd.store.memory_vectors import VectorRepo
from m1nd.store.memory_wake import GuessLogRepo, RitualRepo, WakeRepo

SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE|PRAGMA|SAVEPOINT|ROLLBACK|RELEASE)\b")
PAIRS = {
    C.EntryRepository: EntryRepo, C.SessionRepository: SessionRepo, C.RelationshipRepository: RelationshipRepo,
    C.RegistryRepository: RegistryRepo, C.BackupRepository: BackupRepo, C.MetaRepository: MetaRepo,
    C.VectorRepository: VectorRepo, C.WakeRepository: WakeRepo, C.RitualRepository: RitualRepo,
    C.GuessLogRepository: GuessLogRepo,
}


def _sql_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs and SQL.search(n.value):
            out.append(f"{path.name}:{n.lineno}: {n.value[:60]!r}")
    return out


def test_no_sql_in_the_memory_package() -> None:
    found = [s for p in sorted(Path(m1nd.memory.__file__).parent.glob("*.py")) for s in _sql_literals(p)]
    assert found == [], "SQL belongs in m1nd.store (a repository of the memory contract):\n" + "\n".join(found)


def _methods(proto: type) -> dict[str, inspect.Signature]:
    return {n: inspect.signature(f) for n, f in vars(proto).items()
            if callable(f) and not n.startswith("_")}


@pytest.mark.parametrize("proto", list(PAIRS), ids=lambda p: p.__name__)
def test_sqlite_repository_implements_its_protocol(proto: type[Protocol]) -> None:
    impl = PAIRS[proto]
    want = _methods(proto)
    assert want, proto
    for name, sig in want.items():
        assert hasattr(impl, name), f"{impl.__name__} lacks {name}"
        got = inspect.signature(getattr(impl, name))
        assert list(got.parameters) == list(sig.parameters), f"{impl.__name__}.{name}: {got} != {sig}"
        for p, q in zip(got.parameters.values(), sig.parameters.values(), strict=True):
            assert (p.kind, p.default) == (q.kind, q.default), f"{impl.__name__}.{name}: {got} != {sig}"


def test_unit_of_work_offers_every_repository(tmp_path: Path) -> None:
    from m1nd.store.db import open_db
    from m1nd.store.memory_schema import MIGRATIONS

    db = open_db(tmp_path / "m.db", MIGRATIONS)
    try:
        tx = MemoryTx(db)
        for name, proto in C.MemoryUnitOfWork.__annotations__.items():
            repo = getattr(tx, name)
            assert type(repo) is PAIRS[getattr(C, proto) if isinstance(proto, str) else proto], name
        with db.write():
            tx.meta.ensure("k", "v1")
            with pytest.raises(RuntimeError), tx.savepoint():
                tx.meta.ensure("k2", "v")
                raise RuntimeError("roll this line back")
            tx.meta.ensure("k", "v2")  # ensure never overwrites
        assert (tx.meta.get("k"), tx.meta.get("k2")) == ("v1", None)
    finally:
        db.close()
