"""The one ranking: query → relevance → seeds, and the fusion of relevance with the graph's dimensions.

``activate``, ``warmup``, ``missing`` and perspectives all rank through here (spec activation.md §1 and §7 were
the first design; this module is what ships, and the README's "How activate ranks" section states the formulas).

Relevance of node n for a query (all terms folded, stopwords out, each distinct term once):

    rel(n) = prior(n) · (A_NODE · N(n) + A_FILE · F(file(n)))

where N is the node-grain BM25F score and F the file-grain one (:mod:`m1nd.graph.lexicon`), each divided by its
maximum over the graph for this query, and their query weights routed: a term's weight is multiplied by
``clip(idf_hist(t) / idf_file(t), ROUTE_MIN, 1)`` (:func:`route_weights`: words that commit subjects use far more
than the code, such as "fix" or "support", describe the change, not the code), and ``prior`` demotes tests,
docs/examples, vendored and generated code unless the query asks for them. A direct hit (an external id or a path in
the query) has rel 1. With code embeddings,
``sem(n)`` joins by noisy-OR: ``rel' = 1 − (1 − rel)(1 − S_SEM·sem)``.

Fusion (no saturating cap: scores stay ordered):

    score(n) = prior(n) · (rel(n) + Σ_d W_d · D_d(n) + W_HIST · H(file(n))) / (1 + Σ_d W_d) + PR · pagerank(n)

over the dimensions in use (structural spread, semantic, temporal, causal from activation.md §2–§5). ``H`` is the
history field (:mod:`m1nd.graph.history`): BM25 of the query against the subjects of the commits that touched the
file, after priors, divided by the mean of its HIST_TOP (2) best for this query; it joins at the fusion and not in
rel(n), so it never takes a seed's place (as a seed it lifted MRR by 0.013 on the 15-project set, at the fusion by
0.023). Everything is a sum of non-negative terms with fixed weights: deterministic, and a better match always moves
up.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from m1nd.graph.history import HistoryIndex
from m1nd.graph.lexicon import CONVENTIONAL_TYPES, TermIndex, weighted_query_terms
from m1nd.graph.nodes import DIR, NodeTable
from m1nd.graph.seeds import lookup_sorted, sorted_unique

A_NODE = 0.6
A_FILE = 0.4
W_HIST = 0.4
#: H is divided by the mean of its HIST_TOP best values for the query (N and F by their best)
HIST_TOP = 2
#: the least share of its query weight a term keeps in the code grains (:func:`route_weights`)
ROUTE_MIN = 0.25
S_SEM = 0.6
DIM_WEIGHTS = {"structural": 0.35, "semantic": 0.3, "temporal": 0.05, "causal": 0.15}
PR = 0.002

TEST_PRIOR = 0.2
DOCS_PRIOR = 0.15
GENERATED_PRIOR = 0.3
DECLARATION_PRIOR = 0.7
DIR_PRIOR = 0.25
_TEST_DIRS = re.compile(r"(^|/)(tests?|testing|__tests__|spec|specs|testdata|test_data|fixtures?|__mocks__)/")
_DOCS_DIRS = re.compile(r"(^|/)(docs?|examples?|samples?|demos?|tutorials?|benchmarks?|bench)/")
_VENDOR = re.compile(r"(^|/)(vendor|vendored|third_party|thirdparty|external|node_modules)/")
_GENERATED = re.compile(r"(_pb2(_grpc)?\.py$|\.pb\.go$|\.min\.js$|(^|/)generated/|\.gen\.|_generated\.)")
_TEST_WORDS = frozenset({"test", "tests", "testing", "spec", "specs", "unittest", "pytest", "fixture", "fixtures"})
#: words that ask for type declarations (``.d.ts``): a change to "types" is made in the declaration files, which the
#: declaration prior would otherwise rank below the JavaScript that implements the same names
_DECL_WORDS = frozenset({"types", "typings", "typing", "typescript", "ts", "dts", "tsd", "declaration", "declarations"})
_DOC_WORDS = frozenset({"doc", "docs", "documentation", "example", "examples", "readme", "tutorial", "changelog",
                        "benchmark", "benchmarks", "bench"})


def in_test_dir(relpath: str) -> bool:
    """A path under a test directory (``test/``, ``__tests__/``, ``spec/``, fixtures...): ranked as a test whatever
    the language's own test-file rule says (JavaScript projects keep their tests in ``test/`` by convention)."""
    return bool(_TEST_DIRS.search(relpath))


#: languages whose files are implementation code (markdown and config files are not)
CODE_LANGS = frozenset({"python", "javascript", "typescript", "tsx", "go", "rust", "java", "c", "cpp", "csharp", "ruby",
                        "php", "kotlin", "other"})
#: directories whose files are documentation even when written in a programming language (Sphinx ``conf.py``, doc
#: snippets)
DOC_DIRS = frozenset({"docs", "doc"})


def is_implementation(relpath: str, lang: str | None, is_test: bool) -> bool:
    """A file of implementation code: a programming language, not a test (by the graph's rule or under a test
    directory), not under docs/. What ``activate``'s ``code_only`` keeps and what ``m1nd eval`` counts as an answer."""
    return (lang in CODE_LANGS and not is_test and not in_test_dir(relpath)
            and not DOC_DIRS.intersection(relpath.split("/")[:-1]))


def implementation_mask(t: NodeTable) -> np.ndarray:
    """bool per node: the node lies in a file of implementation code (:func:`is_implementation`); directories are
    not. Computed per file node, then gathered to what each file contains."""
    files = np.where(t.file_of >= 0, t.file_of, np.arange(t.n, dtype=np.int32)).astype(np.int64)
    per_file: dict[int, bool] = {}
    out = np.zeros(t.n, bool)
    for i, f in enumerate(files.tolist()):
        ok = per_file.get(f)
        if ok is None:
            ok = per_file[f] = bool(t.kind[f] != DIR) and is_implementation(t.source_path[f], t.lang[f],
                                                                          bool(t.is_test[f]))
        out[i] = ok
    return out


class Priors(NamedTuple):
    """Path priors per node, computed once per graph generation (and cached with it)."""

    prior: np.ndarray  # float32: the factor for ordinary queries
    testy: np.ndarray  # bool: a test (the graph's rule or a test directory)
    docsy: np.ndarray  # bool: documentation, examples, benchmarks
    declsy: np.ndarray  # bool: in a type-declaration file (``.d.ts``) ranked at DECLARATION_PRIOR, which a query
    # about types lifts to 1


def priors(t: NodeTable) -> Priors:
    """The path priors of every node (:class:`Priors`), computed per unique path."""
    n = t.n
    prior = np.ones(n, np.float32)
    testy = np.asarray(t.is_test, bool).copy()
    docsy = np.zeros(n, bool)
    declsy = np.zeros(n, bool)
    by_path: dict[str, tuple[float, bool, bool, bool]] = {}
    paths = t.source_path
    for i in range(n):
        p = paths[i]
        hit = by_path.get(p)
        if hit is None:
            f, is_t, is_d, is_decl = 1.0, in_test_dir(p), False, False
            base = p.rsplit("/", 1)[-1]
            if _DOCS_DIRS.search(p) or base.lower().endswith((".md", ".rst", ".txt")):
                is_d = True
                f = DOCS_PRIOR
            if _VENDOR.search(p) or _GENERATED.search(p):
                f = min(f, GENERATED_PRIOR)
            if base.endswith((".d.ts", ".d.mts", ".d.cts")):
                # the declaration prior is the one a query about types lifts; a vendored or documentation
                # declaration file keeps its lower factor
                is_decl = f > DECLARATION_PRIOR
                f = min(f, DECLARATION_PRIOR)
            hit = by_path[p] = (f, is_t, is_d, is_decl)
        prior[i] = hit[0]
        testy[i] |= hit[1]
        docsy[i] = hit[2]
        declsy[i] = hit[3]
    dirs = t.kind == DIR
    prior[dirs] *= DIR_PRIOR  # a directory is reached by containment, rarely the answer itself
    declsy[dirs] = False
    return Priors(prior, testy, docsy, declsy)


@dataclass
class Relevance:
    nodes: np.ndarray  # int64 ascending
    values: np.ndarray  # float32 rel(n) in (0, 1]
    terms: list[str]
    history: tuple[np.ndarray, np.ndarray] | None = None  # (ascending file nodes, H(file) in (0, 1])


def relevance(lex: TermIndex, t: NodeTable, pr: Priors, query: str, *, tests_wanted: bool,
              docs_wanted: bool, history: HistoryIndex | None = None,
              before: int | None = None, decls_wanted: bool = False) -> Relevance:
    """rel(n) on the nodes some query term reaches, and H(file) of the history field when ``history`` is given
    (counting only commits older than ``before``, in seconds, when that is given); see the module docstring."""
    weighted = weighted_query_terms(query)
    terms = list(weighted)
    keys, qw = lex.keys_weighted(weighted)
    if history is not None and len(keys) and history.commits:
        qw = route_weights(lex, history, keys, qw, before)
    empty = np.zeros(0, np.int64), np.zeros(0, np.float32)
    ni, ns = lex.score_nodes(keys, qw) if len(keys) else empty
    fi, fs = lex.score_files(keys, qw) if len(keys) else empty
    hi, hs = history.score(weighted, before) if history is not None else empty
    if not len(ni) and not len(fi) and not len(hi):
        return Relevance(*empty, terms)
    hist = None
    ni, fi = ni.astype(np.int64), fi.astype(np.int64)
    # priors first, then each grain divided by its best: a changelog that repeats every word must not set the scale
    # that the implementation files are measured against
    qp = functools.partial(query_prior, pr, tests_wanted=tests_wanted, docs_wanted=docs_wanted,
                           decls_wanted=decls_wanted)
    ns = ns * qp(ni)
    fs = fs * qp(fi)
    hs = hs * qp(hi)
    ns = by_best(ns)
    fs = by_best(fs)
    # the history field by the mean of its two best: a file whose history stands out from the next counts up to
    # twice, two files the history cannot tell apart count as with the best as the scale
    hs = by_best(hs, HIST_TOP)
    if len(hi):
        hist = (hi, hs.astype(np.float32))
    if not len(ni) and not len(fi):
        return Relevance(*empty, terms, hist)
    # the file grain lifts the nodes that match themselves (and the file node): a file's score spread over all its
    # definitions would bury every other file under one file's methods
    cand = sorted_unique(np.concatenate([ni, fi]))
    fo = t.file_of[cand].astype(np.int64)
    fo = np.where(fo >= 0, fo, cand)
    own = lookup_sorted(ni, ns, cand)
    in_file = lookup_sorted(fi, fs, fo)
    rel = (A_NODE * own + A_FILE * in_file).astype(np.float32)
    keep = rel > 0
    return Relevance(cand[keep], rel[keep], terms, hist)


def route_weights(lex: TermIndex, history: HistoryIndex, keys: np.ndarray, qw: np.ndarray, before: int | None
                  ) -> np.ndarray:
    """Query weights of the code grains, each term's weight times ``idf_hist / idf_code`` clipped to
    [ROUTE_MIN, 1]: a word that commit subjects use far more often than the code does ("fix", "support",
    "improve", a release chore's words) describes the change rather than naming the code, and keeps its full
    weight in the history field only. Terms no older subject holds keep their weight."""
    hidf = history.term_idf([lex.terms[k] for k in keys.tolist()], before)
    if not hidf:
        return qw
    out = qw.copy()
    for j, k in enumerate(keys.tolist()):
        h = hidf.get(lex.terms[k])
        if h is not None:
            out[j] = qw[j] * min(1.0, max(h / max(float(lex.file_idf[k]), 1e-6), ROUTE_MIN))
    return out


def by_best(x: np.ndarray, k: int = 1) -> np.ndarray:
    """``x`` divided by the mean of its ``k`` best values (by its best when k is 1): the best value becomes at most
    ``k``, the more so the further it stands above the next ones."""
    if not len(x):
        return x
    k = min(k, len(x))
    top = np.partition(x, len(x) - k)[len(x) - k:]
    return x / max(float(top.mean()), 1e-9)


def query_prior(pr: Priors, idx: np.ndarray, *, tests_wanted: bool, docs_wanted: bool,
                decls_wanted: bool = False) -> np.ndarray:
    """prior(n) at the given nodes for this query: tests, docs and type declarations keep full weight when the query
    asks for them."""
    p = pr.prior[idx].copy()
    if decls_wanted:
        p[pr.declsy[idx]] = 1.0
    if not tests_wanted:
        p[pr.testy[idx]] *= TEST_PRIOR
    if docs_wanted:
        d = pr.docsy[idx]
        p[d] = np.maximum(p[d], 1.0)
    return p


_CONVENTIONAL_PREFIX = re.compile(r"^\s*([A-Za-z]+)(?:\(([^)]{0,60})\))?!?:\s+")


def wants(query: str) -> tuple[bool, bool]:
    """Does the query ask for tests, for docs? A conventional-commit type word (``test: …``, ``docs(x): …``) says
    what kind of change it is, not where it lives, so it does not count; its scope (``chore(examples): …``) does."""
    m = _CONVENTIONAL_PREFIX.match(query)
    if m and m.group(1).casefold() in CONVENTIONAL_TYPES:
        query = f"{m.group(2) or ''} {query[m.end():]}"
    s = {w.casefold() for w in re.findall(r"[A-Za-z]+", query)}
    return bool(s & _TEST_WORDS), bool(s & _DOC_WORDS)


def wants_declarations(query: str) -> bool:
    """Does the query ask for type declarations? Unlike :func:`wants`, a conventional-commit type word counts here:
    ``types: …`` says where the change is made (the declaration files), not only what kind of change it is."""
    return bool({w.casefold() for w in re.findall(r"[A-Za-z]+", query)} & _DECL_WORDS)


def fuse(rel: np.ndarray, dims: dict[str, np.ndarray], used: list[str], pagerank: np.ndarray,
         prior: np.ndarray, history: np.ndarray | None = None) -> np.ndarray:
    """score(n) at a set of nodes, given rel and each used dimension's value there, and H(file(n)) when the
    history field matched (module docstring)."""
    total = 1.0 + sum(DIM_WEIGHTS[d] for d in used)
    s = rel.astype(np.float64).copy()
    for d in used:
        s += DIM_WEIGHTS[d] * dims[d]
    if history is not None:
        s += W_HIST * history
    return (prior * s / total + PR * pagerank).astype(np.float32)


def sem_join(rel: np.ndarray, sem: np.ndarray) -> np.ndarray:
    """Noisy-OR of relevance and the query's semantic similarity."""
    return (1.0 - (1.0 - rel) * (1.0 - S_SEM * sem)).astype(np.float32)
