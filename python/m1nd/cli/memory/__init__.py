"""``m1nd memory …``: the knowledge-memory commands (spec memory.md), one module per command family.

Adapters only: each command parses its flags, calls one :class:`m1nd.memory.service.MemoryService` method (or
a rule module of :mod:`m1nd.memory`), and renders text or JSON by the group's conventions (:mod:`.common`).
The command table (:data:`m1nd.cli.app.COMMANDS`) imports this package for ``memory`` only, so ``m1nd --help``
never loads it; importing it attaches every family's commands to the group.
"""

from __future__ import annotations

import click

from m1nd.cli.memory import (  # noqa: F401 — importing a family adds its commands to the group
    adding,
    migrate,
    reading,
    registries,
    relations,
    sessions,
    stats,
    transfer,
    updating,
    vectors,
    wake,
    wakelog,
)
from m1nd.cli.memory.common import memory_group


def register(cli: click.Group) -> None:
    """The ``memory`` group with every subcommand."""
    cli.add_command(memory_group, "memory")
