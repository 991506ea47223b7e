"""Ingest orchestration (spec graph.md §11, §15): walk → reuse or extract → git → resolve → diff → one transaction.

The pure pipeline lives in ``m1nd.ingest`` (no storage); this module adds the per-file extraction cache, the
content-hash reuse, the diff against the stored graph (row ids of unchanged nodes and learned weights of surviving
edges are kept) and the single write transaction that makes an ingest all-or-nothing.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import logging
import os
import re
import sys
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from m1nd.codegraph.results import IngestReport
from m1nd.defaults import GIT_WINDOW_DAYS
from m1nd.errors import InvalidInputError
from m1nd.store.graph_repo import NODE_COLUMNS, now_ms

if TYPE_CHECKING:
    from m1nd.store.graph_repo import GraphStore

log = logging.getLogger(__name__)
NAMESPACE_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


class Progress:
    """Progress lines on stderr (only when stderr is a terminal, or M1ND_PROGRESS=1), never on stdout."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.enabled = (sys.stderr.isatty() or os.environ.get("M1ND_PROGRESS") == "1") if enabled is None else enabled
        self.t0 = time.perf_counter()

    def __call__(self, msg: str) -> None:
        if self.enabled:
            rss = ""
            if os.environ.get("M1ND_PROGRESS_RSS") == "1":
                with open("/proc/self/statm") as f:
                    rss = f" (rss {int(f.read().split()[1]) * 4096 >> 20} MB)"
            print(f"m1nd ingest [{time.perf_counter() - self.t0:6.1f}s] {msg}{rss}", file=sys.stderr, flush=True)


def _compress(obj: Any) -> bytes:
    return zlib.compress(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8"), 1)


def _take_terms(blob: dict[str, Any]) -> dict[str, Any]:
    """Move the body terms out of an extract blob (stored apart: ``files.terms_blob``)."""
    defs = blob.get("definitions") or []
    return {"file": blob.pop("terms", ""), "defs": [[d.get("id", ""), d.pop("terms", "")] for d in defs]}


def stored_forms(blob: dict[str, Any]) -> tuple[dict[str, Any], bytes, bytes]:
    """An extract blob as the ingest keeps it: the blob without its body terms, the blob compressed (``files.blob``)
    and the terms compressed (``files.terms_blob``). Run by the extraction workers (``extract_many``'s finish)."""
    terms = _compress(_take_terms(blob))
    return blob, _compress(blob), terms


def _decompress(blob: bytes) -> Any:
    return json.loads(zlib.decompress(blob).decode("utf-8"))


def _git_to_json(git: Any) -> Any:
    if git is None:
        return None
    d = dataclasses.asdict(git) if dataclasses.is_dataclass(git) else dict(git.__dict__)
    return d


def _git_from_json(d: Any) -> Any:
    from m1nd.ingest.gitdata import HISTORY_WINDOW_DAYS, GitData

    if d is None or (d.get("available") and d.get("history_days") != HISTORY_WINDOW_DAYS):
        return None  # absent, or read before commit subjects were kept as they are now: read git again
    d = dict(d)
    d["files"] = {k: tuple(v) for k, v in d.get("files", {}).items()}
    d["co_change"] = [tuple(x) for x in d.get("co_change", [])]
    d["history"] = [tuple(x) for x in d.get("history", [])]
    return GitData(**d)


def _history_moved(store: GraphStore, root_id: int, git: Any) -> bool:
    """Whether the commit subjects the history field is built from differ from the stored ones. They feed the
    graph's history index but no node or edge: a commit touching only files outside the graph, or a longer subject
    window, would otherwise leave the generation (and so the cached index) as it was."""
    new = getattr(git, "history", None) or []
    old = (store.root_git_blob(root_id) or {}).get("history") or []
    if len(new) != len(old):
        return True
    # the stored copy went through JSON: compare in that form
    return bool(new) and json.dumps(new, separators=(",", ":")) != json.dumps(old, separators=(",", ":"))


def git_status(root: Path) -> dict[str, Any]:
    from m1nd.ingest import gitdata

    return gitdata.status(root) if hasattr(gitdata, "status") else {"available": False}


def run_ingest(store: GraphStore, path: str, *, mode: str = "replace", namespace: str | None = None,
               incremental: bool = True, include_dotfiles: bool = False, dotfile_patterns: list[str] | None = None,
               exclude: list[str] | None = None, max_file_bytes: int = 1 << 20, git_window_days: int = GIT_WINDOW_DAYS,
               embed: str = "background", progress: Progress | None = None,
               keep: dict[str, Any] | None = None, hooks: Any = None) -> IngestReport:
    """``keep``: when given, filled with the resolver of the written graph and what it was built from (the
    watcher's fast path patches it: :mod:`m1nd.codegraph.patch`). ``hooks``: the ingest child's
    (:class:`m1nd.codegraph.ingest_process.ChildHooks`): told when extraction is done, given the rows ahead of the
    write, and handed what the ingest built to keep until the process ends."""
    from m1nd.ingest import extract as ex
    from m1nd.ingest import gitdata, walker
    from m1nd.ingest.resolve import resolve as resolve_graph

    started = time.perf_counter()
    say = progress or Progress()
    # kept in the root's report, so a watcher re-ingests the root the way it was ingested (m1nd.watch)
    options = {"include_dotfiles": include_dotfiles, "dotfile_patterns": list(dotfile_patterns or []),
               "exclude": list(exclude or []), "max_file_bytes": max_file_bytes, "git_window_days": git_window_days}
    p = Path(path).expanduser()
    if not p.is_absolute():
        p = Path.cwd() / p
    if not p.exists():
        raise InvalidInputError(f"path '{path}' does not exist", recover="pass an existing directory (the repo root)")
    if not (p.is_dir() or p.is_file()):
        raise InvalidInputError(f"path '{path}' is not a directory or a regular file")
    roots = store.roots()
    if p.is_file():
        rp = p.resolve()
        owner = next((r for r in roots if rp.is_relative_to(Path(r.path))), None)
        if owner is None:
            raise InvalidInputError(f"'{path}' is not under an ingested root; ingest its directory first")
        root = Path(owner.path)
        mode = "replace" if owner.is_primary else "merge"
        namespace = owner.namespace
    else:
        root = p.resolve()
    if mode == "merge":
        primary = next((r for r in roots if r.is_primary), None)
        if primary is not None and Path(primary.path) == root:
            mode, namespace = "replace", None
        else:
            if namespace is None:
                namespace = re.sub(r"[^a-z0-9_-]", "-", root.name.lower()).strip("-_") or "root"
                if not namespace[0].isalpha():
                    namespace = "r" + namespace
                namespace = namespace[:32]
            if not NAMESPACE_RE.match(namespace):
                raise InvalidInputError(f"namespace '{namespace}' must match ^[a-z][a-z0-9_-]{{0,31}}$")
            clash = next((r for r in roots if r.namespace == namespace and Path(r.path) != root), None)
            if clash is not None:
                raise InvalidInputError(f"namespace '{namespace}' is already used by root {clash.path}")
    else:
        namespace = None

    token = store.acquire_ingest_lock()
    # No cyclic garbage collection during the ingest: the extracts, resolver tables and rows are millions of
    # acyclic objects (the collector found 0 to 5 cycles on the stdlib), and its passes walked them again and again
    # while they grew: 1.2-1.6 s of this process's ~7 s CPU there. Freed by reference counting as before.
    collecting = gc.isenabled()
    gc.disable()
    try:
        say(f"walking {root}")
        # (the ingest child is handed the walk its parent made to start it: the same arguments, moments ago)
        walked = hooks.walked(root, bool(include_dotfiles), tuple(dotfile_patterns or ()), tuple(exclude or ()),
                              max_file_bytes) if hooks is not None else None
        if walked is None:
            walked = walker.walk(root, include_dotfiles=include_dotfiles, dotfile_patterns=dotfile_patterns or (),
                                 exclude=exclude or (), max_file_bytes=max_file_bytes)
        existing = next((r for r in roots if Path(r.path) == root), None)
        stored = store.files(existing.id) if existing is not None else {}
        extracts: dict[str, dict[str, Any]] = {}
        mtimes: dict[str, int] = {}
        file_rows: list[tuple[Any, ...]] = []
        touch: list[tuple[int, str]] = []
        to_extract: list[tuple[str, bytes, str]] = []
        meta: dict[str, tuple[int, int, str]] = {}
        skipped = dict(walked.skipped)
        skipped.setdefault("parse_error", 0)
        reused = 0
        unchanged: dict[str, bytes] = {}
        for f in walked.files:
            mtimes[f.relpath] = f.mtime_ns // 1_000_000
            old = stored.get(f.relpath)
            version = ex.extractor_version(f.lang)
            if incremental and old is not None and old.extractor_version == version and old.size == f.size \
                    and old.mtime_ns == f.mtime_ns:
                unchanged[f.relpath] = old.blob  # decompressed only if the graph has to be resolved again
                reused += 1
                continue
            try:
                got = walker.read_text(f.abspath)
            except OSError as e:
                walked.warnings.append(f"cannot read {f.relpath}: {e}")
                skipped["ignored"] = skipped.get("ignored", 0) + 1
                continue
            if got is None:
                skipped["binary"] = skipped.get("binary", 0) + 1
                continue
            data, _text = got
            # (hashed only to compare with a stored extract: the extraction workers hash every file they extract)
            if incremental and old is not None and old.extractor_version == version \
                    and old.content_hash == hashlib.sha256(data).hexdigest():
                extracts[f.relpath] = _decompress(old.blob)
                touch.append((f.mtime_ns, f.relpath))
                reused += 1
                continue
            meta[f.relpath] = (f.size, f.mtime_ns, f.lang)
            to_extract.append((f.relpath, data, f.lang))
        say(f"{len(walked.files)} files listed, {reused} reused, extracting {len(to_extract)}")
        fresh = ex.extract_many(to_extract, finish=stored_forms) if to_extract else []
        for (rel, _data, lang), (blob, packed, terms) in zip(to_extract, fresh):
            extracts[rel] = blob
            size, mtime_ns, _ = meta[rel]
            file_rows.append([rel, size, mtime_ns, blob.get("content_hash"), lang, int(bool(blob.get("is_test"))),
                              ex.extractor_version(lang), packed, None, blob.get("parse_error"), terms])
        if fresh and hooks is not None:
            hooks.extracted()  # from here on this process uses one core: the cache child can start beside it
        removed_files = [rel for rel in stored if rel not in extracts and rel not in unchanged]

        # git (re-read only when HEAD or the work tree moved)
        say("reading git history")
        state = gitdata.worktree_state(root)
        git = None
        git_reused = False
        if existing is not None and state is not None and existing.git_state == state and incremental:
            git = _git_from_json(store.root_git_blob(existing.id))
            if git is not None and getattr(git, "window_days", git_window_days) != git_window_days:
                git = None
            git_reused = git is not None
        if git is None:
            git = gitdata.read_git(root, window_days=git_window_days)
        other_roots = [r for r in roots if Path(r.path) != root]
        if (existing is not None and incremental and not extracts and not removed_files and not touch
                and (git_reused or (state is None and existing.git_state is None and not git.available))
                and existing.namespace == namespace and existing.is_primary == (mode == "replace")
                and not (mode == "replace" and other_roots) and existing.report):
            # Nothing that feeds the resolver moved (same bytes, mtimes, extractor versions, git state): the
            # graph would come out identical, so skip resolution and the diff entirely.
            say("nothing changed")
            prev = IngestReport.from_record(existing.report)
            gen, _ = store.generations()
            n_nodes, n_edges = store.counts()
            return dataclasses.replace(
                prev, files_scanned=len(walked.files), files_parsed=0, files_reused=reused, files_removed=0,
                skipped={**prev.skipped, **{k: skipped.get(k, 0) for k in ("large", "binary", "ignored")}},
                nodes={"created": 0, "removed": 0, "updated": 0, "total": n_nodes},
                edges={"created": 0, "removed": 0, "total": n_edges}, graph_generation=gen, changed=False,
                options=options, warnings=list(walked.warnings)[:50])
        for rel, blob in unchanged.items():
            extracts[rel] = _decompress(blob)
        parse_errors = [rel for rel, b in extracts.items() if b.get("parse_error")]
        skipped["parse_error"] = len(parse_errors)
        say("resolving references")
        if keep is not None:
            from m1nd.ingest.resolve.incremental import TrackedResolver

            tracked = TrackedResolver(extracts, git, mtimes, namespace).run()
            parts = tracked.output()
        else:
            parts = resolve_graph(extracts, git=git, mtimes=mtimes, namespace=namespace)
        say(f"{len(parts.nodes)} nodes, {len(parts.edges)} edges; writing")
        languages: dict[str, int] = {}
        for f in walked.files:
            if f.relpath in extracts:
                languages[f.lang] = languages.get(f.lang, 0) + 1
        warnings = list(walked.warnings) + list(parts.warnings)
        warnings += [f"parse error in {rel}: {extracts[rel]['parse_error']}" for rel in parse_errors[:20]]
        cut = sorted(rel for rel, b in extracts.items() if b.get("cut"))
        warnings += [f"extraction bounded in {rel}: {extracts[rel]['cut']}" for rel in cut[:20]]
        if not walked.files:
            warnings.append("no files matched")

        def make_report(counts: dict[str, Any], gen: int) -> IngestReport:
            return IngestReport(
                root=str(root), namespace=namespace, mode=mode, files_scanned=len(walked.files),
                files_parsed=len(fresh), files_reused=reused, files_removed=len(removed_files),
                skipped={k: skipped.get(k, 0) for k in ("large", "binary", "ignored", "parse_error")},
                # files whose extraction hit a per-file bound (depth, captured nodes, captured bytes): what was
                # cut, so a partial graph never passes for a complete one
                files_cut=[{"path": rel, "cut": extracts[rel]["cut"]} for rel in cut[:50]],
                files_cut_total=len(cut),
                nodes=counts["nodes"], edges=counts["edges"],
                unresolved_refs=parts.unresolved_refs, ambiguous_refs=parts.ambiguous_refs,
                languages=dict(sorted(languages.items())),
                git={"available": bool(getattr(git, "available", False)),
                     **({"reason": git.reason} if not getattr(git, "available", False) else {}),
                     "commits_read": int(getattr(git, "commits_read", 0)),
                     "co_change_edges": sum(1 for e in parts.edges if e.relation == 7)},
                embeddings={"queued": 0, "model_id": None},
                graph_generation=gen, changed=counts["changed"], options=options, warnings=warnings[:50],
            )

        # every file of the root comes from this extraction and no other root survives a replace: the table about
        # to be written is known in full, so the cache child can index it during the write (see _write)
        whole = mode == "replace" and reused == 0 and bool(fresh)
        report = _write(store, root, namespace, mode, parts, file_rows, removed_files, touch, git, state, make_report,
                        hooks=hooks, whole=whole)
        if keep is not None:
            keep.update(resolver=tracked, root=str(root), generation=report.graph_generation, git=git,
                        options=options)
        if hooks is not None:
            hooks.retain(walked, stored, to_extract, fresh, extracts, unchanged, file_rows, parts)
        say(f"done in {time.perf_counter() - started:.1f}s")
        return report
    finally:
        if collecting:
            gc.enable()
        store.release_ingest_lock(token)


_CHURN = NODE_COLUMNS.index("churn")


def _node_row(n: Any, root_id: int) -> tuple[Any, ...]:
    """A NodeRecord as a row in NODE_COLUMNS order (churn rounded so float32/float64 round trips compare equal)."""
    return (n.ext_id, n.label, n.qname, n.kind, n.lang, root_id, n.source_path, n.line_start, n.line_end, n.signature,
            n.doc, int(n.is_test), n.content_hash, n.last_change_ms, round(float(n.churn), 6), n.commit_count)


def _stored_row(old: tuple[Any, ...]) -> tuple[Any, ...]:
    """A stored node row (without its id) in the same normal form as :func:`_node_row`."""
    row = list(old[1:])
    row[_CHURN - 1] = round(float(row[_CHURN - 1] or 0.0), 6)
    return tuple(row)


def write_edge_diff(store: GraphStore, old_edges: dict[tuple[int, int, int], tuple[Any, ...]],
                    new_edges: dict[tuple[int, int, int], tuple[float, int]]) -> tuple[int, int, int]:
    """Write the difference between the stored edges (key -> (w0, w, count, ...)) and the extracted ones (key ->
    (w0, count)): new edges start at their base weight, vanished ones go, and an edge whose base or count changed is
    rebased (its learned weight kept). Returns how many were (created, removed, rebased)."""
    ins = [(*k, w0, w0, c, 0) for k, (w0, c) in new_edges.items() if k not in old_edges]
    gone = [k for k in old_edges if k not in new_edges]
    rebased = [(w0, c, *k) for k, (w0, c) in new_edges.items()
               if k in old_edges and (abs(old_edges[k][0] - w0) > 1e-6 or old_edges[k][2] != c)]
    store.delete_edges(gone)
    store.insert_edges(ins)
    store.update_edges_base(rebased)
    return len(ins), len(gone), len(rebased)


def _write(store: GraphStore, root: Path, namespace: str | None, mode: str, parts: Any,
           file_rows: list[list[Any]], removed_files: list[str], touch: list[tuple[int, str]], git: Any,
           state: str | None, make_report: Any, *, hooks: Any = None, whole: bool = False) -> IngestReport:
    """Diff the new node/edge sets against the stored ones and write everything in one transaction. ``whole``:
    the nodes and files rows are the entire graph once written (``hooks`` then send them ahead)."""
    db = store.db
    with db.write():
        roots = store.roots()
        other_roots_removed = 0
        if mode == "replace":
            for r in roots:
                if Path(r.path) != root:
                    store.delete_root(r.id)
                    other_roots_removed += 1
        rid = store.upsert_root(str(root), namespace, mode == "replace")
        new_nodes = {}
        for nrec in parts.nodes:
            vals = _node_row(nrec, rid)
            new_nodes[vals[0]] = vals
        sending = hooks.send_ahead(rid, new_nodes, file_rows, whole) if hooks is not None else None
        ext_imports = {rel: json.dumps(v) for rel, v in parts.external_imports.items()}
        for row in file_rows:
            row[8] = ext_imports.get(row[0], "[]")
        store.write_files(rid, file_rows, removed_files, touch)

        old_nodes = store.node_rows(rid)
        created = [v for k, v in new_nodes.items() if k not in old_nodes]
        removed_ids = [row[0] for k, row in old_nodes.items() if k not in new_nodes]
        updated = []
        for k, vals in new_nodes.items():
            old = old_nodes.get(k)
            if old is not None and _stored_row(old) != vals[1:]:
                updated.append((*vals[1:], old[0]))
        store.delete_nodes(removed_ids)  # cascades their edges
        store.update_nodes(updated)
        store.insert_nodes(created)
        ids = store.node_ids_by_ext()
        root_ids = {ids[k] for k in new_nodes}
        old_edges = {k: v for k, v in store.edge_rows().items() if k[0] in root_ids}
        new_edges: dict[tuple[int, int, int], tuple[float, int]] = {}
        for e in parts.edges:
            s, d = ids.get(e.src), ids.get(e.dst)
            if s is None or d is None or s == d:
                continue
            new_edges[(s, d, int(e.relation))] = (float(e.w0), int(e.count))
        ts = now_ms()
        ins, gone, rebased = write_edge_diff(store, old_edges, new_edges)
        changed = bool(created or removed_ids or updated or ins or gone or rebased or other_roots_removed
                       or _history_moved(store, rid, git))
        if changed:
            store.bump("graph_generation")
        total_nodes, total_edges = store.counts()
        del ts
        gen, _ = store.generations()
        report = make_report({"changed": changed,
                              "nodes": {"created": len(created), "removed": len(removed_ids),
                                        "updated": len(updated), "total": total_nodes},
                              "edges": {"created": ins, "removed": gone, "total": total_edges}}, gen)
        store.finish_root(rid, git_head=getattr(git, "head", None), git_state=state, git_blob=_git_to_json(git),
                          report=report.to_dict())
        if hooks is not None:
            hooks.written(rid, new_nodes, gen, total_nodes, every_row_created=len(created) == total_nodes)
            hooks.retain(old_nodes, new_nodes, created, updated, ids, old_edges, new_edges)
    if sending is not None:
        sending.join()
    return report
