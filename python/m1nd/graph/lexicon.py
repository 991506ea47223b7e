"""Weighted lexical index over every node's text (BM25F), at two grains: nodes and whole files.

Why two grains. A definition is a short document: its name, its signature and docstring, the identifiers its body
uses, its comments and strings. Matching it finds *the function that does the work*. But a change description is
usually answered by a file, and a file's evidence is spread over many definitions: whole-file BM25 is what plain
code search does well, so the file grain keeps that strength and the node grain adds precision inside the file.

Fields and weights (BM25F, Robertson & Zaragoza): per node, ``tf~(t) = W_NAME·tf_name + W_PATH·tf_path +
tf_body / (1 − B + B·len_body/avg_len_body)`` and the posting weight is ``tf~/(K1 + tf~)``; at query time each
distinct query term adds ``idf(t)·weight``, so a rare identifier counts far more than an everyday word and a long
query is a sum, never an average (no dilution). ``name`` = the label and its identifier parts, ``path`` = the
file path's directory names and stem parts (file nodes), ``body`` = the node's own words
(:mod:`m1nd.ingest.terms`). The file grain is the same with the whole file as body and its path as the name field.

Terms are case-folded identifier parts plus the whole identifier, stemmed with the Snowball English stemmer
(``deprecated`` and ``deprecation`` meet ``deprecate``), applied identically to the query; stopwords are neither
indexed nor queried. Posting lists are accumulated by the native kernel
(``m1nd_core.postings``), weights precomputed, idf applied per query as the key weight.
"""

from __future__ import annotations

import functools
import itertools
import re
import threading
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import Stemmer  # PyStemmer: the Snowball stemmers in C (this module is its only importer)

from m1nd.graph.engine import PostingLists, count_terms, fold_forms, word_folds
from m1nd.graph.nodes import DIR, FILE, NodeTable
from m1nd.graph.seeds import pack_strings, unpack_strings
from m1nd.identifiers import HUMPS, identifier_parts

K1 = 2.0
B = 0.5
B_FILE = 0.15
W_NAME = 3.0
W_PATH = 2.0
W_FILE_PATH = 3.0
W_FILE_NAMES = 1.0  # the file grain also counts its definitions' names once more (defined here, not just used)

#: English function words and words every change description uses; removed from queries (the index keeps them:
#: idf already makes them cheap, and a query of only such words still needs something to match)
QUERY_STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between both
but by can could did do does doing done down during each either else etc even ever every few for from further get
gets got had has have having he her here hers him his how however i if in into is it its itself just let lets like
make makes made may me might more most much must my need needs no nor not now of off on once one only or other our
out over own per please same shall she should since so some such than that the their them then there these they
this those though through thus to too under until up upon us use used uses using very via was we were what when
where whether which while who whom whose why will with within without would yet you your
codebase task validate focus around instead way ways thing things something now also new old
""".split())


# no word cache in the stemmer: its purge (sorting the cache when it outgrows 10,000 words) made stemming a batch
# of the stdlib's 50,000 label words 4-6x slower; repeated words are cached by the callers (fold, the extraction's
# per-process word cache)
_STEMMER = Stemmer.Stemmer("english", 0)
_STEM_LOCK = threading.Lock()  # a Stemmer object is not thread-safe; stems are cached, so the lock is rarely taken
_QWORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[^\W\d_][\w]*")


@functools.lru_cache(maxsize=1 << 18)
def fold(word: str) -> str:
    """Case-fold and stem (Snowball English), identically for documents and queries: ``deprecated``,
    ``deprecation`` → ``deprec``; ``transports`` → ``transport``; ``entries`` → ``entri``."""
    with _STEM_LOCK:
        return _STEMMER.stemWord(word.casefold())


@functools.lru_cache(maxsize=1 << 18)
def forms(word: str) -> tuple[str, ...]:
    """Index terms of one written word: the whole word and its identifier parts (≥ 2 chars, not stopwords),
    folded, distinct, sorted."""
    out = set()
    whole = word.casefold()
    if len(whole) >= 2 and whole not in QUERY_STOPWORDS:
        out.add(fold(whole))
    for p in identifier_parts(word):
        if len(p) >= 2 and p not in QUERY_STOPWORDS:
            out.add(fold(p))
    return tuple(sorted(out))


#: "feat(parser)!: …", "fix: …": the type word says what kind of change, not what it touches
_CONVENTIONAL = re.compile(r"^\s*([A-Za-z]+)(?:\(([^)]{1,60})\))?!?:\s+")
_CODE_SPAN = re.compile(r"`([^`]+)`")
#: weight of a term written as code: backticked, or an identifier with an inner capital, underscore or dot
CODE_WEIGHT = 2.0
#: weight of a conventional-commit scope ("fix(router): …" names the router's file or package)
SCOPE_WEIGHT = 2.0


def forms_many(words: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """:func:`forms` of many distinct words at once (the index build's vocabulary): plain lower-case words skip the
    identifier split, and every distinct part is stemmed in one batch call. The split is native
    (``m1nd_core.wordfold.fold_forms``; a word with non-ASCII characters goes through :func:`_word_parts`)."""
    order = list(words)
    return dict(zip(order, fold_forms(order, QUERY_STOPWORDS, _stem_batch, _word_parts, False)))


def folded_texts(words: list[str]) -> list[str]:
    """Per word, its :func:`forms_many` joined by spaces (``""`` for a stopword): the extraction's folded text of a
    written word (:mod:`m1nd.ingest.terms`)."""
    return fold_forms(words, QUERY_STOPWORDS, _stem_batch, _word_parts, True)


def _stem_batch(parts: list[str]) -> list[str]:
    with _STEM_LOCK:
        return _STEMMER.stemWords(parts)


def _word_parts(w: str) -> list[str]:
    """The index parts of one word before stemming (the rule :func:`fold_forms` applies natively to ASCII words):
    a plain lower-case word itself, else the case-folded word and its identifier humps, 2+ characters, no
    stopwords."""
    if w.isalpha() and w.islower():
        return [w] if len(w) >= 2 and w not in QUERY_STOPWORDS else []
    whole = w.casefold()
    parts = [whole] if len(whole) >= 2 and whole not in QUERY_STOPWORDS else []
    parts.extend([p for p in map(str.lower, HUMPS.findall(w)) if len(p) >= 2 and p not in QUERY_STOPWORDS])
    return parts


def query_terms(query: str) -> list[str]:
    """Folded query terms, each once, in first-seen order (see :func:`weighted_query_terms`)."""
    return list(weighted_query_terms(query))


def weighted_query_terms(query: str) -> dict[str, float]:
    """Folded query terms → query weight. Every word of the query (punctuation such as backticks, ``=`` or ``/``
    separates words) counts as a whole and split into identifier parts, stopwords out. Words written as code
    (backticked, or identifiers such as ``bulk_create`` / ``parseURL`` / ``a.b``) weigh CODE_WEIGHT: a change
    description names its code that way, and a prose word is far more often incidental. A conventional-commit
    prefix (``fix(router): …``) gives its scope SCOPE_WEIGHT and drops its type word (``docs``, ``test`` say what
    kind of change it is, not what it touches)."""
    out: dict[str, float] = {}

    def add(text: str, weight: float) -> None:
        for word in _QWORD.findall(text):
            for f in forms(word):
                if out.get(f, 0.0) < weight:
                    out[f] = weight

    m = _CONVENTIONAL.match(query)
    if m and m.group(1).casefold() in CONVENTIONAL_TYPES:
        if m.group(2):
            add(m.group(2), SCOPE_WEIGHT)
        query = query[m.end():]
    for span in _CODE_SPAN.findall(query):
        add(span, CODE_WEIGHT)
    for word in re.findall(r"[A-Za-z_][\w.]*[\w]|[A-Za-z_]", query):
        if "_" in word.strip("_") or "." in word or re.search(r"[a-z][A-Z]", word):
            add(word, CODE_WEIGHT)
    add(query, 1.0)
    return out


CONVENTIONAL_TYPES = frozenset("""feat feature fix bugfix hotfix docs doc style refactor perf test tests chore build ci
revert deps dep security sec release types typing lint wip""".split())


def fallback_terms(t: NodeTable) -> list[str]:
    """Body terms from each node's signature and docstring (a graph built without stored terms)."""
    return [" ".join(f for w in _QWORD.findall(f"{t.signature[i]} {t.doc[i]}") for f in forms(w))
            for i in range(t.n)]


def node_terms_from_blobs(t: NodeTable, rows: Iterable[tuple[int, str, str, list[tuple[str, str]]]]
                          ) -> list[str]:
    """Per-node term strings (``""`` when absent) from extract blobs read back from the store: ``rows`` are
    ``(root_id, relpath, file_terms, [(local definition id, terms), ...])``; a definition's node is its file's
    external id plus ``::`` plus its local id (graph.md §3)."""
    out = [""] * t.n
    file_at: dict[tuple[int, str], int] = {}
    for i in np.flatnonzero(t.kind == FILE).tolist():
        file_at[(int(t.root_id[i]), t.source_path[i])] = i
    for i, terms in blob_terms(t, rows, file_at):
        out[i] = terms
    return out


def blob_terms(t: NodeTable, rows: Iterable[tuple[int, str, str, list[tuple[str, str]]]],
               file_at: dict[tuple[int, str], int]) -> Iterable[tuple[int, str]]:
    """(node position, body terms) of every node the stored extract blobs ``rows`` speak of (see
    :func:`node_terms_from_blobs`); ``file_at`` maps (root id, relpath) to the file nodes wanted."""
    index = t.index
    for root_id, relpath, file_terms, defs in rows:
        f = file_at.get((int(root_id), relpath))
        if f is None:
            continue
        yield f, file_terms or ""
        head = t.ext_id[f] + "::"
        for local, terms in defs:
            i = index.get(head + local)
            if i is not None:
                yield i, terms or ""


@dataclass
class TermParts:
    """A :class:`TermIndex`'s input as per-node triples, term ids into the sorted vocabulary ``terms``: the name
    field (each non-directory node's label terms, in node order), the path field (each file's directory and stem
    terms, in file order) and the body field (each node's distinct body terms with their counts, in node order,
    then first-seen order). ``refs`` counts, per term, the nodes whose label, path or body brings it into the
    vocabulary (directories' labels included), so a patch knows when a term leaves it."""

    terms: list[str]
    refs: np.ndarray  # int64[V]
    name_t: np.ndarray  # int32 term ids
    name_n: np.ndarray  # int32 nodes
    path_t: np.ndarray
    path_n: np.ndarray
    body_t: np.ndarray
    body_n: np.ndarray
    body_c: np.ndarray  # float32 counts

    @classmethod
    def build(cls, t: NodeTable, node_terms: Sequence[str]) -> TermParts:
        n = t.n
        vocab: dict[str, int] = {}
        kind = t.kind

        def tid(term: str) -> int:
            k = vocab.get(term)
            if k is None:
                k = vocab[term] = len(vocab)
            return k

        # name field, vectorised: each distinct label folded once (a label -> terms CSR) and gathered to its nodes;
        # files add their path's directories and stem. Repeated (term, node) pairs are summed by _postings.
        label_forms = forms_many(dict.fromkeys(t.label))
        label_key = {lab: k for k, lab in enumerate(label_forms)}
        l_off = array("q", [0])
        l_flat = array("i")
        for fs in label_forms.values():
            l_flat.extend([tid(f) for f in fs])
            l_off.append(len(l_flat))
        lab_idx = np.fromiter(map(label_key.__getitem__, t.label), np.int64, count=n)
        off = np.frombuffer(l_off, np.int64)
        flat = np.frombuffer(l_flat, np.int32) if len(l_flat) else np.zeros(0, np.int32)
        every = off[lab_idx + 1] - off[lab_idx]
        cnt = np.where(kind != DIR, every, 0)
        name_nodes = np.repeat(np.arange(n, dtype=np.int32), cnt)
        first = np.repeat(off[lab_idx], cnt)
        within = np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(np.cumsum(cnt) - cnt, cnt)
        name_terms = flat[first + within] if len(within) else np.zeros(0, np.int32)
        # every label's terms, directories' too, are in the vocabulary
        all_first = np.repeat(off[lab_idx], every)
        all_within = np.arange(int(every.sum()), dtype=np.int64) - np.repeat(np.cumsum(every) - every, every)
        label_refs = flat[all_first + all_within] if len(all_within) else np.zeros(0, np.int32)
        path_t, path_n = array("i"), array("i")
        for i in np.flatnonzero(kind == FILE).tolist():
            for f in _path_forms(t.source_path[i]):
                path_t.append(tid(f))
                path_n.append(i)
        # body field: each node's stored terms counted per node in first-seen order (``Counter(text.split())``),
        # term ids given on first sight after the name and path fields' ones; natively, as the strings hold ~23 M
        # characters on the stdlib (a Python loop took ~1.2 s there, the kernel ~0.4 s)
        tok_t, tok_c, tok_n, new_terms = count_terms(node_terms, kind == DIR, list(vocab))
        vocab.update(zip(new_terms, itertools.count(len(vocab))))
        del new_terms
        terms = sorted(vocab)
        remap = np.empty(len(vocab), np.int32)
        for new, w in enumerate(terms):
            remap[vocab[w]] = new

        def ids(a: array) -> np.ndarray:
            return remap[np.frombuffer(a, np.int32)] if len(a) else np.zeros(0, np.int32)

        def ints(a: array) -> np.ndarray:
            return np.frombuffer(a, np.int32).copy() if len(a) else np.zeros(0, np.int32)

        name_t = remap[name_terms] if len(name_terms) else np.zeros(0, np.int32)
        p_t, b_t = ids(path_t), remap[tok_t]
        refs = np.bincount(np.concatenate([remap[label_refs] if len(label_refs) else np.zeros(0, np.int32),
                                           p_t, b_t]), minlength=len(terms)).astype(np.int64)
        return cls(terms, refs, name_t.astype(np.int32), name_nodes, p_t, ints(path_n), b_t, tok_n, tok_c)

    def patched(self, old: NodeTable, t: NodeTable, old_to_new: np.ndarray, redo: np.ndarray,
                node_terms: dict[int, str]) -> TermParts:
        """The parts of ``t`` from these parts of ``old``: nodes kept (``old_to_new[i]`` ≥ 0) and not in ``redo``
        (sorted new positions whose label, path or body changed, or that are new) keep their triples, moved to
        their new positions; ``redo`` nodes are made again from ``t`` and ``node_terms`` (new position -> body
        terms). Equal to :meth:`build` of ``t`` by construction: the same triples in the same order per field."""
        redo = np.asarray(redo, np.int64)
        gone = old_to_new < 0
        gone[np.flatnonzero(np.isin(old_to_new, redo))] = True
        refs = self.refs.copy()
        old_terms = self.terms

        def old_id(w: str) -> int:  # -1 when not in the old vocabulary (sorted: a bisection)
            k = bisect_left(old_terms, w)
            return k if k < len(old_terms) and old_terms[k] == w else -1

        # what the dropped nodes brought into the vocabulary
        dropped = np.flatnonzero(gone).tolist()
        label_forms = forms_many(dict.fromkeys([old.label[i] for i in dropped]))
        for i in dropped:
            for f in label_forms[old.label[i]]:
                refs[old_id(f)] -= 1
        for seg_t, seg_n in ((self.path_t, self.path_n), (self.body_t, self.body_n)):
            hit = gone[seg_n]
            if hit.any():
                np.subtract.at(refs, seg_t[hit], 1)
        # the redo nodes' triples, as term strings
        new_labels = forms_many(dict.fromkeys([t.label[j] for j in redo.tolist()]))
        add_name: list[tuple[int, str]] = []
        add_path: list[tuple[int, str]] = []
        add_body: list[tuple[int, str, float]] = []
        add_refs: list[str] = []
        for j in redo.tolist():
            fs = new_labels[t.label[j]]
            add_refs.extend(fs)
            if t.kind[j] != DIR:
                add_name.extend((j, f) for f in fs)
            if t.kind[j] == FILE:
                for f in _path_forms(t.source_path[j]):
                    add_path.append((j, f))
            text = node_terms.get(j, "")
            if text and t.kind[j] != DIR:
                for w, c in Counter(text.split()).items():
                    add_body.append((j, w, float(c)))
        # the new vocabulary: terms still brought by a node, and the redo nodes' new terms (sorted, like a build's)
        fresh: dict[str, int] = {}
        for w in itertools.chain(add_refs, (f for _, f in add_path), (w for _, w, _ in add_body)):
            k = old_id(w)
            if k >= 0:
                refs[k] += 1
            else:
                fresh[w] = fresh.get(w, 0) + 1
        live = refs > 0
        removed_before = np.concatenate([[0], np.cumsum(~live)])  # removed old ids below each old id
        slots = np.bincount([bisect_left(old_terms, w) for w in fresh], minlength=len(old_terms) + 1)
        added_before = np.cumsum(slots)  # new terms sorting before each old id (w < old[k] when bisect gives ≤ k)
        remap = np.where(live, np.arange(len(old_terms)) - removed_before[:-1] + added_before[:-1], -1).astype(np.int32)
        if fresh or not live.all():
            kept = [w for w, ok in zip(old_terms, live.tolist()) if ok]
            terms = sorted(itertools.chain(kept, fresh)) if fresh else kept
        else:
            terms = old_terms
        new_id = {w: bisect_left(terms, w) for w in fresh}
        new_refs = np.zeros(len(terms), np.int64)
        new_refs[remap[live]] = refs[live]
        for w, c in fresh.items():
            new_refs[new_id[w]] = c

        def tid(w: str) -> int:
            got = new_id.get(w)
            return got if got is not None else int(remap[old_id(w)])

        def merge(seg_t: np.ndarray, seg_n: np.ndarray, extra: list[Any], values: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
            keep = ~gone[seg_n]
            kt = remap[seg_t[keep]]
            kn = old_to_new[seg_n[keep]].astype(np.int32)
            at = np.asarray([tid(x[1]) for x in extra], np.int32)
            an = np.asarray([x[0] for x in extra], np.int32)
            all_t = np.concatenate([kt, at])
            all_n = np.concatenate([kn, an])
            # node order, and each node's own order kept (kept nodes' triples come before nothing of theirs)
            order = np.argsort(all_n, kind="stable")
            vals = None
            if values is not None:
                av = np.asarray([x[2] for x in extra], np.float32)
                vals = np.concatenate([values[keep], av])[order]
            return all_t[order], all_n[order], vals

        name_t, name_n, _ = merge(self.name_t, self.name_n, add_name)
        path_t, path_n, _ = merge(self.path_t, self.path_n, add_path)
        body_t, body_n, body_c = merge(self.body_t, self.body_n, add_body, self.body_c)
        assert body_c is not None
        return TermParts(terms, new_refs, name_t, name_n, path_t, path_n, body_t, body_n, body_c)

@functools.lru_cache(maxsize=1 << 16)
def _path_forms(path: str) -> tuple[str, ...]:
    """A file path's path-field terms: each directory's and the stem's :func:`forms`, in order (repeats kept)."""
    segs = path.split("/")
    return tuple(f for s in (*segs[:-1], segs[-1].rsplit(".", 1)[0]) for f in forms(s))


@dataclass
class TermIndex:
    """Posting lists term → (node, weight) at the node grain and term → (file node, weight) at the file grain."""

    n: int
    terms: list[str]  # vocabulary, sorted
    node_flat: np.ndarray  # int32 nodes, grouped by term
    node_off: np.ndarray  # int64[V+1]
    node_w: np.ndarray  # float32 saturated tf per posting
    node_idf: np.ndarray  # float32[V]
    file_flat: np.ndarray
    file_off: np.ndarray
    file_w: np.ndarray
    file_idf: np.ndarray
    bodies: int = 0  # nodes with body terms (0: the graph was ingested before bodies were indexed)
    term_id: dict[str, int] = field(default_factory=dict)
    _node_postings: PostingLists | None = field(default=None, repr=False, compare=False)
    _file_postings: PostingLists | None = field(default=None, repr=False, compare=False)
    # the per-node triples it was built from (absent when loaded from the cache): what a patched build starts from
    parts: TermParts | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.term_id:
            self.term_id = {w: k for k, w in enumerate(self.terms)}

    # -- building -----------------------------------------------------------------------------------------------
    @classmethod
    def build(cls, t: NodeTable, node_terms: Sequence[str]) -> TermIndex:
        return cls.from_parts(t, TermParts.build(t, node_terms))

    @classmethod
    def from_parts(cls, t: NodeTable, parts: TermParts) -> TermIndex:
        """The index from its per-node triples (the vectorised half of a build; the parts are kept on the index, so
        a generation that changes a few nodes is built by :meth:`TermParts.patched` and this)."""
        n = t.n
        kind = t.kind
        terms = parts.terms
        v_count = len(terms)
        nt = np.concatenate([parts.name_t, parts.path_t])
        nn = np.concatenate([parts.name_n, parts.path_n])
        nv = np.concatenate([np.full(len(parts.name_t), W_NAME, np.float32),
                             np.full(len(parts.path_t), W_PATH, np.float32)])
        bt, bn, bv = parts.body_t, parts.body_n, parts.body_c
        body_len = (np.bincount(bn, weights=bv, minlength=n).astype(np.float64) if len(bn)
                    else np.zeros(n, np.float64))

        # node grain: name + length-normalised body, summed per (term, node)
        has_body = body_len > 0
        avg = float(body_len[has_body].mean()) if has_body.any() else 1.0
        norm = (1.0 - B + B * body_len / avg).astype(np.float32)
        node_flat, node_off, node_w, node_df = _postings(
            np.concatenate([nt, bt]), np.concatenate([nn, bn]), np.concatenate([nv, bv / norm[bn]]), v_count, n)
        del norm
        n_docs = int(np.count_nonzero(kind != DIR))

        # file grain: every node's body and name counted in its file; the file's own path as its name field
        file_of = np.where(t.file_of >= 0, t.file_of, np.arange(n, dtype=np.int32)).astype(np.int32)
        is_file = kind == FILE
        fname = is_file[nn]
        ft = np.concatenate([nt[fname], nt[~fname], bt])
        fn = np.concatenate([nn[fname], file_of[nn[~fname]], file_of[bn]])
        fv = np.concatenate([nv[fname] * (W_FILE_PATH / W_NAME), nv[~fname] * (W_FILE_NAMES / W_NAME), bv])
        keep = is_file[fn]
        ft, fn, fv = ft[keep], fn[keep], fv[keep]
        file_len = np.bincount(file_of[bn], weights=bv, minlength=n) if len(bn) else np.zeros(n)
        f_has = is_file & (file_len > 0)
        f_avg = float(file_len[f_has].mean()) if f_has.any() else 1.0
        f_norm = (1.0 - B_FILE + B_FILE * file_len / f_avg).astype(np.float32)
        # the path field is not length-normalised: undo the division for those postings
        path_part = np.zeros(len(fv), bool)
        path_part[: int(np.count_nonzero(fname))] = True
        fv = np.where(path_part, fv, fv / f_norm[fn]).astype(np.float32)
        file_flat, file_off, file_w, file_df = _postings(ft, fn, fv, v_count, n)
        n_files = max(int(np.count_nonzero(is_file)), 1)
        out = cls(n=n, terms=terms, node_flat=node_flat, node_off=node_off, node_w=node_w,
                  node_idf=_idf(node_df, max(n_docs, 1)), file_flat=file_flat, file_off=file_off, file_w=file_w,
                  file_idf=_idf(file_df, n_files), bodies=int(np.count_nonzero(body_len)))
        out.parts = parts
        return out

    # -- cache -----------------------------------------------------------------------------------------------------
    _ARRAYS = ("node_flat", "node_off", "node_w", "node_idf", "file_flat", "file_off", "file_w", "file_idf")

    #: bump whenever terms, weights or folding change: an older cache is then rebuilt from graph.db
    VERSION = 8

    def arrays(self) -> dict[str, np.ndarray]:
        out = {k: getattr(self, k) for k in self._ARRAYS}
        out["terms"] = pack_strings(self.terms)
        out["meta"] = np.asarray([self.n, len(self.terms), self.VERSION, self.bodies], np.int64)
        return out

    @classmethod
    def compatible(cls, a: dict[str, np.ndarray] | None) -> bool:
        """Was this cached index built by this version of the code?"""
        return a is not None and "meta" in a and len(a["meta"]) == 4 and int(a["meta"][2]) == cls.VERSION

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray]) -> TermIndex:
        n, v, _, bodies = (int(x) for x in a["meta"])
        return cls(n=n, terms=unpack_strings(a["terms"], v), bodies=bodies, **{k: a[k] for k in cls._ARRAYS})

    # -- queries ---------------------------------------------------------------------------------------------------
    def keys(self, terms: Sequence[str]) -> np.ndarray:
        ids = [self.term_id.get(w) for w in terms]
        return np.asarray([k for k in ids if k is not None], np.int64)

    def keys_weighted(self, weighted: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, query weights) of the terms the index holds."""
        pairs = [(self.term_id[w], q) for w, q in weighted.items() if w in self.term_id]
        return np.asarray([k for k, _ in pairs], np.int64), np.asarray([q for _, q in pairs], np.float32)

    def score_nodes(self, keys: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """BM25F of every node that holds a query term: (ascending int32 nodes, float32 scores). ``keys`` are term
        ids, ``weights`` optional query weights per term."""
        if self._node_postings is None:
            self._node_postings = PostingLists(self.node_flat, self.node_off, self.n, self.node_w)
        return self._score(self._node_postings, self.node_idf, keys, weights)

    def score_files(self, keys: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """BM25F of every file that holds a query term: (ascending int32 file nodes, float32 scores)."""
        if self._file_postings is None:
            self._file_postings = PostingLists(self.file_flat, self.file_off, self.n, self.file_w)
        return self._score(self._file_postings, self.file_idf, keys, weights)

    @staticmethod
    def _score(post: PostingLists, idf: np.ndarray, keys: np.ndarray, weights: np.ndarray | None
               ) -> tuple[np.ndarray, np.ndarray]:
        keys = np.asarray(keys, np.int64)
        if not len(keys):
            return np.zeros(0, np.int32), np.zeros(0, np.float32)
        kw = idf[keys] if weights is None else idf[keys] * np.asarray(weights, np.float32)
        ids, sums, _ = post.accumulate(keys, kw)
        return ids, sums.astype(np.float32)


def _idf(df: np.ndarray, n_docs: int) -> np.ndarray:
    """BM25 idf, always positive: ln(1 + (N − df + 0.5) / (df + 0.5))."""
    return np.log1p((n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)


def _postings(term: np.ndarray, doc: np.ndarray, tf: np.ndarray, v_count: int, n: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sum tf per (term, doc), saturate, group by term: (flat docs, offsets, weights, df per term)."""
    if not len(term):
        return (np.zeros(0, np.int32), np.zeros(v_count + 1, np.int64), np.zeros(0, np.float32),
                np.zeros(v_count, np.float64))
    # temporaries are dropped as soon as they are used: this runs over every posting of the repository
    key = term.astype(np.int64)
    key *= max(n, 1)
    key += doc
    order = np.argsort(key, kind="stable")
    key = key[order]
    tf = tf[order]
    del order
    first = np.empty(len(key), bool)
    first[0] = True
    np.not_equal(key[1:], key[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    del first
    tf_sum = np.add.reduceat(tf, starts, dtype=np.float64)
    del tf
    ukey = key[starts]
    del key, starts
    t_of = ukey // max(n, 1)
    d_of = (ukey % max(n, 1)).astype(np.int32)
    del ukey
    w = (tf_sum / (K1 + tf_sum)).astype(np.float32)
    df = np.bincount(t_of, minlength=v_count).astype(np.float64)
    off = np.zeros(v_count + 1, np.int64)
    np.cumsum(df, out=off[1:])
    return d_of, off, w, df


# word_folds: the extraction's table of folded words (m1nd.ingest.terms reaches the kernels through here)
__all__ = ["QUERY_STOPWORDS", "TermIndex", "TermParts", "fold", "folded_texts", "forms", "node_terms_from_blobs",
           "query_terms", "word_folds"]
