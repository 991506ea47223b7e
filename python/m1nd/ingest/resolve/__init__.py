"""Cross-file resolution: all per-file extracts of one root → the complete node and edge sets (graph.md §3–§9).

``resolve(extracts, git=..., mtimes=..., namespace=...)`` is a pure function of its inputs and runs in full every
time (incremental ingest re-uses extracts, never resolution results), so incremental and full ingest agree by
construction. Everything is dictionary-indexed; no step is quadratic in the number of files or symbols.

Order of work:

1. nodes: dirs (``dir::.`` and every directory holding an ingested file), files, symbols (ids from the
   extracts' local id paths), ``contains`` edges dir→dir→file→symbol→member;
2. indexes: members per container, global name indexes per language family, Python module paths / source
   roots, JS/TS resolution incl. ``tsconfig``/``jsconfig`` ``paths``, Go modules (``go.mod``) and packages,
   Rust crates (``Cargo.toml``) and module files, Java packages;
3. import bindings per file (lazy, memoised, cycle-safe) → ``imports`` / ``reexports`` / ``declares_module``
   edges and ``external_imports``;
4. pass A: ``base`` / ``implements`` references (+ Rust impl headers) → ``inherits`` / ``implements``, which
   also gives the type hierarchy used by ``self`` / ``super`` method lookup;
5. pass B: every other reference, name resolution steps 1–7 (§7) → ``calls`` / ``references``;
6. ``tests`` (§8), markdown ``mentions``, ``uses_config``, ``co_changes`` (§9).

Modules (one idea each, mirroring ``ingest/extract/``): ``core`` holds the state every step shares (node columns,
edges, indexes, per-file bindings) and the node / index building; every other module is a mixin over it, composed
into :class:`_Resolver` below. ``tables`` (kinds, families, builtins, result codes), ``records`` (the output
records), ``names`` (name lookup, steps 1–7), ``receivers`` (receiver types of ``typed_call``), ``passes`` (the
reference passes), one module per language family for indexes and import bindings (``python``, ``javascript``,
``go``, ``rust``, ``java`` — with Kotlin, C#, PHP — and ``paths`` for C/C++ ``#include`` and Ruby ``require``),
``stubs`` (what standard-library functions return, from typeshed's stubs), ``subjects`` (``tests`` edges),
``links`` (mentions, config uses, co-changes) and ``output``.
"""

from __future__ import annotations

import gc
from typing import Any

from m1nd.ingest.gitdata import GitData
from m1nd.ingest.resolve.go import GoResolution
from m1nd.ingest.resolve.java import JavaResolution
from m1nd.ingest.resolve.javascript import JsResolution
from m1nd.ingest.resolve.links import TextLinks
from m1nd.ingest.resolve.names import NameLookup
from m1nd.ingest.resolve.output import GraphOutput
from m1nd.ingest.resolve.passes import ReferencePasses
from m1nd.ingest.resolve.paths import PathImports
from m1nd.ingest.resolve.python import PythonResolution
from m1nd.ingest.resolve.receivers import ReceiverTypes
from m1nd.ingest.resolve.records import EdgeRecord, GraphParts, NodeRecord
from m1nd.ingest.resolve.rust import RustResolution
from m1nd.ingest.resolve.stubs import StubReturns
from m1nd.ingest.resolve.subjects import TestSubjects


class _Resolver(
    ReferencePasses,
    ReceiverTypes,
    StubReturns,
    NameLookup,
    PythonResolution,
    JsResolution,
    GoResolution,
    RustResolution,
    JavaResolution,
    PathImports,
    TestSubjects,
    TextLinks,
    GraphOutput,
):
    """One resolution run: the core state (``core.py``) with every step mixed in, one module per idea."""


def resolve(
    extracts: dict[str, dict[str, Any]],
    *,
    git: GitData | None = None,
    mtimes: dict[str, int] | None = None,
    namespace: str | None = None,
) -> GraphParts:
    """Build the complete node and edge sets of one root from all of its per-file extracts.

    Parameters
    ----------
    extracts
        relpath -> extraction blob (:func:`m1nd.ingest.extract.extract_file`).
    git
        :func:`m1nd.ingest.gitdata.read_git` result, or None (temporal data from ``mtimes``).
    mtimes
        relpath -> modification time, used for files without commits in the git window: nanoseconds
        (``WalkedFile.mtime_ns``) or milliseconds (values below 10**14 are taken as milliseconds).
    namespace
        id prefix of a secondary root (``ns::file::…``); None for the primary root.
    """
    # bulk construction of ~10^5 small objects: the cyclic GC only costs time here (nothing is cyclic garbage)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        r = _Resolver(extracts, git, mtimes or {}, namespace)
        r.build_nodes()
        r.build_indexes()
        r.resolve_refs()
        r.tests_edges()
        r.mentions()
        r.uses_config()
        r.co_changes()
        return r.output()
    finally:
        if gc_was_enabled:
            gc.enable()


__all__ = ["EdgeRecord", "GraphParts", "NodeRecord", "resolve"]
