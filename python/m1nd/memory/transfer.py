"""Moving entries in and out: export (the entry JSON shape, optionally with vectors), seeding knowledge from a JSONL
file (one transaction; a bad line aborts the file) and seeding agents from a directory of ``*.md`` front matter.

Imports accept the entry JSON shape and the reference implementation's shape (:func:`normalise_import`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from m1nd.errors import InvalidInputError, M1ndError, NotFoundError
from m1nd.memory import fields as F
from m1nd.memory.ids import new_entry_id, normalize_entry_id
from m1nd.memory.registries import CATEGORY_ID
from m1nd.memory.results import AgentsSeeded, Seeded
from m1nd.memory.snapshots import Snapshots
from m1nd.store.memory_schema import FACT_TYPES
from m1nd.timeutil import normalise_ts, now_iso, now_ms


class Transfer(Snapshots):
    def export_entries(self, *, agent: str | None, include_embeddings: bool = False) -> Iterator[dict[str, Any]]:
        """Every visible entry in the entry JSON shape, oldest first (one read snapshot)."""
        now = now_ms()
        with self._read() as tx:
            for e in tx.entries.visible_entries(agent, now):
                js = e.to_json()
                if include_embeddings:
                    blob = tx.entries.entry_vector(e.rowid)
                    if blob is not None:
                        import numpy as np  # only an export with embeddings pays for numpy

                        js["embedding"] = np.frombuffer(blob, dtype="<f4").tolist()
                yield js

    def seed_knowledge(self, path: Path, *, agent: str | None, overwrite: bool = False,
                       progress: Callable[[int], None] | None = None) -> Seeded:
        """Import one JSONL file of entry objects in one transaction; a bad line aborts the file."""
        notes: list[str] = []
        imported = skipped = 0
        ts = now_iso()
        try:
            fh = path.open("r", encoding="utf-8")
        except OSError as e:
            raise InvalidInputError(f"cannot read {path}: {e.strerror or e}") from None
        pending_anchors: list[tuple[int, list[str]]] = []
        seen: set[str] = set()
        with fh, self._write() as tx:
            regs = self._registries(tx)
            for n, line in enumerate(fh, start=1):
                s = line.strip()
                if not s or s.startswith("#"):
                    continue
                try:
                    obj = json.loads(s)
                    if not isinstance(obj, dict):
                        raise InvalidInputError("line is not a JSON object")
                    snap = normalise_import(obj)
                    eid = snap["id"]
                    hit = tx.entries.rowid_of(eid)
                    if hit is not None:
                        if not overwrite:
                            skipped += 1
                            continue
                        tx.entries.delete_entry(hit[0])
                    self._ensure_registry_values(tx, snap, regs, ts, notes)
                    rowid, collided = self._insert_snapshot(tx, snap, ts, agent, sessions_seen=seen)
                    if collided:
                        notes.append(f"note: {eid} duplicates an entry of its session; imported with dedup exemption")
                    if snap.get("anchors"):
                        pending_anchors.append((rowid, snap["anchors"]))
                    imported += 1
                    if progress is not None and imported % 10000 == 0:
                        progress(imported)
                except json.JSONDecodeError as e:
                    raise InvalidInputError(f"line {n}: invalid JSON: {e.msg} (column {e.colno})") from None
                except M1ndError as e:
                    raise InvalidInputError(f"line {n}: {e.message}") from None
            for rowid, anchors in pending_anchors:
                for aid in anchors:
                    hit = tx.entries.rowid_of(aid)
                    if hit is None or hit[0] == rowid:
                        notes.append(f"note: anchor {aid} of an imported entry does not exist; dropped")
                        continue
                    tx.entries.add_anchor(rowid, hit[0], ts)
        return Seeded(imported=imported, skipped=skipped, notes=notes)

    def seed_agents(self, directory: Path) -> AgentsSeeded:
        """Register (or update) an agent per ``*.md`` file with front matter (name, description, domain); files
        starting with ``_`` are not read."""
        if not directory.is_dir():
            raise NotFoundError(f"No agent seed directory at {directory}")
        seeded: list[str] = []
        notes: list[str] = []
        ts = now_iso()
        rows = []
        for p in sorted(directory.glob("*.md")):
            if p.name.startswith("_"):
                continue
            try:
                meta = front_matter(p.read_text(encoding="utf-8"))
                for key in ("name", "description"):
                    if not meta.get(key):
                        raise ValueError(f"missing '{key}'")
                rows.append((meta["name"], meta["description"], meta.get("domain") or None))
            except (OSError, UnicodeDecodeError, ValueError) as e:
                notes.append(f"skipped {p.name}: {e}")
        with self._write() as tx:
            for name, desc, domain in rows:
                tx.registries.upsert_agent(name, desc, domain, ts, keep_unset=False)
                seeded.append(name)
        return AgentsSeeded(seeded=seeded, notes=notes)


def front_matter(text: str) -> dict[str, str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("no front matter (--- block)")
    out: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return out
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"malformed front matter line: {line.strip()!r}")
        v = value.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
            v = v[1:-1]
        out[key.strip()] = v
    raise ValueError("front matter is not closed with ---")


_IMPORT_ALIASES = {"category": "category_id", "source_agent": "source_agent_id", "project": "source_project_id",
                   "source_project": "source_project_id", "source_type": "source_type_id",
                   "entry_type": "entry_type_id", "content_type": "content_type_id", "content": "body"}
_IMPORT_IGNORED = {"embedding", "decay_rate", "format", "file_path", "effective_resonance", "content_hash",
                   "chunk_count", "embedding_model", "embedded_at", "score", "rev"}


def normalise_import(obj: dict[str, Any]) -> dict[str, Any]:
    """A seed line (entry JSON shape, or the reference's shape) → the entry JSON shape, validated."""
    snap: dict[str, Any] = {}
    for k, v in obj.items():
        if k in _IMPORT_IGNORED:
            continue
        snap[_IMPORT_ALIASES.get(k, k)] = v
    if not isinstance(snap.get("title"), str):
        raise InvalidInputError("field 'title' is required and must be a string")
    F.check_title(snap["title"])
    body = snap.get("body")
    if body is None:
        snap["body"] = ""
    elif not isinstance(body, str):
        raise InvalidInputError("field 'body' must be a string")
    F.check_body(snap["body"])
    if not isinstance(snap.get("category_id"), str) or not CATEGORY_ID.match(snap["category_id"]):
        raise InvalidInputError(f"field 'category_id' must be a category id (got {snap.get('category_id')!r})")
    raw_id = snap.get("id")
    if raw_id is None:
        snap["id"] = new_entry_id()
    elif not isinstance(raw_id, str):
        raise InvalidInputError("field 'id' must be a string")
    else:
        snap["id"] = normalize_entry_id(raw_id)
    for key in ("tags", "applicability", "anchors", "wake_phrases", "code_refs"):
        v = snap.get(key)
        if v is None:
            snap[key] = []
        elif isinstance(v, str):
            snap[key] = F.split_list(v)
        elif isinstance(v, list) and all(isinstance(x, str) for x in v):
            snap[key] = [x.strip() for x in v if x.strip()]
        else:
            raise InvalidInputError(f"field '{key}' must be an array of strings")
    F.check_tags(snap["tags"])
    snap["anchors"] = [normalize_entry_id(a) for a in snap["anchors"]]
    one = snap.pop("wake_phrase", None)
    if isinstance(one, str) and one.strip() and one.strip() not in snap["wake_phrases"]:
        snap["wake_phrases"].insert(0, one.strip())
    for key in ("resonance", "activation_count", "wake_order"):
        v = snap.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise InvalidInputError(f"field '{key}' must be an integer")
        if isinstance(v, float):
            snap[key] = round(v)
    summary = snap.get("summary")
    if isinstance(summary, str) and summary.lstrip().startswith("{"):
        with contextlib.suppress(ValueError):
            meta = json.loads(summary)
            if isinstance(meta, dict) and ("fact_type" in meta or "type" in meta):
                ft = meta.get("fact_type") or meta.get("type")
                if ft in FACT_TYPES:
                    snap.setdefault("fact_type", ft)
                    if snap.get("fact_type") is None:
                        snap["fact_type"] = ft
                st = meta.get("state") or meta.get("fact_state")
                if st in ("open", "closed") and snap.get("fact_state") is None:
                    snap["fact_state"] = st
                snap["summary"] = None
    if snap.get("fact_type") is not None and snap["fact_type"] not in FACT_TYPES:
        raise InvalidInputError(f"Invalid fact type '{snap['fact_type']}'")
    if snap.get("fact_state") not in (None, "open", "closed"):
        raise InvalidInputError(f"field 'fact_state' must be open or closed (got {snap['fact_state']!r})")
    rt = snap.get("resonance_type")
    if rt is not None:
        F.check_resonance_type(rt)
    vis = snap.get("visibility") or "public"
    if vis not in ("public", "private"):
        raise InvalidInputError("field 'visibility' must be 'public' or 'private'")
    snap["visibility"] = vis
    if vis == "private" and not snap.get("owner"):
        raise InvalidInputError("a private entry needs an 'owner'")
    for key in ("created_at", "updated_at", "last_activated"):
        if snap.get(key) is not None:
            snap[key] = normalise_ts(snap[key], key)
    if snap.get("session_id") is not None:
        snap["session_id"] = F.check_session_id(str(snap["session_id"]))
    for key in ("source_agent_id", "source_project_id", "source_type_id", "entry_type_id", "content_type_id",
                "domain", "owner"):
        if snap.get(key) is not None and not isinstance(snap[key], str):
            raise InvalidInputError(f"field '{key}' must be a string")
    return snap
