"""Change-localization corpora for the benchmarks: public repositories' git mirrors, checked out and ingested once.

Why this module: ``bench/test_localization.py`` and ``bench/localization_report.py`` measure the same thing
(issue 11: ``activate`` beside BM25 on commit subjects → touched files, per project) and must agree, so the mirror
discovery, the cached checkouts and graphs, the rankers and the tables live here once.

* **Mirrors** are bare git directories (``fetch`` brings them to ``/work/.mirror/<owner>+<name>/repo``). They are
  located at run time and nothing of them is committed: ``M1ND_LOCALIZATION_MIRRORS`` (colon-separated git dirs) or
  every ``/work/.mirror/*/repo``. The held-out projects of the issue (Django, Flask, Requests, go-git, tokio,
  webpack) are left out of the default list so that tuning never sees them; name them explicitly in
  ``M1ND_LOCALIZATION_MIRRORS`` to measure them.
* **Checkouts** are ``git clone --shared`` of the mirror at its HEAD (full history through the mirror's objects, so
  the graph gets git data and the set its commits), cached under ``bench/corpora/localization/<slug>-<sha12>/src``
  (``bench/corpora`` is git-ignored): a new mirror HEAD is a new directory, older ones of the same project are
  removed.
* **Graphs** live in a home beside each checkout. They reflect the m1nd code of their last ingest: ``reingest``
  runs a full (non-incremental) ingest so changes to extraction, resolution or indexes are picked up; code-node
  vectors are kept by text hash, so only changed texts are embedded again.
* **Rankers**, on the same queries: ``m1nd`` (``activate`` as shipped, with code embeddings when the model is
  installed), ``m1nd-noemb`` (``activate`` without the embedding model, as with ``M1ND_EMBEDDER=none``), ``bm25s``
  (the maintained bm25s library, k1 1.5, b 0.75, Lucene IDF) and ``fts5`` (SQLite FTS5 ``bm25()``, what
  ``m1nd eval`` prints). Both BM25 rankers index the same files (non-test source files) with the same
  identifier-split tokens (:func:`m1nd.store.file_fts.code_tokens`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from m1nd import evaluation as E

log = logging.getLogger("m1nd.bench.localization")

MIRROR_ROOT = Path(os.environ.get("M1ND_MIRROR_ROOT", "/work/.mirror"))
CACHE = Path(__file__).resolve().parent / "corpora" / "localization"
#: repository names held out for acceptance (issue 11): never in the default list
HELD_OUT = frozenset({"django", "flask", "requests", "go-git", "tokio", "webpack"})
#: the tuning set (the README's figures): the default selection among the mirrors, so that a mirror fetched for
#: another purpose (an extraction corpus, say) never changes what the benchmark measures
PROJECTS = ("BurntSushi/ripgrep", "axios/axios", "caddyserver/caddy", "clap-rs/clap", "colinhacks/zod",
            "encode/httpx", "expressjs/express", "gin-gonic/gin", "google/gson", "jhy/jsoup", "lodash/lodash",
            "pallets/click", "serde-rs/serde", "spf13/cobra", "vuejs/core")
RANKERS = ("m1nd", "m1nd-noemb", "bm25s", "fts5")
LABELS = {"m1nd": "m1nd activate", "m1nd-noemb": "m1nd activate, no embeddings", "bm25s": "BM25 (bm25s)",
          "fts5": "BM25 (SQLite FTS5)"}
DEFAULT_QUERIES = 100


def _git(*args: str, cwd: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.strip()[:300]}")
    return proc.stdout.strip()


@dataclass(frozen=True)
class Mirror:
    """A bare git directory and the project it holds."""

    name: str  # owner/name
    git_dir: Path
    head: str

    @property
    def slug(self) -> str:
        return self.name.replace("/", "+")

    @property
    def short(self) -> str:
        return self.name.rsplit("/", 1)[-1]


def _name_of(git_dir: Path) -> str:
    d = git_dir.resolve()
    if d.name in ("repo", ".git"):
        d = d.parent
    name = d.name.removesuffix(".git")
    return name.replace("+", "/", 1) if "+" in name else name


def discover(raw: str | None = None) -> list[Mirror]:
    """The mirrors to measure: ``raw`` / ``$M1ND_LOCALIZATION_MIRRORS`` (colon-separated git dirs, taken as given)
    or the ``<MIRROR_ROOT>/*/repo`` of the :data:`PROJECTS` present. Unreadable ones are skipped with a warning."""
    raw = raw if raw is not None else os.environ.get("M1ND_LOCALIZATION_MIRRORS")
    if raw:
        dirs = [Path(p).expanduser() for p in raw.split(":") if p.strip()]
        explicit = True
    else:
        dirs = sorted(MIRROR_ROOT.glob("*/repo")) if MIRROR_ROOT.is_dir() else []
        explicit = False
    out = []
    for d in dirs:
        name = _name_of(d)
        if not explicit and name.rsplit("/", 1)[-1].lower() in HELD_OUT:
            log.info("skipping held-out project %s (name it in M1ND_LOCALIZATION_MIRRORS to measure it)", name)
            continue
        if not explicit and name not in PROJECTS:
            continue
        try:
            head = _git("--git-dir", str(d), "rev-parse", "HEAD")
        except (RuntimeError, OSError) as e:
            log.warning("skipping %s: not a readable git directory (%s)", d, e)
            continue
        out.append(Mirror(name, d, head))
    return out


def select(mirrors: Sequence[Mirror], names: Sequence[str]) -> list[Mirror]:
    """Mirrors whose name contains one of ``names`` (case-insensitive); all when ``names`` is empty."""
    if not names:
        return list(mirrors)
    wanted = [n.lower() for n in names]
    return [m for m in mirrors if any(w in m.name.lower() for w in wanted)]


def checkout(m: Mirror, cache: Path = CACHE) -> Path:
    """The work tree of ``m`` at its HEAD (``git clone --shared``, cached per HEAD; see the module docstring)."""
    base = cache / f"{m.slug}-{m.head[:12]}"
    src = base / "src"
    if (src / ".git").exists():
        return src
    for old in cache.glob(f"{m.slug}-*"):
        if old != base:
            shutil.rmtree(old, ignore_errors=True)
    tmp = base / "src.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    base.mkdir(parents=True, exist_ok=True)
    _git("clone", "-q", "--shared", "--no-checkout", str(m.git_dir), str(tmp))
    _git("-c", "advice.detachedHead=false", "checkout", "-q", "--detach", m.head, cwd=tmp)
    tmp.rename(src)
    return src


@dataclass
class Project:
    mirror: Mirror
    src: Path
    home: Path
    workspace: Any
    ingest_s: float | None  # seconds of the ingest done by prepare(), None when the cached graph was used

    def close(self) -> None:
        self.workspace.close()


def prepare(m: Mirror, *, cache: Path = CACHE, reingest: bool = False, embed: bool = True,
            say: Callable[[str], None] = lambda _m: None) -> Project:
    """Check out ``m`` and open its workspace, ingesting when there is no graph yet, when ``reingest`` (a full
    ingest), or when embeddings are wanted and the last ingest did not compute them."""
    from m1nd.config import Settings
    from m1nd.tools.registry import call_tool
    from m1nd.workspace import Workspace

    src = checkout(m, cache)
    home = src.parent / "home"
    marker = src.parent / "ingest.json"
    ws = Workspace(Settings(home=home, workspace_key=src, busy_timeout_ms=30000))
    try:
        done = json.loads(marker.read_text()) if marker.exists() else None
        has_graph = bool(ws.graph.store.roots())
        need = reingest or not has_graph or done is None or (embed and not done.get("embed"))
        took = None
        if need:
            full = reingest or not has_graph
            say(f"{m.name}: {'full ' if full else ''}ingest{' + embeddings' if embed else ''} of {src}")
            t0 = time.perf_counter()
            r = call_tool(ws, "ingest", {"agent_id": "bench", "path": str(src), "incremental": not full,
                                         "embed": "sync" if embed else "skip"})
            if r.is_error:
                raise RuntimeError(f"ingest of {m.name} failed: {r.structured}")
            took = time.perf_counter() - t0
            marker.write_text(json.dumps({"embed": embed, "head": m.head,
                                          "seconds": round(took, 2), "nodes": r.structured["nodes"]["total"]}))
        return Project(m, src, home, ws, took)
    except BaseException:
        ws.close()
        raise


def bm25s_ranker(root: Path, files: Sequence[str], *, k1: float = 1.5, b: float = 0.75, depth: int = 100
                 ) -> E.Ranker:
    """BM25 over whole files with the bm25s library (same documents and tokens as the FTS5 ranker)."""
    import bm25s
    import numpy as np
    from m1nd.store.file_fts import code_tokens

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets DEBUG on import: keep stderr readable

    docs = list(E.read_documents(root, sorted(files)))
    paths = [rel for rel, _ in docs]
    retriever = bm25s.BM25(k1=k1, b=b)
    retriever.index([code_tokens(rel + "\n" + text) for rel, text in docs], show_progress=False)
    vocab = retriever.vocab_dict

    def rank(query: str) -> list[str]:
        toks = [t for t in dict.fromkeys(code_tokens(query)) if t in vocab]
        if not toks:
            return []
        scores = retriever.get_scores(toks)
        hits = np.nonzero(scores > 0)[0].tolist()
        hits.sort(key=lambda i: (-float(scores[i]), paths[i]))
        return [paths[i] for i in hits[:depth]]

    return E.Ranker("bm25s", rank, notes={"documents": len(docs), "k1": k1, "b": b})


def main_language(files: dict[str, str]) -> str:
    counts = Counter("typescript" if lang == "tsx" else lang for lang in files.values() if lang != "other")
    return counts.most_common(1)[0][0] if counts else "other"


def evaluate_project(p: Project, *, max_queries: int = DEFAULT_QUERIES, activate_args: dict[str, Any] | None = None,
                     rankers: Sequence[str] = RANKERS,
                     progress: Callable[[str, int, int], None] | None = None) -> tuple[E.LocalizationSet, E.Evaluation]:
    """Build the project's set and score the chosen rankers on it."""
    s = E.build_localization_set(p.src, max_queries=max_queries)
    files = sorted(s.source_files)
    made: list[E.Ranker] = []
    try:
        for name in rankers:
            if name == "m1nd":
                made.append(E.activate_ranker(p.workspace, name=name, args=activate_args))
            elif name == "m1nd-noemb":
                made.append(E.activate_ranker(p.workspace, name=name, args=activate_args, embeddings=False))
            elif name == "bm25s":
                made.append(bm25s_ranker(p.src, files))
            elif name == "fts5":
                made.append(E.fts5_ranker(p.src, files))
            else:
                raise ValueError(f"unknown ranker {name!r}; choose from {', '.join(RANKERS)}")
        ev = E.score(made, s.queries, root=str(p.src), head=s.head,
                     progress=(lambda r, i, n: progress(f"{p.mirror.short} {r}", i, n)) if progress else None)
    finally:
        for rk in made:
            rk.close()
    return s, ev


def summary_row(m: Mirror, s: E.LocalizationSet, ev: E.Evaluation) -> dict[str, Any]:
    """One project's figures as plain data (JSON output, benchmark extra_info)."""
    return {"project": m.name, "head": m.head, "language": main_language(s.source_files),
            "queries": len(s.queries), "candidate_files": len(s.source_files), "commits_scanned": s.commits_scanned,
            "rankers": {sc.name: sc.to_dict() for sc in ev.scores}}


def markdown_tables(rows: Sequence[dict[str, Any]]) -> str:
    """The per-project comparison (recall@1/5/10, MRR; m1nd beside both BM25) and the mean over projects."""
    names = [n for n in RANKERS if rows and n in rows[0]["rankers"]]
    out = ["| project | lang | queries | files | ranker | R@1 | R@5 | R@10 | MRR | hit@10 |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for i, n in enumerate(names):
            f = r["rankers"][n]
            lead = (f"| {r['project']} | {r['language']} | {r['queries']} | {r['candidate_files']} " if i == 0
                    else "| | | | ")
            out.append(lead + f"| {LABELS.get(n, n)} | {f['recall@1']:.3f} | {f['recall@5']:.3f} | "
                       f"{f['recall@10']:.3f} | {f['mrr']:.3f} | {f['hit@10']:.3f} |")
    if len(rows) > 1:
        total = sum(r["queries"] for r in rows)
        for i, n in enumerate(names):
            mean = {k: sum(r["rankers"][n][k] for r in rows) / len(rows) for k in
                    ("recall@1", "recall@5", "recall@10", "mrr", "hit@10")}
            lead = f"| **mean of {len(rows)} projects** | | {total} | " if i == 0 else "| | | | "
            out.append(lead + f"| {LABELS.get(n, n)} | {mean['recall@1']:.3f} | {mean['recall@5']:.3f} | "
                       f"{mean['recall@10']:.3f} | {mean['mrr']:.3f} | {mean['hit@10']:.3f} |")
    if rows and "m1nd" in names and "bm25s" in names:
        out += ["", "| project | m1nd R@10 | bm25s R@10 | Δ R@10 | m1nd MRR | bm25s MRR | Δ MRR |",
                "|---|---|---|---|---|---|---|"]
        for r in rows:
            a, b = r["rankers"]["m1nd"], r["rankers"]["bm25s"]
            out.append(f"| {r['project']} | {a['recall@10']:.3f} | {b['recall@10']:.3f} | "
                       f"{a['recall@10'] - b['recall@10']:+.3f} | {a['mrr']:.3f} | {b['mrr']:.3f} | "
                       f"{a['mrr'] - b['mrr']:+.3f} |")
    return "\n".join(out)


def stderr_progress() -> Callable[[str, int, int], None] | None:
    """``project ranker 37/100`` rewritten in place on stderr, when it is a terminal."""
    if not sys.stderr.isatty():
        return None

    def step(what: str, done: int, total: int) -> None:
        sys.stderr.write(f"\r\033[K{what}: {done}/{total}")
        if done == total:
            sys.stderr.write("\r\033[K")
        sys.stderr.flush()

    return step
