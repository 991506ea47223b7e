"""Ingest pipeline: a directory → node and edge records of the code graph (spec graph.md §2–§11).

The pipeline is pure (no database; :mod:`m1nd.store` and the orchestrator that diffs and stores the result are
elsewhere) and has five stages, each usable on its own:

1. **walk** — :func:`m1nd.ingest.walker.walk` lists the files of a root (``git ls-files`` inside a work tree,
   else a directory walk; skip rules of §10) → :class:`~m1nd.ingest.walker.WalkResult`.
2. **read** — :func:`m1nd.ingest.walker.read_text` reads each file once; binary / undecodable files → ``None``.
3. **extract** — :func:`m1nd.ingest.extract.extract_file` turns ``(relpath, bytes, lang)`` into a JSON blob
   (definitions, unresolved references, import bindings, …). It depends only on its inputs and the language's
   ``EXTRACTOR_VERSION`` (:func:`~m1nd.ingest.extract.extractor_version`), so the orchestrator caches it per
   file (§11). :func:`extract_many` runs it over many files, on 2 worker processes for large batches.
   ``m1nd.ingest.treesitter`` is the only module that imports tree-sitter.
4. **git** — :func:`m1nd.ingest.gitdata.read_git` reads the history once per root (last change, commit counts,
   co-change pairs; root-relative paths); :func:`~m1nd.ingest.gitdata.worktree_state` fingerprints HEAD + the
   work tree so unchanged trees can skip it.
5. **resolve** — :func:`m1nd.ingest.resolve.resolve` builds the complete node / edge sets of the root from all
   blobs (+ git data, + mtimes): ids (§3), attributes (§4), all relations (§5) with resolution factors (§7),
   tests / docs / config edges (§8) and co-changes (§9). It always runs in full, so incremental ingest equals a
   full one.

:func:`build_graph_parts` (module :mod:`m1nd.ingest.pipeline`) chains the five stages without any cache (tests,
benchmarks); :func:`extract_many` lives in :mod:`m1nd.ingest.extract`. Both are re-exported here. The kind /
relation code tables live in the dependency-free :mod:`m1nd.graph.schema` (re-exported by
:mod:`m1nd.ingest.schema`).

Module map: ``walker`` (file list, gitignore-style matcher, ``read_text``), ``treesitter`` (grammars, parsers,
queries), ``extract/`` (``python``, ``javascript`` (JS/TS/TSX), ``go``, ``rust``, ``java``, ``markdown``,
``config``, ``other`` (regex fallback), ``_common``), ``gitdata`` (+ ``_git`` subprocess wrapper), ``resolve``,
``pipeline``, ``schema``.
"""

from __future__ import annotations

from m1nd.ingest.extract import extract_file, extractor_version
from m1nd.ingest.gitdata import GitData, read_git, worktree_state
from m1nd.ingest.pipeline import build_graph_parts, extract_many
from m1nd.ingest.resolve import EdgeRecord, GraphParts, NodeRecord, resolve
from m1nd.ingest.walker import WalkedFile, WalkResult, read_text, walk

__all__ = [
    "EdgeRecord",
    "GitData",
    "GraphParts",
    "NodeRecord",
    "WalkResult",
    "WalkedFile",
    "build_graph_parts",
    "extract_file",
    "extract_many",
    "extractor_version",
    "read_git",
    "read_text",
    "resolve",
    "walk",
    "worktree_state",
]
