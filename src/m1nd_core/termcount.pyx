"""Term counting per document: the body field of the lexical index (``m1nd.graph.lexicon.TermParts.build``).

``count_terms(texts, skip, vocab)`` is, exactly, this Python loop (over ~23 M characters on the stdlib, where the
``Counter`` and the id look-ups cost seconds)::

    term_id = {w: k for k, w in enumerate(vocab)}
    for i, text in enumerate(texts):
        if not text or skip[i]:
            continue
        c = Counter(text.split())  # distinct tokens in first-seen order, with their counts
        for w, n in c.items():
            term_id.setdefault(w, len(term_id))  # a new term takes the next id on first sight
            emit(term_id[w], n, i)

Tokens are compared as UTF-8 bytes (``surrogatepass``: one byte string per str, so equal bytes are equal strs).
An ASCII text is tokenised in place, without one Python object per token; another text goes through
``str.split`` (its whitespace is Unicode's), so the tokens are always those of ``text.split()``.
"""

import numpy as np

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcmp, memcpy
from libc.stdint cimport int32_t, int64_t, uint64_t, uint8_t

from .bytescan cimport fnv1a, is_space


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL
    object PyUnicode_DecodeASCII(const char*, Py_ssize_t, const char*)


cdef struct Entry:
    const char* ptr  # NULL: an empty slot
    Py_ssize_t size
    uint64_t hash
    int32_t id


cdef class _Table:
    """Open addressing (linear probing) from byte strings to term ids; the bytes are borrowed, never copied."""

    cdef Entry* slots
    cdef Py_ssize_t cap  # a power of two
    cdef Py_ssize_t used

    def __cinit__(self, Py_ssize_t expected):
        self.cap = 1024
        while self.cap < 2 * expected:
            self.cap *= 2
        self.used = 0
        self.slots = self._alloc(self.cap)

    def __dealloc__(self):
        free(self.slots)

    cdef Entry* _alloc(self, Py_ssize_t cap) except NULL:
        cdef Entry* s = <Entry*>malloc(<size_t>cap * sizeof(Entry))
        cdef Py_ssize_t k
        if s == NULL:
            raise MemoryError("count_terms: out of memory")
        for k in range(cap):
            s[k].ptr = NULL
        return s

    cdef int _grow(self) except -1:
        cdef Py_ssize_t cap = self.cap * 2, k, j
        cdef Entry* s = self._alloc(cap)
        for k in range(self.cap):
            if self.slots[k].ptr != NULL:
                j = <Py_ssize_t>(self.slots[k].hash & <uint64_t>(cap - 1))
                while s[j].ptr != NULL:
                    j = (j + 1) & (cap - 1)
                s[j] = self.slots[k]
        free(self.slots)
        self.slots = s
        self.cap = cap
        return 0

    cdef int32_t find_or_add(self, const char* p, Py_ssize_t n, int32_t new_id) except -2:
        """The id of ``p[:n]``; when absent it is added with ``new_id`` (returned as -1, so the caller knows)."""
        cdef uint64_t h = fnv1a(p, n)
        cdef Py_ssize_t j = <Py_ssize_t>(h & <uint64_t>(self.cap - 1))
        cdef Entry* e
        while True:
            e = &self.slots[j]
            if e.ptr == NULL:
                break
            if e.hash == h and e.size == n and memcmp(e.ptr, p, <size_t>n) == 0:
                return e.id
            j = (j + 1) & (self.cap - 1)
        e.ptr = p
        e.size = n
        e.hash = h
        e.id = new_id
        self.used += 1
        if 2 * self.used > self.cap:
            self._grow()
        return -1


cdef class _Out:
    """Growable (term id, count, document) triples and the per-term state of the document being counted."""

    cdef int32_t* t
    cdef int32_t* c
    cdef int32_t* d
    cdef Py_ssize_t n, cap
    cdef int32_t* last_doc  # per term id: the last document it was seen in (-1: none)
    cdef int64_t* slot  # per term id: its triple's position in that document
    cdef Py_ssize_t n_ids, ids_cap

    def __cinit__(self, Py_ssize_t n_ids):
        self.cap = 1024
        self.n = 0
        self.t = <int32_t*>malloc(self.cap * sizeof(int32_t))
        self.c = <int32_t*>malloc(self.cap * sizeof(int32_t))
        self.d = <int32_t*>malloc(self.cap * sizeof(int32_t))
        self.ids_cap = max(n_ids, 1024)
        self.n_ids = 0
        self.last_doc = <int32_t*>malloc(self.ids_cap * sizeof(int32_t))
        self.slot = <int64_t*>malloc(self.ids_cap * sizeof(int64_t))
        if not (self.t and self.c and self.d and self.last_doc and self.slot):
            raise MemoryError("count_terms: out of memory")
        self.ensure_ids(n_ids)

    def __dealloc__(self):
        free(self.t)
        free(self.c)
        free(self.d)
        free(self.last_doc)
        free(self.slot)

    cdef int ensure_ids(self, Py_ssize_t n_ids) except -1:
        cdef Py_ssize_t k, cap = self.ids_cap
        cdef int32_t* a
        cdef int64_t* b
        if n_ids > cap:
            while cap < n_ids:
                cap *= 2
            a = <int32_t*>realloc(self.last_doc, cap * sizeof(int32_t))
            if a == NULL:
                raise MemoryError("count_terms: out of memory")
            self.last_doc = a
            b = <int64_t*>realloc(self.slot, cap * sizeof(int64_t))
            if b == NULL:
                raise MemoryError("count_terms: out of memory")
            self.slot = b
            self.ids_cap = cap
        for k in range(self.n_ids, n_ids):
            self.last_doc[k] = -1
        if n_ids > self.n_ids:
            self.n_ids = n_ids
        return 0

    cdef int add(self, int32_t term, int32_t doc) except -1:
        cdef Py_ssize_t cap
        cdef int32_t* a
        if self.last_doc[term] == doc:
            self.c[self.slot[term]] += 1
            return 0
        if self.n == self.cap:
            cap = self.cap * 2
            a = <int32_t*>realloc(self.t, cap * sizeof(int32_t))
            if a == NULL:
                raise MemoryError("count_terms: out of memory")
            self.t = a
            a = <int32_t*>realloc(self.c, cap * sizeof(int32_t))
            if a == NULL:
                raise MemoryError("count_terms: out of memory")
            self.c = a
            a = <int32_t*>realloc(self.d, cap * sizeof(int32_t))
            if a == NULL:
                raise MemoryError("count_terms: out of memory")
            self.d = a
            self.cap = cap
        self.last_doc[term] = doc
        self.slot[term] = self.n
        self.t[self.n] = term
        self.c[self.n] = 1
        self.d[self.n] = doc
        self.n += 1
        return 0


def count_terms(texts, const uint8_t[::1] skip, vocab):
    """(term ids int32, counts float32, documents int32, new terms) of ``texts`` (see the module docstring).

    ``texts``: a sequence of str (one per document); ``skip``: uint8 per document, non-zero to leave it out;
    ``vocab``: the distinct terms that already have ids ``0 .. len(vocab) - 1``. ``new terms`` lists the terms
    first seen here, in id order from ``len(vocab)``."""
    cdef Py_ssize_t n_docs = len(texts), n_vocab = len(vocab), i, k, a, size
    cdef const char* p
    cdef const char* tok
    cdef int32_t got, next_id
    cdef bint kept
    cdef _Table table
    cdef _Out out
    cdef list keep = []  # the byte strings the table borrows from (vocabulary, non-ASCII tokens)
    cdef list new_terms = []
    if skip.shape[0] != n_docs:
        raise ValueError(f"skip has {skip.shape[0]} entries for {n_docs} texts")
    if n_vocab >= 2**31 - 1:
        raise ValueError("count_terms: more than 2**31 - 2 terms")
    table = _Table(n_vocab + 4096)
    out = _Out(n_vocab + 4096)
    for k in range(n_vocab):
        b = (<str?>vocab[k]).encode("utf-8", "surrogatepass")
        keep.append(b)
        if table.find_or_add(b, len(b), <int32_t>k) != -1:
            raise ValueError(f"vocab holds {vocab[k]!r} twice")
    next_id = <int32_t>n_vocab
    for i in range(n_docs):
        text = texts[i]
        if skip[i] or not text:
            continue
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, not str")
        if i >= 2**31 - 1:
            raise ValueError("count_terms: more than 2**31 - 1 documents")
        if (<str>text).isascii():
            p = PyUnicode_AsUTF8AndSize(text, &size)  # an ASCII str's own buffer: no copy
            kept = False
            k = 0
            while True:
                while k < size and is_space(<uint8_t>p[k]):
                    k += 1
                if k >= size:
                    break
                a = k
                while k < size and not is_space(<uint8_t>p[k]):
                    k += 1
                tok = p + a
                got = table.find_or_add(tok, k - a, next_id)
                if got == -1:
                    if not kept:  # the table borrows this text's buffer: it must outlive the call's end
                        keep.append(text)
                        kept = True
                    got = _new_id(&next_id)
                    new_terms.append(PyUnicode_DecodeASCII(tok, k - a, NULL))
                    out.ensure_ids(next_id)
                out.add(got, <int32_t>i)
        else:
            for w in (<str>text).split():
                b = (<str>w).encode("utf-8", "surrogatepass")
                got = table.find_or_add(b, len(b), next_id)
                if got == -1:
                    keep.append(b)
                    got = _new_id(&next_id)
                    new_terms.append(w)
                    out.ensure_ids(next_id)
                out.add(got, <int32_t>i)
    t = np.empty(out.n, np.int32)
    c = np.empty(out.n, np.int32)
    d = np.empty(out.n, np.int32)
    _copy(t, out.t, out.n)
    _copy(c, out.c, out.n)
    _copy(d, out.d, out.n)
    return t, c.astype(np.float32), d, new_terms


cdef inline int32_t _new_id(int32_t* next_id) except -2:
    cdef int32_t got = next_id[0]
    if got == 2**31 - 2:
        raise ValueError("count_terms: more than 2**31 - 2 terms")
    next_id[0] = got + 1
    return got


cdef void _copy(int32_t[::1] dst, const int32_t* src, Py_ssize_t n) noexcept:
    if n:
        memcpy(&dst[0], src, <size_t>n * sizeof(int32_t))
