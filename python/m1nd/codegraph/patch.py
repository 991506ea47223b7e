"""The watcher's fast path (issue 15 item 4): a few edited files patched into the stored graph in place, exactly
as a full incremental ingest would leave it, or ``None`` so the caller runs that ingest.

One :class:`LiveRoots` per :class:`~m1nd.codegraph.service.CodeGraph` keeps, per ingested root, the resolver of
the stored graph (:class:`~m1nd.ingest.resolve.incremental.TrackedResolver`, built by an in-process ingest or by
:meth:`LiveRoots.prime` from the stored extracts) and what the store held when it was made (graph generation,
file stats). A batch of changed paths is patched when all of these hold, else the full ingest runs (and leaves a
fresh resolver behind when it runs in this process):

- nobody else changed the graph since (its generation is the one the resolver matches), the root is the only
  root or a secondary one (a primary ingest with other roots replaces them), the ingest options are the same;
- every changed path is a file the root already holds, still a regular file within the size bound and text;
  paths the walker would never list (unknown language, hidden) are ignored; anything else (a new, removed or
  renamed file or directory, ``.git`` moving, a whole-root check) is not patched;
- git HEAD has not moved (history-derived fields come from HEAD, not from the work tree);
- the resolver accepts the patch (its rules: :mod:`m1nd.ingest.resolve.incremental`).

Writing touches only the rows of the edited files' nodes, their directories and the edited nodes' outgoing
edges, diffed against the stored rows (row ids, learned weights of surviving edges kept) in one transaction
under the store's ingest lock. ``M1ND_WATCH_PATCH=0`` turns the fast path off.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat as stat_mod
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from m1nd.codegraph.ingestion import (
    _compress,
    _decompress,
    _git_from_json,
    _node_row,
    _stored_row,
    _take_terms,
    write_edge_diff,
)
from m1nd.codegraph.results import IngestReport
from m1nd.defaults import GIT_WINDOW_DAYS

if TYPE_CHECKING:
    from m1nd.ingest.resolve.incremental import TrackedResolver
    from m1nd.store.graph_repo import GraphStore

log = logging.getLogger(__name__)
MAX_PATCH_FILES = 20  # more changed files than this: the full incremental ingest (a checkout, a formatter run)
REPLAYED = ("include_dotfiles", "dotfile_patterns", "exclude", "max_file_bytes", "git_window_days")


def enabled() -> bool:
    return os.environ.get("M1ND_WATCH_PATCH", "1").strip().lower() not in ("0", "false", "no", "off")


@dataclass
class RootState:
    """The resolver of one root's stored graph and what the store held when it was made."""

    path: str
    root_id: int
    namespace: str | None
    resolver: TrackedResolver
    generation: int
    git: Any
    git_head: str | None
    options: dict[str, Any]
    # relpath -> (size, mtime_ns, content_hash, lang, extractor_version), as the files table holds them
    files: dict[str, tuple[int, int, str, str, int]] = field(default_factory=dict)


def _options(opts: dict[str, Any]) -> dict[str, Any]:
    defaults = {"include_dotfiles": False, "dotfile_patterns": [], "exclude": [], "max_file_bytes": 1 << 20,
                "git_window_days": GIT_WINDOW_DAYS}
    return {k: (list(opts[k]) if isinstance(opts.get(k), (list, tuple)) else opts[k]) if opts.get(k) is not None
            else defaults[k] for k in REPLAYED}


class LiveRoots:
    """Resolvers of the stored roots, kept between watched batches (one per CodeGraph; thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[str, RootState] = {}

    def drop(self, path: str | None = None) -> None:
        with self._lock:
            if path is None:
                self._states.clear()
            else:
                self._states.pop(path, None)

    def get(self, path: str) -> RootState | None:
        with self._lock:
            return self._states.get(path)

    def keep(self, store: GraphStore, kept: dict[str, Any]) -> None:
        """Adopt the resolver an in-process ingest just wrote (``run_ingest(keep=…)``)."""
        if not enabled() or "resolver" not in kept:
            return
        root = next((r for r in store.roots() if r.path == kept["root"]), None)
        if root is None:
            return
        state = RootState(kept["root"], root.id, root.namespace, kept["resolver"], kept["generation"], kept["git"],
                          root.git_head, _options(kept["options"]), store.file_stats(root.id))
        with self._lock:
            self._states[state.path] = state

    def prime(self, store: GraphStore) -> list[str]:
        """Build the resolver of every stored root not kept yet, from the stored extracts (what the last ingest
        resolved); returns the roots primed. Runs before the watcher's first batch, off the edit's path."""
        from m1nd.ingest.resolve.incremental import TrackedResolver

        done = []
        if not enabled():
            return done
        for root in store.roots():
            if self.get(root.path) is not None:
                continue
            with store.db.read():
                gen, _ = store.generations()
                rows = store.files(root.id)
                blob = store.root_git_blob(root.id)
            git = _git_from_json(blob) if blob is not None else None
            if blob is not None and git is None:
                continue  # stored by an older version: the next full ingest reads git again
            extracts = {rel: _decompress(f.blob) for rel, f in rows.items()}
            mtimes = {rel: f.mtime_ns // 1_000_000 for rel, f in rows.items()}
            stats = {rel: (f.size, f.mtime_ns, f.content_hash, f.lang, f.extractor_version) for rel, f in rows.items()}
            del rows
            resolver = TrackedResolver(extracts, git, mtimes, root.namespace).run()
            options = _options((root.report or {}).get("options") or {})
            with self._lock:
                if store.generations()[0] == gen:  # nobody wrote meanwhile: the resolver is the store's
                    self._states[root.path] = RootState(root.path, root.id, root.namespace, resolver, gen, git,
                                                        root.git_head, options, stats)
                    done.append(root.path)
        return done

    def stale_files(self) -> dict[str, list[str]]:
        """Per kept root, the files that changed while nothing watched: edited or removed (their size or
        modification time differ from the store's) and added (listed by a walk with the root's options)."""
        from m1nd.ingest import walker

        out: dict[str, list[str]] = {}
        with self._lock:
            states = list(self._states.values())
        for state in states:
            root = Path(state.path)
            o = state.options
            try:
                walked = {f.relpath: f for f in walker.walk(root, include_dotfiles=o["include_dotfiles"],
                                                            dotfile_patterns=o["dotfile_patterns"],
                                                            exclude=o["exclude"],
                                                            max_file_bytes=o["max_file_bytes"]).files}
            except OSError:
                continue
            stale = [rel for rel in walked if rel not in state.files]
            for rel, (size, mtime_ns, *_rest) in state.files.items():
                f = walked.get(rel)
                if f is None or f.size != size or f.mtime_ns != mtime_ns:
                    stale.append(rel)
            if stale:
                out[state.path] = sorted(stale)
        return out

    # -- one batch --------------------------------------------------------------------------------------------------
    def try_patch(
        self, store: GraphStore, path: str, changed: list[str], opts: dict[str, Any]
    ) -> IngestReport | None:
        """Patch the changed relpaths of root ``path`` into the store; ``None`` when the full ingest must run."""
        if not enabled():
            return None
        state = self.get(path)
        if state is None or _options(opts) != state.options or len(changed) > MAX_PATCH_FILES:
            return _no(path, "no kept resolver, other options or too many files")
        roots = store.roots()
        me = next((r for r in roots if r.path == path), None)
        if me is None or me.id != state.root_id:
            self.drop(path)  # the root was removed or re-created: its resolver is of no use any more
            return _no(path, "the root is not the one the resolver was made for")
        if me.is_primary and len(roots) > 1:
            return _no(path, "the root is not the only one")
        root = Path(path)
        candidates = _candidates(root, changed, state)
        if candidates is None:
            return _no(path, f"a file may have been added or removed ({', '.join(changed[:5])})")
        token = store.acquire_ingest_lock()  # BusyError: the watcher waits and retries
        try:
            if store.generations()[0] != state.generation:
                self.drop(path)  # another ingest wrote: this resolver no longer matches the store
                return _no(
                    path, f"the graph was written by another ingest ({state.generation} -> {store.generations()[0]})"
                )
            if state.git_head is not None or (root / ".git").exists():
                if _head(root) != state.git_head:
                    return _no(path, "git HEAD moved")
            got = _read_changes(root, candidates, state)
            if got is None:
                return _no(path, "a changed file is gone, binary, too large or of an older extractor")
            changes, file_rows, touch = got
            if not changes and not touch:
                return _unchanged_report(IngestReport.from_record(me.report or {}), state)
            r = state.resolver
            mtimes = {rel: m // 1_000_000 for rel, m in ((row[0], row[2]) for row in file_rows)}
            mtimes.update({rel: m // 1_000_000 for m, rel in touch})
            blobs = dict(changes)
            for _m, rel in touch:
                blobs.setdefault(rel, r.files[rel].blob)
            patch = r.patch(blobs, mtimes)
            if patch is None:
                if r.broken:
                    self.drop(path)
                return _no(path, f"the resolver cannot show the patch exact ({r.why})")
            from m1nd.ingest import gitdata

            # the work tree's fingerprint, stored as a full ingest stores it (a later one then reuses git data)
            before = state.generation
            report = _write(store, state, patch, file_rows, touch, IngestReport.from_record(me.report or {}),
                            gitdata.worktree_state(root))
            # for the service's next load (m1nd.graph.regen); never stored or sent
            report = replace(report, delta=(
                before,
                report.graph_generation,
                {(state.root_id, row[0]) for row in file_rows} | {(state.root_id, rel) for _m, rel in touch},
            ))
            for row in file_rows:
                state.files[row[0]] = (row[1], row[2], row[3], row[4], row[6])
            for m, rel in touch:
                s = state.files[rel]
                state.files[rel] = (s[0], m, s[2], s[3], s[4])
            return report
        except BaseException:
            self.drop(path)  # the resolver may be half-patched; the next batch runs the full ingest
            raise
        finally:
            store.release_ingest_lock(token)


def _no(path: str, why: str) -> None:
    log.debug("watch: %s ingested in full: %s", path, why)
    return None


def _head(root: Path) -> str | None:
    from m1nd.ingest._git import run_git

    rc, out, _ = run_git(root, "rev-parse", "-q", "--verify", "HEAD", timeout=30.0)
    return out.decode().strip() if rc == 0 else None


def _candidates(root: Path, changed: list[str], state: RootState) -> list[str] | None:
    """The changed relpaths that are files of the root; None when a path may add or remove files."""
    from m1nd.ingest.walker import detect_lang

    out = []
    opts = state.options
    for rel in changed:
        if not rel or rel == "." or rel.startswith("../"):
            return None
        parts = rel.split("/")
        if ".git" in parts:
            return None  # HEAD or a ref moved: history may have changed
        if rel in state.files:
            out.append(rel)
            continue
        p = root / rel
        if p.exists() or p.is_symlink():
            if p.is_dir():
                return None
            hidden = any(x.startswith(".") for x in parts)
            if detect_lang(rel) is None or (hidden and not opts["include_dotfiles"] and not opts["dotfile_patterns"]):
                continue  # never listed by the walker (a swap file, a build output of unknown type)
            return None  # a new file
        prefix = rel.rstrip("/") + "/"
        if any(f.startswith(prefix) for f in state.files):
            return None  # a directory of ingested files is gone
    return out


def _read_changes(root: Path, rels: list[str], state: RootState
                  ) -> tuple[dict[str, dict[str, Any]], list[list[Any]], list[tuple[int, str]]] | None:
    """New extracts of the files whose bytes changed, their file rows, and (mtime, relpath) of files touched only."""
    from m1nd.ingest import extract as ex
    from m1nd.ingest import walker

    changes: dict[str, dict[str, Any]] = {}
    rows: list[list[Any]] = []
    touch: list[tuple[int, str]] = []
    to_extract = []
    meta = {}
    for rel in sorted(set(rels)):
        size0, mtime0, hash0, lang, version0 = state.files[rel]
        try:
            st = os.lstat(root / rel)
        except OSError:
            return None  # removed
        if not stat_mod.S_ISREG(st.st_mode) or st.st_size > state.options["max_file_bytes"]:
            return None
        version = ex.extractor_version(lang)
        if version != version0:
            return None
        if st.st_size == size0 and st.st_mtime_ns == mtime0:
            continue
        got = walker.read_text(root / rel)
        if got is None:
            return None  # binary now
        data = got[0]
        h = hashlib.sha256(data).hexdigest()
        if h == hash0:
            touch.append((st.st_mtime_ns, rel))
            continue
        meta[rel] = (st.st_size, st.st_mtime_ns, lang)
        to_extract.append((rel, data, lang))
    for (rel, _data, lang), blob in zip(to_extract, ex.extract_many(to_extract) if to_extract else []):
        size, mtime_ns, _ = meta[rel]
        terms = _compress(_take_terms(blob))
        changes[rel] = blob
        rows.append([rel, size, mtime_ns, blob.get("content_hash"), lang, int(bool(blob.get("is_test"))),
                     ex.extractor_version(lang), _compress(blob), None, blob.get("parse_error"), terms])
    return changes, rows, touch


def _write(store: GraphStore, state: RootState, patch: Any, file_rows: list[list[Any]], touch: list[tuple[int, str]],
           prev: IngestReport, git_state: str | None) -> IngestReport:
    """The patch's rows, diffed against the stored ones, in one transaction (as ``ingestion._write`` does for a
    whole root)."""
    r = state.resolver
    rid = state.root_id
    db = store.db
    with db.write():
        for row in file_rows:
            row[8] = json.dumps(r.externals_of(row[0])) if r.files[row[0]].externals else "[]"
        store.write_files(rid, file_rows, [], touch)
        records = r.records(patch.rows)
        paths = sorted({r.src_path[i] for i in patch.rows})
        old_nodes = store.node_rows_at(rid, paths)
        new_nodes = {}
        for rec in records:
            vals = _node_row(rec, rid)
            new_nodes[vals[0]] = vals
        created = [v for k, v in new_nodes.items() if k not in old_nodes]
        removed_ids = [old_nodes[k][0] for k in patch.removed if k in old_nodes]
        updated = []
        for k, vals in new_nodes.items():
            old = old_nodes.get(k)
            if old is not None and _stored_row(old) != vals[1:]:
                updated.append((*vals[1:], old[0]))
        store.delete_nodes(removed_ids)
        store.update_nodes(updated)
        store.insert_nodes(created)
        new_edges_ext = r.edges_from(patch.sources)
        want = {e for k in new_edges_ext for e in (k[0], k[1])} | {r.ext[i] for i in patch.sources}
        ids = store.node_ids_by_ext(sorted(want))
        src_ids = [ids[r.ext[i]] for i in patch.sources if r.ext[i] in ids]
        old_edges = store.edges_from(src_ids)
        new_edges: dict[tuple[int, int, int], tuple[float, int]] = {}
        for (s_ext, d_ext, rel), (w0, c) in new_edges_ext.items():
            s, d = ids.get(s_ext), ids.get(d_ext)
            if s is None or d is None or s == d:
                continue
            new_edges[(s, d, int(rel))] = (float(w0), int(c))
        ins, gone, rebased = write_edge_diff(store, old_edges, new_edges)
        changed = bool(created or removed_ids or updated or ins or gone or rebased)
        if changed:
            store.bump("graph_generation")
        gen, _ = store.generations()
        total_nodes, total_edges = store.counts()
        report = _report(r, state, prev, file_rows, gen, changed,
                         {"created": len(created), "removed": len(removed_ids), "updated": len(updated),
                          "total": total_nodes},
                         {"created": ins, "removed": gone, "total": total_edges})
        store.finish_root_report(rid, git_state=git_state, report=report.to_dict())
    state.generation = gen
    return report


def _report(r: TrackedResolver, state: RootState, prev: IngestReport, file_rows: list[list[Any]], gen: int,
            changed: bool, nodes: dict[str, int], edges: dict[str, int]) -> IngestReport:
    """The root's ingest report after a patch: the previous one with this batch's counts."""
    extracts = r.extracts
    parse_errors = sorted(rel for rel, b in extracts.items() if b.get("parse_error"))
    cut = sorted(rel for rel, b in extracts.items() if b.get("cut"))
    warnings = [w for w in prev.warnings if not w.startswith(("parse error in ", "extraction bounded in "))]
    warnings += [f"parse error in {rel}: {extracts[rel]['parse_error']}" for rel in parse_errors[:20]]
    warnings += [f"extraction bounded in {rel}: {extracts[rel]['cut']}" for rel in cut[:20]]
    return replace(
        prev, files_scanned=len(state.files), files_parsed=len(file_rows),
        files_reused=len(state.files) - len(file_rows), files_removed=0,
        skipped={**prev.skipped, "parse_error": len(parse_errors)},
        files_cut=[{"path": rel, "cut": extracts[rel]["cut"]} for rel in cut[:50]], files_cut_total=len(cut),
        nodes=nodes, edges=edges, unresolved_refs=r.unresolved, ambiguous_refs=r.ambiguous, graph_generation=gen,
        changed=changed, patched=True, warnings=warnings[:50],
    )


def _unchanged_report(prev: IngestReport, state: RootState) -> IngestReport:
    return replace(prev, files_parsed=0, files_reused=len(state.files), files_removed=0, changed=False, patched=True,
                   nodes={**prev.nodes, "created": 0, "removed": 0, "updated": 0},
                   edges={**prev.edges, "created": 0, "removed": 0})


__all__ = ["LiveRoots", "RootState", "enabled"]
