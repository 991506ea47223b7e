"""The update planner: from the current entry and the requested changes, the new values and the change lines.

Pure apart from resolving anchor ids (a read): :meth:`UpdatePlanning._plan_update` decides every field (title,
content modes, category, tags, applicability, resonance, anchors, wake phrases, code refs, visibility and owner,
session) and returns an :class:`UpdatePlan` for :mod:`m1nd.memory.updating` to write.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from m1nd.errors import InvalidInputError, NotFoundError
from m1nd.memory import fields as F
from m1nd.memory.core import MemoryCore
from m1nd.memory.ids import normalize_entry_id
from m1nd.store.memory_contract import Entry


@dataclass
class UpdatePlan:
    """What an update writes: the entry's new column values (``values``, lists already as their stored JSON text),
    the tag and applicability lists when they change (None: unchanged), the anchors to add and remove (rowids),
    the change lines of the answer, and the find/replace count and the bytes an append or prepend added."""

    values: dict[str, Any] = field(default_factory=dict)
    changes: list[str] = field(default_factory=list)
    tags: list[str] | None = None
    applicability: list[str] | None = None
    anchors_add: list[int] = field(default_factory=list)
    anchors_remove: list[int] = field(default_factory=list)
    replacements: int = 0
    bytes_added: int = 0

    @property
    def empty(self) -> bool:
        """Nothing to write: every requested value was already the entry's."""
        return not (self.values or self.tags is not None or self.applicability is not None or self.anchors_add
                    or self.anchors_remove)


class UpdatePlanning(MemoryCore):
    def _plan_update(self, e: Entry, c: dict[str, Any], agent: str | None, regs: dict[str, set[str]]
                     ) -> UpdatePlan:
        """Compute the new values from the current entry (pure); ``changes`` are the human change lines."""
        plan = UpdatePlan()
        s = plan.values
        lines = plan.changes
        if c.get("title") is not None:
            t = F.check_title(c["title"])
            if t != e["title"]:
                s["title"] = t
                lines.append(f"title: {e['title']} -> {t}")
        body = e["body"]
        if c.get("content") is not None:
            nb = F.check_body(c["content"])
            if nb != body:
                s["body"] = nb
                lines.append(f"content: updated ({c.get('content_source', 'inline')})")
        elif c.get("append") is not None or c.get("prepend") is not None:
            add = c.get("append") if c.get("append") is not None else c.get("prepend")
            if add == "":
                raise InvalidInputError("No content provided")
            if c.get("append") is not None:
                nb = body + "\n" + add if body else add
                word = "appended"
            else:
                nb = add + "\n" + body if body else add
                word = "prepended"
            s["body"] = F.check_body(nb)
            plan.bytes_added = len(add.encode("utf-8"))
            lines.append(f"content: {word} {plan.bytes_added} bytes")
        elif c.get("find") is not None:
            nb, n = find_replace(body, c["find"], c["replace"], replace_all=bool(c.get("replace_all")),
                                 nth=c.get("nth"))
            plan.replacements = n
            if nb != body:
                s["body"] = F.check_body(nb)
            lines.append(f"content: {n} replacement(s)")
        if c.get("category") is not None and c["category"] != e["category_id"]:
            if c["category"] not in regs["categories"]:
                raise InvalidInputError(f"Invalid category '{c['category']}'. Valid categories: "
                                        f"{', '.join(sorted(regs['categories']))}")
            s["category"] = c["category"]
            lines.append(f"category: {e['category_id']} -> {c['category']}")
        # tags
        tags = edited_list(e["tags"], F.tag_list(c["tags"]) if c.get("tags") is not None else None,
                           F.tag_list(c.get("add_tags")), F.split_list(c.get("remove_tags")))
        if tags != e["tags"]:
            plan.tags = tags
            lines.append(f"tags: {', '.join(tags) if tags else '(none)'}")
        if c.get("applicability") is not None:
            apps = F.split_list(c["applicability"])
            for a in apps:
                if a not in regs["applicability"]:
                    raise InvalidInputError(f"Invalid applicability '{a}'. Valid: "
                                            f"{', '.join(sorted(regs['applicability']))}")
            if apps != e["applicability"]:
                plan.applicability = apps
                lines.append(f"applicability: {', '.join(apps) if apps else '(none)'}")
        if c.get("content_type") is not None and c["content_type"] != e["content_type_id"]:
            if c["content_type"] not in regs["content_types"]:
                raise InvalidInputError(f"Invalid content type '{c['content_type']}'. Valid: "
                                        f"{', '.join(sorted(regs['content_types']))}")
            s["content_type"] = c["content_type"]
            lines.append(f"content_type: {e['content_type_id']} -> {c['content_type']}")
        if c.get("resonance") is not None and c["resonance"] != e["resonance"]:
            s["resonance"] = int(c["resonance"])
            lines.append(f"resonance: {e['resonance']} -> {c['resonance']}")
        if "resonance_type" in c:
            rt = c["resonance_type"]
            if rt == "-" or (rt is None and c.get("clear_resonance_type")):
                if e["resonance_type"] is not None:
                    s["resonance_type"] = None
                    lines.append("resonance_type: cleared")
            elif rt is not None and rt != e["resonance_type"]:
                F.check_resonance_type(rt)
                s["resonance_type"] = rt
                lines.append(f"resonance_type: {e['resonance_type'] or '-'} -> {rt}")
        # anchors (rowids resolved against visible entries)
        self._plan_anchors(e, c, agent, plan)
        # wake phrases
        phrases = list(e["wake_phrases"])
        if c.get("wake_phrases") is not None:
            phrases = F.split_list(c["wake_phrases"])
        if c.get("wake_phrase") is not None:
            one = c["wake_phrase"].strip()
            phrases = [one] + [p for p in phrases if p != one] if c.get("wake_phrases") is not None else [one]
        for p in F.split_list(c.get("add_wake_phrases")) if not isinstance(c.get("add_wake_phrases"), str) \
                else [c["add_wake_phrases"].strip()]:
            if p and p not in phrases:
                phrases.append(p)
        for p in F.split_list(c.get("remove_wake_phrases")) if not isinstance(c.get("remove_wake_phrases"), str) \
                else [c["remove_wake_phrases"].strip()]:
            if p in phrases:
                phrases.remove(p)
        if phrases != e["wake_phrases"]:
            F.check_wake_phrases(phrases)
            s["wake_phrases"] = json.dumps(phrases, ensure_ascii=False)
            lines.append(f"wake_phrases: {', '.join(phrases) if phrases else '(none)'}")
        if "wake_order" in c:
            wo = c["wake_order"]
            if wo == "-" or (wo is None and c.get("clear_wake_order")):
                if e["wake_order"] is not None:
                    s["wake_order"] = None
                    lines.append("wake_order: cleared")
            elif wo is not None:
                try:
                    n = int(wo)
                except (TypeError, ValueError):
                    raise InvalidInputError(f"Invalid wake_order value '{wo}' (use number or '-' to clear)") from None
                if n != e["wake_order"]:
                    s["wake_order"] = n
                    lines.append(f"wake_order: {n}")
        # code refs
        refs = edited_list(e["code_refs"], F.split_list(c["code_refs"]) if c.get("code_refs") is not None else None,
                           F.split_list(c.get("add_code_refs")), F.split_list(c.get("remove_code_refs")))
        if refs != e["code_refs"]:
            F.check_code_refs(refs)
            s["code_refs"] = json.dumps(refs, ensure_ascii=False)
            lines.append(f"code_refs: {', '.join(refs) if refs else '(none)'}")
        # visibility / owner
        vis = c.get("visibility")
        if c.get("private"):
            if vis is not None and vis != "private":
                raise InvalidInputError("--private and --visibility cannot be combined")
            vis = "private"
        if vis is not None and vis not in ("public", "private"):
            raise InvalidInputError("--visibility must be 'public' or 'private'")
        new_vis = vis or e["visibility"]
        owner = c.get("owner")
        if new_vis == "public":
            if owner:
                raise InvalidInputError("Cannot set owner on public entry. Use --visibility private to make entry "
                                        "private first.")
            if e["visibility"] == "private":
                if e["category_id"] == "bloom" and not c.get("force"):
                    raise InvalidInputError(f"Making bloom '{e.id}' public will expose identity data. Use --force "
                                            "to confirm.")
                s["visibility"], s["owner"] = "public", None
                lines.append("visibility: private -> public")
        else:
            F.check_acting_agent(agent, owner=owner)
            new_owner = owner or e["owner"] or agent
            if not new_owner:
                raise InvalidInputError("Cannot make entry private without an owner. Provide --owner or set "
                                        "M1ND_CURRENT_AGENT.")
            if e["visibility"] != "private":
                s["visibility"] = "private"
                lines.append("visibility: public -> private")
            if new_owner != e["owner"]:
                s["owner"] = new_owner
                lines.append(f"owner: {new_owner}")
        if "session_id" in c and c["session_id"] is not None:
            sid = c["session_id"].strip()
            sid = None if sid in ("", "-") else F.check_session_id(sid)
            if sid != e["session_id"]:
                s["session_id"] = sid
                lines.append(f"session_id: {e['session_id'] or '-'} -> {sid or '-'}")
        return plan

    def _plan_anchors(self, e: Entry, c: dict[str, Any], agent: str | None, plan: UpdatePlan) -> None:
        if c.get("anchors") is None and not c.get("add_anchors") and not c.get("remove_anchors"):
            return
        with self._read() as tx:
            def rid(raw: str) -> tuple[int, str]:
                aid = normalize_entry_id(raw)
                rowid = self._resolve(tx, aid, agent, "Anchor '{id}' not found")
                return rowid, tx.entries.id_of(rowid)
            current = {r: i for r, i in (rid(a) for a in e["anchors"])}
            target = dict(current)
            if c.get("anchors") is not None:
                target = dict(rid(a) for a in F.split_list(c["anchors"]))
            for a in F.split_list(c.get("add_anchors")):
                r, i = rid(a)
                target[r] = i
            for a in F.split_list(c.get("remove_anchors")):
                try:
                    r, i = rid(a)
                except NotFoundError:
                    continue
                target.pop(r, None)
        if e.rowid in target:
            raise InvalidInputError("An entry cannot anchor to itself")
        for r, i in target.items():
            if r not in current:
                plan.anchors_add.append(r)
                plan.changes.append(f"anchors: added '{i}'")
        for r, i in current.items():
            if r not in target:
                plan.anchors_remove.append(r)
                plan.changes.append(f"anchors: removed '{i}'")


def edited_list(current: list[str], replace: list[str] | None, add: list[str], remove: list[str]) -> list[str]:
    """A list field after an edit: replaced wholesale when ``replace`` is given, then ``add`` appended (each once),
    then ``remove`` dropped."""
    out = list(current) if replace is None else list(replace)
    for x in add:
        if x not in out:
            out.append(x)
    for x in remove:
        if x in out:
            out.remove(x)
    return out


def find_replace(body: str, find: str, replace: str, *, replace_all: bool = False, nth: int | None = None
                 ) -> tuple[str, int]:
    if find == "":
        raise InvalidInputError("--find must not be empty")
    count = body.count(find)
    if count == 0:
        raise InvalidInputError(f'Text not found in content: "{find}"')
    if nth is not None:
        if nth < 1 or nth > count:
            raise InvalidInputError(f"Invalid occurrence number: {nth} (found {count} matches)")
        idx = -1
        for _ in range(nth):
            idx = body.find(find, idx + 1)
        return body[:idx] + replace + body[idx + len(find):], 1
    if count > 1 and not replace_all:
        raise InvalidInputError(f'Found {count} matches for "{find}". Use --replace-all to replace all, or --nth N '
                                "to replace a specific occurrence.")
    return body.replace(find, replace), count
