"""Change localization: how well does ``activate`` find the files a real change needed? (issue 11, ``m1nd eval``)

Why: ranking changes must be measured on work nobody here wrote, in the user's own repository, beside a strong
and well-understood baseline. The set is taken from the repository's own history, as in SWE-bench file
localization: the **query** is a commit subject, the **answer** the non-test source files that commit touched
(1–3 files that still exist in the current tree). Each ranker turns a query into a ranking of distinct files, and
the figures are

* recall@k — the share of a query's answer files among the ranker's first k files, averaged over the queries;
* MRR — the mean of 1 / rank of the first answer file (0 when none is ranked);
* hit@10 — the share of queries with at least one answer file in the first 10 (the issue's "in its top 10").

Rankers compared on the same queries (the benchmarks add bm25s and a variant without embeddings):

* ``m1nd``: ``activate`` through the tool layer (:func:`m1nd.tools.registry.call_tool`, so validation, defaults and
  shaping are what an agent gets), ``top_k`` 200, the node list collapsed to distinct files in first-occurrence
  order of ``source_path``. Co-activation learning is switched off so that measuring does not change the weights
  it measures (and so the order of the queries does not matter). Extra ``activate`` arguments (``dimensions``,
  ``max_hops``...) can be passed to compare variants. Each query is asked *as of its commit*
  (``history_before``): the change-history field counts only older commits, so the subject being asked about, or a
  later one, never points at its own answer.
* ``fts5``: plain BM25 over whole files (relpath + text, identifier-split tokens) in an in-memory SQLite FTS5 table,
  see :mod:`m1nd.store.file_fts`. It indexes the non-test source files m1nd ingests, the candidates of the answers
  (SWE-bench's BM25 also leaves tests out). ``activate`` is measured as it answers (its tests, docs and config
  take result slots), because that is what an agent reads.

The set is deterministic: newest commits first (``git log --no-merges`` order), capped. Commit subjects that say
nothing about code are skipped (under 3 words, merges, reverts, releases and version bumps, dependency updates,
typo and formatting sweeps), and so are commits touching only docs (markdown, or any file under a ``docs/`` or
``doc/`` directory), config or tests, more than ``max_files``
source files, or files that are gone since; :attr:`LocalizationSet.skipped` counts each reason.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from m1nd.errors import InvalidInputError, M1ndError, NotFoundError
from m1nd.graph.ranking import is_implementation
from m1nd.ingest._git import run_git, toplevel_and_prefix
from m1nd.ingest.extract._common import is_test_path
from m1nd.ingest.gitdata import _unquote
from m1nd.ingest.walker import detect_lang, read_text, walk

log = logging.getLogger(__name__)

KS = (1, 5, 10)
DEFAULT_TOP_K = 200
DEFAULT_AGENT = "m1nd-eval"

# GitHub squash-merge suffix "(#1234)" and "[skip ci]"-style tags: metadata, not words about the change
_SUBJECT_NOISE = re.compile(r"\s*(\((?:#|gh-|GH-)\d+\)|\[(?:skip ci|ci skip|no ci)\])\s*", re.I)
_WORDS = re.compile(r"[^\W\d_][\w'.-]*")
#: (reason, pattern): a subject matching the pattern is skipped with that reason (first match wins)
SKIP_SUBJECTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("merge", re.compile(r"^\s*merge\b", re.I)),
    ("revert", re.compile(r"^\s*revert\b|^\s*\w+(\([^)]*\))?!?:\s*revert\b", re.I)),
    ("release", re.compile(r"\breleas(e|es|ed|ing)\b|\bbump(s|ed|ing)?\b|\bprepare\s+(for\s+)?v?\d"
                           r"|^\s*v?\d+(\.\d+)+\b|\bversion\s+v?\d+(\.\d+)+|\bchange ?log\b", re.I)),
    ("dependencies", re.compile(r"^\s*(chore|build|deps)\((deps|deps-dev|dependencies)\)|\bdependabot\b"
                                r"|^\s*update (all )?dependencies\b", re.I)),
    ("typo", re.compile(r"\btypos?\b|\bspelling\b|\bmisspell", re.I)),
    ("formatting", re.compile(r"^\s*(\w+(\([^)]*\))?:\s*)?(run |apply )?(black|gofmt|rustfmt|cargo fmt|prettier"
                              r"|reformat\w*|format(ting)? (code|files|sources)|fix (lint|linting|formatting)"
                              r"|lint(ing)? fix)\b", re.I)),
    ("wip", re.compile(r"^\s*(wip\b|fixup!|squash!)", re.I)),
)
MIN_WORDS = 3


# ================================================================================================== the set
@dataclass(frozen=True, slots=True)
class LocalizationQuery:
    """One change: ``query`` (the cleaned commit subject) and ``gold`` (the source files it touched, sorted)."""

    commit: str
    query: str
    gold: tuple[str, ...]
    time: int | None = None  # commit time (s): rankers that read history see only older commits

    def to_dict(self) -> dict[str, Any]:
        return {"commit": self.commit, "query": self.query, "gold": list(self.gold), "time": self.time}


@dataclass(slots=True)
class LocalizationSet:
    """Queries from one repository's history (see the module docstring)."""

    root: str
    head: str | None
    queries: list[LocalizationQuery]
    commits_scanned: int = 0
    #: skip reason -> commits skipped for it
    skipped: dict[str, int] = field(default_factory=dict)
    #: relpath -> language of every non-test source file in the current tree (the answer candidates)
    source_files: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.root, "head": self.head, "commits_scanned": self.commits_scanned,
                "skipped": dict(self.skipped), "source_files": len(self.source_files),
                "queries": [q.to_dict() for q in self.queries]}


def source_files(root: str | Path, *, exclude: Sequence[str] = ()) -> dict[str, str]:
    """``relpath -> lang`` of the source files (:func:`is_source`) under ``root`` that ``ingest`` would parse (same
    walker, same ignore rules, same test-path rule as the graph's ``is_test``)."""
    res = walk(Path(root), exclude=exclude)
    return {f.relpath: f.lang for f in res.files if is_source(f.relpath, f.lang)}


def is_source(relpath: str, lang: str | None) -> bool:
    """A file that can be an answer: implementation code (:func:`m1nd.graph.ranking.is_implementation`: a
    programming language, not a test by the graph's rule nor under a test directory, not under docs/); the same
    rule as ``activate``'s ``code_only`` filter."""
    return is_implementation(relpath, lang, is_test_path(relpath, lang or ""))


def clean_subject(subject: str) -> str:
    """The subject without GitHub's ``(#123)`` suffix and ``[skip ci]`` tags, whitespace collapsed."""
    return " ".join(_SUBJECT_NOISE.sub(" ", subject).split())


def subject_skip_reason(subject: str) -> str | None:
    """Why a (cleaned) commit subject is not a usable query, or None when it is."""
    for reason, pat in SKIP_SUBJECTS:
        if pat.search(subject):
            return reason
    if len(_WORDS.findall(subject)) < MIN_WORDS:
        return "short"
    return None


def _read_log(top: Path, max_commits: int) -> list[tuple[str, int | None, str, list[str]]]:
    rc, out, err = run_git(top, "log", "--no-merges", f"--max-count={int(max_commits)}",
                           "--format=%x1e%H%x1f%ct%x1f%s",
                           "--name-only", "--no-renames", timeout=300.0)
    if rc != 0:
        raise InvalidInputError(f"git log failed in {top}: {err[:300] or 'no output'}",
                                recover="check that the repository is readable and has commits (git log)")
    commits = []
    for rec in out.decode("utf-8", "replace").split("\x1e"):
        if not rec.strip():
            continue
        header, _, body = rec.partition("\n")
        sha, _, rest = header.partition("\x1f")
        ct, _, subject = rest.partition("\x1f")
        commits.append((sha.strip(), int(ct) if ct.strip().isdigit() else None, subject.strip(),
                        [_unquote(p) for p in body.split("\n") if p.strip()]))
    return commits


def build_localization_set(repo_root: str | Path, *, max_queries: int = 200, max_files: int = 3,
                           max_commits: int = 20000, exclude: Sequence[str] = ()) -> LocalizationSet:
    """Build the change-localization set of the git repository at ``repo_root`` (module docstring).

    Parameters
    ----------
    repo_root
        The ingest root: a git work tree or a directory inside one (paths are made relative to it; commits touching
        only files outside it are skipped).
    max_queries
        Cap on the number of queries; the newest usable commits are kept.
    max_files
        A commit is used when it touched 1..``max_files`` non-test source files.
    max_commits
        How many commits of ``git log --no-merges`` are read at most.
    exclude
        gitignore-style patterns the ingest was given (their files are not candidates).

    Raises
    ------
    InvalidInputError
        ``repo_root`` is not a directory inside a git work tree, or ``git log`` fails.
    """
    if max_queries < 1 or max_files < 1:
        raise InvalidInputError("max_queries and max_files must be at least 1")
    root = Path(repo_root).expanduser().absolute()
    if not root.is_dir():
        raise InvalidInputError(f"{root} is not a directory", recover="pass the repository's root directory")
    tp = toplevel_and_prefix(root)
    if tp is None:
        raise InvalidInputError(f"{root} is not inside a git work tree (or git is not installed)",
                                recover="run it in a git repository with history (git init; git commit), or pass "
                                        "--workspace PATH to one")
    top, prefix = tp
    rc, out, _ = run_git(top, "rev-parse", "-q", "--verify", "HEAD", timeout=30.0)
    head = out.decode("ascii", "replace").strip() if rc == 0 else None
    if head is None:
        raise InvalidInputError(f"the git repository at {top} has no commits yet",
                                recover="commit some work first; the queries are taken from commit subjects")
    present = source_files(root, exclude=exclude)
    out_set = LocalizationSet(root=str(root), head=head, queries=[], source_files=present)
    skipped: dict[str, int] = {}
    seen_subjects: set[str] = set()

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for sha, ct, raw_subject, paths in _read_log(top, max_commits):
        out_set.commits_scanned += 1
        subject = clean_subject(raw_subject)
        reason = subject_skip_reason(subject)
        if reason is not None:
            skip(reason)
            continue
        mine = {p[len(prefix):] for p in paths if p.startswith(prefix)}
        code = sorted(p for p in mine if is_source(p, present.get(p) or detect_lang(p)))
        if not code:
            skip("no source files (docs, config or tests only)")
            continue
        if any(p not in present for p in code):
            skip("files gone or not ingested")
            continue
        if len(code) > max_files:
            skip(f"more than {max_files} source files")
            continue
        key = subject.casefold()
        if key in seen_subjects:
            skip("duplicate subject")
            continue
        seen_subjects.add(key)
        out_set.queries.append(LocalizationQuery(sha, subject, tuple(code), ct))
        if len(out_set.queries) >= max_queries:
            break
    out_set.skipped = dict(sorted(skipped.items()))
    return out_set


# ================================================================================================== rankers
@dataclass
class Ranker:
    """A named function from a query to distinct files, best first.

    ``scope`` is entered once around all the queries of this ranker (e.g. switching embeddings off);
    ``close`` releases what the ranker holds; ``as_of`` (when set) ranks a query as of a commit time (seconds), for
    rankers that read the repository's history.
    """

    name: str
    rank: Callable[[str], list[str]]
    as_of: Callable[[str, int | None], list[str]] | None = None
    scope: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext
    close: Callable[[], None] = lambda: None
    #: free-form facts reported beside the figures (e.g. the semantic backends activate used)
    notes: dict[str, Any] = field(default_factory=dict)


def distinct_files(nodes: Sequence[dict[str, Any]]) -> list[str]:
    """Files of ``activate``'s node list in first-occurrence order (directories and nodes without a file skipped)."""
    seen: dict[str, None] = {}
    for n in nodes:
        path = n.get("source_path")
        if path and n.get("kind") != "dir" and path not in seen:
            seen[path] = None
    return list(seen)


@contextlib.contextmanager
def embeddings_off() -> Iterator[None]:
    """Run ``activate`` as if no embedding model were installed (same as ``M1ND_EMBEDDER=none``): the semantic
    signal falls back to the trigram index. Restores the previous embedder on exit."""
    from m1nd.memory.embeddings import NoEmbedder, get_embedder, notice_no_model, set_embedder

    previous = get_embedder()
    set_embedder(NoEmbedder("embeddings switched off for this evaluation"))
    # The once-per-process "no embedding model installed" line would be wrong here: the model is off on purpose.
    with contextlib.redirect_stderr(io.StringIO()):
        notice_no_model()
    try:
        yield
    finally:
        set_embedder(previous)


def activate_ranker(workspace: Any, *, name: str = "m1nd", top_k: int = DEFAULT_TOP_K,
                    args: dict[str, Any] | None = None, embeddings: bool = True,
                    agent_id: str = DEFAULT_AGENT) -> Ranker:
    """``activate`` of ``workspace`` as a file ranker (through the tool layer, co-activation learning off).

    ``args`` are extra ``activate`` arguments (``dimensions``, ``max_hops``, ``max_seeds``...; ``code_only`` is on
    unless ``args`` turn it off); ``embeddings=False`` runs it without the embedding model (:func:`embeddings_off`).
    """
    from m1nd.tools.registry import (
        call_tool,  # the tool layer is what agents call; imported late (it loads tools)
    )

    # code_only: the answers are implementation files and the BM25 baselines rank only those, so activate is scored
    # on the same candidates (its tests, docs and config results are still ranked, just not listed)
    base = {"agent_id": agent_id, "top_k": top_k, "coactivation_ltp": False, "include_ghost_edges": False,
            "max_output_chars": 100000, "code_only": True, **(args or {})}
    backends: dict[str, int] = {}
    ranker = Ranker(name, lambda q: [], scope=embeddings_off if not embeddings else contextlib.nullcontext,
                    notes={"activate_args": {k: v for k, v in base.items() if k not in ("agent_id",)},
                           "semantic_backends": backends, "truncated_results": 0, "rankings_under_10_files": 0})

    def rank(query: str, before: int | None = None) -> list[str]:
        extra = {"history_before": before} if before is not None else {}
        res = call_tool(workspace, "activate", {**base, "query": query, **extra})
        r = res.structured
        if res.is_error:
            err = r.get("error", {})
            if err.get("code") == "invalid_argument" and "searchable" in err.get("message", ""):
                return []  # a subject of stop words only: nothing to rank, counted as a miss
            raise M1ndError(f"activate failed on {query!r}: {err.get('message', r)}", code=err.get("code"),
                            recover=err.get("recover"))
        backend = str(r.get("semantic_backend"))
        backends[backend] = backends.get(backend, 0) + 1
        if r.get("truncated"):
            ranker.notes["truncated_results"] += 1
        files = distinct_files(r["activated"])
        if len(files) < 10:  # top_k nodes covered fewer than 10 files: recall@10 is capped for this query
            ranker.notes["rankings_under_10_files"] += 1
        return files

    ranker.rank = rank
    ranker.as_of = rank
    return ranker


def read_documents(root: str | Path, relpaths: Sequence[str]) -> Iterator[tuple[str, str]]:
    """``(relpath, text)`` of the text files among ``relpaths`` (binary or unreadable files are skipped)."""
    base = Path(root)
    for rel in relpaths:
        try:
            got = read_text(base / rel)
        except OSError as e:
            log.warning("cannot read %s: %s", rel, e)
            continue
        if got is not None:
            yield rel, got[1]


def fts5_ranker(root: str | Path, files: Sequence[str], *, name: str = "fts5", depth: int = 100) -> Ranker:
    """Plain BM25 over whole files in SQLite FTS5 (:class:`m1nd.store.file_fts.FileTextIndex`, in memory)."""
    from m1nd.store.file_fts import FileTextIndex

    idx = FileTextIndex()
    try:
        n = idx.add(read_documents(root, sorted(files)))
    except BaseException:
        idx.close()
        raise
    return Ranker(name, lambda q: [rel for rel, _ in idx.search(q, depth)], close=idx.close,
                  notes={"documents": n})


# ================================================================================================== scoring
@dataclass(slots=True)
class RankerScore:
    """Figures of one ranker over a set."""

    name: str
    queries: int
    recall: dict[int, float]
    mrr: float
    hit_at_10: float
    p50_ms: float
    notes: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "queries": self.queries, **{f"recall@{k}": round(v, 4) for k, v in
                self.recall.items()}, "mrr": round(self.mrr, 4), "hit@10": round(self.hit_at_10, 4),
                "p50_ms": round(self.p50_ms, 3), "notes": self.notes}


@dataclass(slots=True)
class Evaluation:
    """The figures of every ranker, and per query the rank of each answer file (None: not ranked) and the first
    files each ranker returned (to study the misses)."""

    root: str
    head: str | None
    scores: list[RankerScore]
    per_query: list[dict[str, Any]]

    def score(self, name: str) -> RankerScore:
        for s in self.scores:
            if s.name == name:
                return s
        raise NotFoundError(f"no ranker named {name!r}; have {[s.name for s in self.scores]}")

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.root, "head": self.head, "queries": len(self.per_query),
                "rankers": [s.to_dict() for s in self.scores], "per_query": self.per_query}


def gold_ranks(gold: Sequence[str], ranking: Sequence[str]) -> list[int | None]:
    """1-based rank of each gold file in ``ranking`` (None when absent), in ``gold`` order."""
    pos = {f: i + 1 for i, f in enumerate(ranking)}
    return [pos.get(g) for g in gold]


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks) if ranks else 0.0


def reciprocal_rank(ranks: Sequence[int | None]) -> float:
    found = [r for r in ranks if r is not None]
    return 1.0 / min(found) if found else 0.0


def score(rankers: Sequence[Ranker], queries: Sequence[LocalizationQuery], *, root: str = "", head: str | None = None,
          show: int = 10, progress: Callable[[str, int, int], None] | None = None) -> Evaluation:
    """Run every ranker on every query (ranker by ranker, each inside its ``scope``) and compute the figures.

    ``show`` first files of each ranking are kept per query; ``progress(ranker, done, total)`` is called after
    each query.
    """
    per_query: list[dict[str, Any]] = [{**q.to_dict(), "ranks": {}, "top": {}} for q in queries]
    scores = []
    for rk in rankers:
        times: list[float] = []
        with rk.scope():
            for i, q in enumerate(queries):
                t0 = time.perf_counter()
                ranking = rk.as_of(q.query, q.time) if rk.as_of is not None else rk.rank(q.query)
                times.append((time.perf_counter() - t0) * 1000)
                per_query[i]["ranks"][rk.name] = gold_ranks(q.gold, ranking)
                per_query[i]["top"][rk.name] = ranking[:show]
                if progress is not None:
                    progress(rk.name, i + 1, len(queries))
        n = len(queries)
        all_ranks = [pq["ranks"][rk.name] for pq in per_query]
        scores.append(RankerScore(
            name=rk.name, queries=n,
            recall={k: sum(recall_at(r, k) for r in all_ranks) / n if n else 0.0 for k in KS},
            mrr=sum(reciprocal_rank(r) for r in all_ranks) / n if n else 0.0,
            hit_at_10=sum(1 for r in all_ranks if recall_at(r, 10) > 0) / n if n else 0.0,
            p50_ms=statistics.median(times) if times else 0.0, notes=dict(rk.notes)))
    return Evaluation(root=root, head=head, scores=scores, per_query=per_query)


def evaluate(workspace: Any, queries: LocalizationSet | Sequence[LocalizationQuery], *,
             activate_args: dict[str, Any] | None = None, top_k: int = DEFAULT_TOP_K, embeddings: bool = True,
             baseline: bool = True, extra_rankers: Sequence[Ranker] = (),
             progress: Callable[[str, int, int], None] | None = None) -> Evaluation:
    """Recall@1/5/10, MRR and hit@10 of ``activate`` (ranker ``m1nd``) and of the FTS5 BM25 file ranker (``fts5``,
    when ``baseline``) on ``queries``, plus any ``extra_rankers``.

    ``queries`` is a :class:`LocalizationSet` (the FTS5 index then holds its ``source_files``) or a list of
    queries (the FTS5 index then holds the non-test source files of the workspace's root).
    ``activate_args`` are passed to every ``activate`` call (e.g. ``{"dimensions": ["structural", "temporal"]}``).
    """
    if isinstance(queries, LocalizationSet):
        qs, root, head, files = queries.queries, queries.root, queries.head, queries.source_files
    else:
        qs, root, head, files = list(queries), str(workspace.settings.workspace_key), None, None
    if not qs:
        raise InvalidInputError("no queries to evaluate",
                                recover="build a set from a repository with usable commits (build_localization_set)")
    rankers = [activate_ranker(workspace, top_k=top_k, args=activate_args, embeddings=embeddings)]
    try:
        if baseline:
            rankers.append(fts5_ranker(root, sorted(files if files is not None else source_files(root))))
        rankers.extend(extra_rankers)
        return score(rankers, qs, root=root, head=head, progress=progress)
    finally:
        for rk in rankers:
            rk.close()


# ================================================================================================== the graph
def ensure_ingested(workspace: Any, root: str | Path, *, force: bool = False,
                    progress: Callable[[str], None] | None = None) -> str:
    """Make the workspace's graph reflect ``root`` before measuring; returns what was done.

    * an empty graph: ``root`` is ingested (``"ingested"``);
    * a graph whose primary root is another directory: :class:`InvalidInputError` (evaluating it against this
      repository's history would be meaningless);
    * a graph whose recorded git state (HEAD + ``git status``) differs from the work tree's, or ``force``: an
      incremental re-ingest (``"re-ingested"``), unless secondary roots were merged in (a replacing ingest would drop
      them), in which case the graph is used as is and a warning is logged (``"stale"``);
    * otherwise nothing (``"up to date"``).
    """
    from m1nd.ingest.gitdata import worktree_state
    from m1nd.tools.registry import call_tool

    root_path = Path(root).expanduser().resolve()
    say = progress or (lambda _m: None)
    roots = workspace.graph.store.roots()
    primary = next((r for r in roots if r.is_primary), None)

    def ingest(verb: str) -> str:
        say(f"{verb} {root_path} (incremental)")
        r = call_tool(workspace, "ingest", {"agent_id": DEFAULT_AGENT, "path": str(root_path)})
        if r.is_error:
            err = r.structured.get("error", {})
            raise M1ndError(f"ingest of {root_path} failed: {err.get('message')}", code=err.get("code"),
                            recover=err.get("recover"))
        return verb

    if primary is None:
        return ingest("ingested")
    if Path(primary.path).resolve() != root_path:
        raise InvalidInputError(
            f"this workspace's graph was ingested from {primary.path}, not from {root_path}",
            recover=f"run `m1nd ingest {root_path}` to replace it, or pass --workspace {primary.path} to evaluate "
                    "that repository")
    stale = force or primary.git_state is None or primary.git_state != worktree_state(root_path)
    if not stale:
        return "up to date"
    if len(roots) > 1 and not force:
        log.warning("the graph is older than the work tree of %s but has merged roots; evaluating it as is "
                    "(re-ingest to refresh it)", root_path)
        return "stale"
    return ingest("re-ingested")


# ================================================================================================== rendering
def format_table(scores: Sequence[RankerScore], *, labels: dict[str, str] | None = None,
                 markdown: bool = False) -> str:
    """The figures as a text (or markdown) table: one row per ranker."""
    labels = labels or {}
    head = ["ranker", "queries", "R@1", "R@5", "R@10", "MRR", "hit@10", "p50 ms"]
    rows = [[labels.get(s.name, s.name), str(s.queries), *(f"{s.recall[k]:.3f}" for k in KS), f"{s.mrr:.3f}",
             f"{s.hit_at_10:.3f}", f"{s.p50_ms:.1f}"] for s in scores]
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    return "\n".join(fmt.format(*r) for r in [head, *rows])
