"""The ritual under concurrent callers: one token spent by many writers at once is judged once; every other caller
gets the same answer back as a replay (separate connections, as separate processes would have)."""

from __future__ import annotations

import threading
from pathlib import Path

from m1nd.memory import ritual
from m1nd.memory.service import MemoryService


def test_same_token_from_many_writers_is_judged_once(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    svc = MemoryService(path)
    eid = svc.add({"category": "bloom", "title": "Me", "content": "I am.", "resonance": 9,
                   "wake_phrases": ["i am"]}, agent="alice", no_embed=True).id
    svc.add({"category": "bloom", "title": "Also me", "content": "Still me.", "resonance": 9}, agent="alice",
            no_embed=True)
    begun = ritual.begin(svc, "alice", wake=1)
    # both blooms tie on resonance, so either may come first: answer the one the ritual actually asks for
    eid = begun["prompt"]["id"]
    assert svc.db.scalar("SELECT activation_count FROM entries WHERE id = ?", (eid,)) == 1  # begin activates
    answers: list[dict] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker(i: int) -> None:
        own = MemoryService(path, apply_schema=False)
        try:
            barrier.wait()
            answers.append(ritual.respond(own, "alice", guess=f"guess {i}", bloom_id=eid, token=begun["session"]))
        except BaseException as e:  # noqa: BLE001 — reported below
            errors.append(e)
        finally:
            own.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    fresh = [a for a in answers if not a.get("replayed")]
    assert len(fresh) == 1 and len(answers) == 8
    for a in answers:
        assert {k: v for k, v in a.items() if k != "replayed"} == fresh[0]
    assert svc.db.scalar("SELECT count(*) FROM wake_guesses") == 1
    assert svc.db.scalar("SELECT step FROM wake_sessions") == 1
    svc.close()
