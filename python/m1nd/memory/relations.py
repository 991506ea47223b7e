"""Relationships between entries and reinforcement (resonance up by use).

Relating two entries reinforces the target by one (capped at :data:`~m1nd.defaults.RESONANCE_CAP`) unless the link
says it is wrong or outdated (``contradicts``, ``supersedes``) or the caller asks not to.
"""

from __future__ import annotations

from m1nd.defaults import RESONANCE_CAP
from m1nd.errors import InvalidInputError, NotFoundError
from m1nd.memory.core import MemoryCore
from m1nd.memory.ids import new_relationship_id
from m1nd.memory.results import Deleted, Reinforcement, Related, Relationship
from m1nd.timeutil import now_iso

NO_REINFORCE_TYPES = frozenset({"contradicts", "supersedes"})


class Relations(MemoryCore):
    def relationships(self, raw_id: str, *, agent: str | None) -> tuple[str, list[Relationship]]:
        with self._read() as tx:
            rowid = self._resolve(tx, raw_id, agent, "Entry '{id}' not found")
            eid = tx.entries.id_of(rowid)
            rows = tx.relationships.of_entry(rowid, agent)
        return eid, [Relationship(id=r[0], from_entry_id=r[1], to_entry_id=r[2], relationship_type=r[3],
                                  created_at=r[4], direction="out" if r[5] else "in") for r in rows]

    def relate(self, from_raw: str, to_raw: str, rel_type: str, *, agent: str | None, reinforce: bool = True
               ) -> Related:
        with self._write() as tx:
            types = tx.registries.ids("relationship_types")
            if rel_type not in types:
                raise InvalidInputError(f"Invalid relationship type '{rel_type}'. Valid types: {', '.join(types)}")
            fr = self._resolve(tx, from_raw, agent, "Entry '{id}' not found")
            to = self._resolve(tx, to_raw, agent, "Entry '{id}' not found")
            if fr == to:
                raise InvalidInputError("An entry cannot be related to itself")
            fid = tx.entries.id_of(fr)
            tid = tx.entries.id_of(to)
            ts = now_iso()
            rel_id = new_relationship_id()
            existing = tx.relationships.insert(rel_id, fr, to, rel_type, ts)
            reinforced = False
            if existing is None and reinforce and rel_type not in NO_REINFORCE_TYPES \
                    and tx.entries.value_of(to, "resonance") < RESONANCE_CAP:
                tx.entries.bump_resonance(to, ts, cap=RESONANCE_CAP)
                reinforced = True
        return Related(id=existing or rel_id, from_id=fid, to_id=tid, type=rel_type, reinforced=reinforced,
                       existing=existing is not None)

    def unrelate(self, rel_id: str, *, agent: str | None) -> Deleted:
        rid = rel_id.strip()
        with self._write() as tx:
            if not tx.relationships.visible(rid, agent):
                raise NotFoundError(f"Relationship '{rid}' not found")
            tx.relationships.delete(rid)
        return Deleted(id=rid)

    def reinforce(self, raw_id: str, *, agent: str | None, amount: int = 1, cap: int = RESONANCE_CAP
                  ) -> Reinforcement:
        if not isinstance(amount, int) or amount == 0 or not -10 <= amount <= 10:
            raise InvalidInputError("--amount must be a non-zero integer between -10 and 10")
        if not 1 <= cap <= 100:
            raise InvalidInputError("--cap must be an integer between 1 and 100")
        with self._write() as tx:
            rowid = self._resolve(tx, raw_id, agent, "Entry '{id}' not found")
            eid, old, count = tx.entries.reinforce_state(rowid)
            if old > cap:
                new, capped = old, True
            else:
                new = min(old + amount, cap)
                capped = old + amount > cap
            ts = now_iso()
            tx.entries.set_resonance(rowid, new, ts)
        return Reinforcement(id=eid, old_resonance=old, new_resonance=new, amount_added=new - old, capped=capped,
                             cap=cap, last_activated=ts, activation_count=count + 1)
