"""Node-kind and edge-relation tables of the code graph (spec graph.md §2 and §5).

This module is deliberately dependency-free (stdlib only, no numpy, no ``m1nd_core``): both the ingest pipeline
(``m1nd.ingest``) and the graph engine (``m1nd.graph``) import it, and so may any tool that only needs the codes.
Codes are stable; new kinds and relations are appended, never renumbered.
"""

from __future__ import annotations

from typing import NamedTuple

#: Node kind name -> uint8 code (graph.md §2).
KINDS: dict[str, int] = {
    "dir": 0,
    "file": 1,
    "mod": 2,
    "class": 3,
    "struct": 4,
    "enum": 5,
    "interface": 6,
    "trait": 7,
    "type": 8,
    "fn": 9,
    "impl": 10,
    "section": 11,
    "macro": 12,
}

#: uint8 code -> kind name.
KIND_NAMES: dict[int, str] = {code: name for name, code in KINDS.items()}


class Relation(NamedTuple):
    """One row of the relation table (graph.md §5).

    ``w0`` is the base weight before the resolution factor of §7. For ``co_changes`` the real base weight is
    ``0.2 + 0.6 * s`` (``s`` = co-change strength); the table holds the constant part 0.2.
    """

    code: int
    name: str
    w0: float
    rho: float
    causal: float
    inverse_name: str


#: All relations, indexed by code: ``RELATIONS[code].name`` ...
RELATIONS: list[Relation] = [
    Relation(0, "contains", 0.8, 1.0, 0.8, "contained_in"),
    Relation(1, "imports", 0.6, 0.7, 0.6, "imported_by"),
    Relation(2, "calls", 0.5, 0.8, 0.5, "called_by"),
    Relation(3, "inherits", 0.7, 0.8, 0.7, "inherited_by"),
    Relation(4, "implements", 0.7, 0.8, 0.7, "implemented_by"),
    Relation(5, "references", 0.3, 0.6, 0.3, "referenced_by"),
    Relation(6, "tests", 0.5, 0.9, 0.5, "tested_by"),
    Relation(7, "co_changes", 0.2, 1.0, 0.3, "co_changes"),
    Relation(8, "reexports", 0.5, 0.7, 0.5, "reexported_by"),
    Relation(9, "declares_module", 0.7, 1.0, 0.6, "declared_by"),
    Relation(10, "uses_config", 0.4, 0.7, 0.3, "config_used_by"),
    Relation(11, "mentions", 0.3, 0.5, 0.0, "mentioned_by"),
]

#: Relation name -> code.
RELATION_CODES: dict[str, int] = {r.name: r.code for r in RELATIONS}

#: Inverse relation name (as shown to clients for a backwards traversal) -> code.
INVERSE_RELATION_CODES: dict[str, int] = {r.inverse_name: r.code for r in RELATIONS}

# Convenience constants (same values as the tables above).
CONTAINS, IMPORTS, CALLS, INHERITS, IMPLEMENTS, REFERENCES = 0, 1, 2, 3, 4, 5
TESTS, CO_CHANGES, REEXPORTS, DECLARES_MODULE, USES_CONFIG, MENTIONS = 6, 7, 8, 9, 10, 11

#: Co-change base weight: ``w0 = CO_CHANGE_W0_BASE + CO_CHANGE_W0_SLOPE * s``.
CO_CHANGE_W0_BASE = 0.2
CO_CHANGE_W0_SLOPE = 0.6

#: Bounds of every learned weight (learning.md); ``w0`` of every relation lies inside them.
W_MIN = 0.05
W_MAX = 1.0

#: Languages a node may carry (files; symbols inherit their file's language). Dirs carry "".
LANGS: tuple[str, ...] = (
    "python",
    "javascript",
    "typescript",
    "tsx",
    "go",
    "rust",
    "java",
    "markdown",
    "config",
    "other",
    "c",
    "cpp",
    "csharp",
    "ruby",
    "php",
    "kotlin",
)

__all__ = [
    "CALLS",
    "CONTAINS",
    "CO_CHANGES",
    "CO_CHANGE_W0_BASE",
    "CO_CHANGE_W0_SLOPE",
    "DECLARES_MODULE",
    "IMPLEMENTS",
    "IMPORTS",
    "INHERITS",
    "INVERSE_RELATION_CODES",
    "KINDS",
    "KIND_NAMES",
    "LANGS",
    "MENTIONS",
    "REEXPORTS",
    "REFERENCES",
    "RELATIONS",
    "RELATION_CODES",
    "TESTS",
    "USES_CONFIG",
    "W_MAX",
    "W_MIN",
    "Relation",
]
