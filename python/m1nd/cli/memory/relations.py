"""``m1nd memory relationships`` (typed links between entries) and ``reinforce``."""

from __future__ import annotations


import click

from m1nd.cli.memory.common import (acting_agent, emit_json, handled, json_option, memory_group, note,
                                    open_service, out)
from m1nd.defaults import RESONANCE_CAP


@memory_group.group("relationships")
def relationships_group() -> None:
    """Typed links between entries."""


@relationships_group.command("list")
@click.argument("entry_id")
@json_option
@handled
def rel_list_cmd(entry_id: str, as_json: bool) -> None:
    """Relationships of an entry, both directions."""
    eid, rels = open_service().relationships(entry_id, agent=acting_agent())
    if as_json:
        emit_json([{k: v for k, v in r.to_dict().items() if k != "direction"} for r in rels])
        return
    if not rels:
        out(f"No relationships found for '{eid}'")
        return
    out(f"Relationships for '{eid}':")
    for r in rels:
        if r.direction == "out":
            out(f"  {r.id} -> {r.to_entry_id} ({r.relationship_type})")
        else:
            out(f"  {r.id} <- {r.from_entry_id} ({r.relationship_type})")


@relationships_group.command("add")
@click.option("--from", "from_id", required=True, help="Source entry id.")
@click.option("--to", "to_id", required=True, help="Target entry id.")
@click.option("--type", "rel_type", required=True, help="Relationship type (relationship-types list).")
@click.option("--no-reinforce", is_flag=True, help="Do not reinforce the target.")
@json_option
@handled
def rel_add_cmd(from_id: str, to_id: str, rel_type: str, no_reinforce: bool, as_json: bool) -> None:
    """Link two entries; the target gains +1 resonance (cap 10) unless contradicts/supersedes."""
    d = open_service().relate(from_id, to_id, rel_type, agent=acting_agent(), reinforce=not no_reinforce)
    if d.reinforced:
        note(f"  reinforced {d.to_id} (+1)")
    if as_json:
        emit_json(d.to_dict())
    elif d.existing:
        out(f"Relationship already exists: {d.id}")
    else:
        out(f"Added relationship: {d.id}")
        out(f"  From: {d.from_id}")
        out(f"  To: {d.to_id}")
        out(f"  Type: {d.type}")


@relationships_group.command("delete")
@click.argument("rel_id")
@json_option
@handled
def rel_delete_cmd(rel_id: str, as_json: bool) -> None:
    """Delete a relationship by id."""
    res = open_service().unrelate(rel_id, agent=acting_agent())
    if as_json:
        emit_json(res.to_dict())
    else:
        out(f"Deleted relationship: {res.id}")


@memory_group.command("reinforce")
@click.argument("entry_id")
@click.option("--amount", type=int, default=1, show_default=True, help="Non-zero, -10..10.")
@click.option("--cap", type=int, default=RESONANCE_CAP, show_default=True, help="1..100.")
@json_option
@handled
def reinforce_cmd(entry_id: str, amount: int, cap: int, as_json: bool) -> None:
    """Raise (or lower) an entry's resonance and reset its decay clock."""
    r = open_service().reinforce(entry_id, agent=acting_agent(), amount=amount, cap=cap)
    if as_json:
        emit_json(r.to_dict())
        return
    out(f"Reinforced entry: {r.id}")
    out(f"  Old resonance: {r.old_resonance}")
    out(f"  New resonance: {r.new_resonance}")
    out(f"  Amount added: {r.amount_added}")
    if r.capped:
        out(f"  (Capped at {r.cap})")
    out(f"  Last activated: {r.last_activated}")
    out(f"  Activation count: {r.activation_count}")
