"""The written words of each definition's own lines, folded: the body terms of extraction (``m1nd.ingest.terms``).

A :class:`WordFolds` is one extraction process's table of written words (byte strings matching
``[A-Za-z_][A-Za-z0-9_]{1,79}``, found as ``re.findall`` finds them) to ids, and of each id's folded text (its
index terms joined by spaces, ``""`` for a stopword; the caller folds, this module never stems). Per file:

1. ``scan(data, starts, ends, owners, n_owners, max_words)``: the words of each line run ``data[starts[k]:ends[k]]``
   go to ``owners[k]``, at most ``max_words`` per owner (the first ones, in run order). Returns the owners' word
   ids (grouped by owner) with offsets, and the words seen for the first time (as bytes, in id order).
2. ``set_folds(first_id, folds)``: the caller's folded text of those new words.
3. ``join(ids, offsets)``: per owner, ``" ".join(fold(w) for w in its words).strip()``.

Exactly what the Python version computed with ``re.findall``, a dict and ``str.join``, without one bytes object
per word occurrence.
"""

import numpy as np

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcmp, memcpy
from libc.stdint cimport int32_t, int64_t, uint64_t, uint8_t

from .bytescan cimport fnv1a, is_space


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL
    object PyUnicode_DecodeUTF8(const char*, Py_ssize_t, const char*)
    object PyBytes_FromStringAndSize(const char*, Py_ssize_t)


cdef enum:
    MAX_WORD = 80  # the longest word: 1 + 79 characters

# 1: may start a word ([A-Za-z_]); 2: may continue one ([A-Za-z0-9_])
cdef uint8_t _CLASS[256]
for _c in range(256):
    _CLASS[_c] = 0
for _c in range(ord("a"), ord("z") + 1):
    _CLASS[_c] = 3
for _c in range(ord("A"), ord("Z") + 1):
    _CLASS[_c] = 3
_CLASS[ord("_")] = 3
for _c in range(ord("0"), ord("9") + 1):
    _CLASS[_c] = 2


cdef struct Slot:
    uint64_t hash
    int32_t id  # -1: empty


cdef class WordFolds:
    """Written word -> id -> folded text, for one process (see the module docstring)."""

    cdef Slot* slots
    cdef Py_ssize_t cap  # a power of two
    cdef char* words  # every word's bytes, back to back
    cdef Py_ssize_t words_len, words_cap
    cdef int64_t* word_at  # per id: offset in ``words`` (and one past the last id)
    cdef char* folds  # every id's folded text, back to back (set_folds)
    cdef Py_ssize_t folds_len, folds_cap
    cdef int64_t* fold_at  # per id: offset in ``folds``; fold_at[id + 1] - fold_at[id] its length
    cdef Py_ssize_t n_ids, ids_cap
    cdef Py_ssize_t n_folded  # ids below this have their fold set
    cdef readonly Py_ssize_t max_words

    def __cinit__(self, Py_ssize_t max_words=500_000):
        self.max_words = max_words
        self.slots = NULL
        self.words = NULL
        self.word_at = NULL
        self.folds = NULL
        self.fold_at = NULL
        self._reset()

    def __dealloc__(self):
        self._free()

    cdef void _free(self) noexcept:
        free(self.slots)
        free(self.words)
        free(self.word_at)
        free(self.folds)
        free(self.fold_at)
        self.slots = NULL
        self.words = NULL
        self.word_at = NULL
        self.folds = NULL
        self.fold_at = NULL

    cdef int _reset(self) except -1:
        cdef Py_ssize_t k
        self._free()
        self.cap = 1 << 14
        self.slots = <Slot*>malloc(self.cap * sizeof(Slot))
        self.words_cap = 1 << 16
        self.words = <char*>malloc(self.words_cap)
        self.folds_cap = 1 << 16
        self.folds = <char*>malloc(self.folds_cap)
        self.ids_cap = 1 << 12
        self.word_at = <int64_t*>malloc((self.ids_cap + 1) * sizeof(int64_t))
        self.fold_at = <int64_t*>malloc((self.ids_cap + 1) * sizeof(int64_t))
        if not (self.slots and self.words and self.folds and self.word_at and self.fold_at):
            raise MemoryError("WordFolds: out of memory")
        for k in range(self.cap):
            self.slots[k].id = -1
        self.words_len = self.folds_len = 0
        self.n_ids = self.n_folded = 0
        self.word_at[0] = 0
        self.fold_at[0] = 0
        return 0

    def __len__(self):
        return self.n_ids

    cdef int _grow_slots(self) except -1:
        cdef Py_ssize_t cap = self.cap * 2, k, j
        cdef Slot* s = <Slot*>malloc(cap * sizeof(Slot))
        if s == NULL:
            raise MemoryError("WordFolds: out of memory")
        for k in range(cap):
            s[k].id = -1
        for k in range(self.cap):
            if self.slots[k].id >= 0:
                j = <Py_ssize_t>(self.slots[k].hash & <uint64_t>(cap - 1))
                while s[j].id >= 0:
                    j = (j + 1) & (cap - 1)
                s[j] = self.slots[k]
        free(self.slots)
        self.slots = s
        self.cap = cap
        return 0

    cdef int32_t _id(self, const uint8_t* p, Py_ssize_t n) except -2:
        """The id of the word ``p[:n]``, added when new (its id is then ``n_ids - 1``)."""
        cdef uint64_t h = fnv1a(<const char*>p, n)
        cdef Py_ssize_t j = <Py_ssize_t>(h & <uint64_t>(self.cap - 1))
        cdef int32_t got
        cdef int64_t a
        cdef int64_t* at
        cdef char* w
        while True:
            got = self.slots[j].id
            if got < 0:
                break
            if self.slots[j].hash == h:
                a = self.word_at[got]
                if self.word_at[got + 1] - a == n and memcmp(self.words + a, p, <size_t>n) == 0:
                    return got
            j = (j + 1) & (self.cap - 1)
        if self.n_ids == self.ids_cap:
            self.ids_cap *= 2
            at = <int64_t*>realloc(self.word_at, (self.ids_cap + 1) * sizeof(int64_t))
            if at == NULL:
                raise MemoryError("WordFolds: out of memory")
            self.word_at = at
            at = <int64_t*>realloc(self.fold_at, (self.ids_cap + 1) * sizeof(int64_t))
            if at == NULL:
                raise MemoryError("WordFolds: out of memory")
            self.fold_at = at
        if self.words_len + n > self.words_cap:
            while self.words_len + n > self.words_cap:
                self.words_cap *= 2
            w = <char*>realloc(self.words, self.words_cap)
            if w == NULL:
                raise MemoryError("WordFolds: out of memory")
            self.words = w
        memcpy(self.words + self.words_len, p, <size_t>n)
        self.words_len += n
        got = <int32_t>self.n_ids
        self.n_ids += 1
        self.word_at[self.n_ids] = self.words_len
        self.slots[j].hash = h
        self.slots[j].id = got
        if 2 * self.n_ids > self.cap:
            self._grow_slots()
        return got

    def scan(self, const uint8_t[::1] data, const int64_t[::1] starts, const int64_t[::1] ends,
             const int32_t[::1] owners, Py_ssize_t n_owners, Py_ssize_t max_words):
        """(int32 word ids grouped by owner, int64 offsets per owner [n_owners + 1], first id of the new words,
        the new words as bytes): the words of each run ``data[starts[k]:ends[k]]`` for ``owners[k]``, the first
        ``max_words`` per owner in run order. A table past its size bound is emptied first (ids start over)."""
        cdef Py_ssize_t n_runs = starts.shape[0], size = data.shape[0], k, i, j, e, o, total
        cdef int64_t* counts
        cdef int32_t* occ_id
        cdef int32_t* occ_owner
        cdef Py_ssize_t n_occ = 0, occ_cap
        cdef int32_t got
        cdef int64_t[::1] off
        cdef int32_t[::1] out
        cdef int64_t* fill
        if ends.shape[0] != n_runs or owners.shape[0] != n_runs:
            raise ValueError("starts, ends and owners must have the same length")
        if n_owners < 0 or max_words < 0:
            raise ValueError("n_owners and max_words must be >= 0")
        for k in range(n_runs):
            if not (0 <= starts[k] <= ends[k] <= size) or not (0 <= owners[k] < n_owners):
                raise ValueError(f"run {k} is out of range")
        if self.n_ids > self.max_words:
            self._reset()
        first_new = self.n_ids
        counts = <int64_t*>malloc((n_owners + 1) * sizeof(int64_t))
        occ_cap = 1024
        occ_id = <int32_t*>malloc(occ_cap * sizeof(int32_t))
        occ_owner = <int32_t*>malloc(occ_cap * sizeof(int32_t))
        try:
            if counts == NULL or occ_id == NULL or occ_owner == NULL:
                raise MemoryError("WordFolds: out of memory")
            for k in range(n_owners + 1):
                counts[k] = 0
            for k in range(n_runs):
                o = owners[k]
                i = starts[k]
                e = ends[k]
                while i < e and counts[o] < max_words:
                    if not (_CLASS[data[i]] & 1):
                        i += 1
                        continue
                    j = i + 1
                    while j < e and j - i < MAX_WORD and (_CLASS[data[j]] & 2):
                        j += 1
                    if j - i < 2:  # one letter: no match here, the regex tries from the next byte
                        i += 1
                        continue
                    got = self._id(&data[i], j - i)
                    if n_occ == occ_cap:
                        occ_cap *= 2
                        occ_id = <int32_t*>_realloc(occ_id, occ_cap * sizeof(int32_t))
                        occ_owner = <int32_t*>_realloc(occ_owner, occ_cap * sizeof(int32_t))
                    occ_id[n_occ] = got
                    occ_owner[n_occ] = <int32_t>o
                    n_occ += 1
                    counts[o] += 1
                    i = j
            # group by owner, run order kept (a counting sort)
            off = np.empty(n_owners + 1, np.int64)
            total = 0
            for k in range(n_owners):
                off[k] = total
                total += counts[k]
            off[n_owners] = total
            out = np.empty(total, np.int32)
            fill = counts  # reused: next free position per owner
            for k in range(n_owners):
                fill[k] = off[k]
            for k in range(n_occ):
                out[fill[occ_owner[k]]] = occ_id[k]
                fill[occ_owner[k]] += 1
        finally:
            free(counts)
            free(occ_id)
            free(occ_owner)
        new = [PyBytes_FromStringAndSize(self.words + self.word_at[k], self.word_at[k + 1] - self.word_at[k])
               for k in range(first_new, self.n_ids)]
        return np.asarray(out), np.asarray(off), first_new, new

    def set_folds(self, Py_ssize_t first_id, folds):
        """The folded text (str) of ids ``first_id``, ``first_id + 1``, …: the new words of the last scan."""
        cdef Py_ssize_t k, n
        cdef const char* p
        cdef char* f
        if first_id != self.n_folded or first_id + len(folds) != self.n_ids:
            raise ValueError(f"folds for ids {first_id}..{first_id + len(folds)} do not follow the scan "
                             f"({self.n_folded} folded of {self.n_ids})")
        for text in folds:
            p = PyUnicode_AsUTF8AndSize(text, &n)
            if self.folds_len + n > self.folds_cap:
                while self.folds_len + n > self.folds_cap:
                    self.folds_cap *= 2
                f = <char*>realloc(self.folds, self.folds_cap)
                if f == NULL:
                    raise MemoryError("WordFolds: out of memory")
                self.folds = f
            memcpy(self.folds + self.folds_len, p, <size_t>n)
            self.folds_len += n
            self.n_folded += 1
            self.fold_at[self.n_folded] = self.folds_len

    def join(self, const int32_t[::1] ids, const int64_t[::1] offsets):
        """Per owner: its words' folded texts joined by single spaces, leading and trailing spaces stripped."""
        cdef Py_ssize_t n_owners = offsets.shape[0] - 1, k, p, a, b, n, length, cap = 1 << 12
        cdef int32_t w
        cdef char* buf = <char*>malloc(cap)
        cdef list out = []
        if buf == NULL:
            raise MemoryError("WordFolds: out of memory")
        try:
            for k in range(n_owners):
                length = 0
                for p in range(offsets[k], offsets[k + 1]):
                    w = ids[p]
                    if not (0 <= w < self.n_folded):
                        raise ValueError(f"word id {w} has no fold")
                    a = self.fold_at[w]
                    n = self.fold_at[w + 1] - a
                    if length + n + 1 > cap:
                        while length + n + 1 > cap:
                            cap *= 2
                        buf = <char*>_realloc(buf, cap)
                    if p > offsets[k]:
                        buf[length] = 32
                        length += 1
                    memcpy(buf + length, self.folds + a, <size_t>n)
                    length += n
                a = 0
                b = length
                while a < b and is_space(<uint8_t>buf[a]):
                    a += 1
                while b > a and is_space(<uint8_t>buf[b - 1]):
                    b -= 1
                out.append(PyUnicode_DecodeUTF8(buf + a, b - a, NULL))
        finally:
            free(buf)
        return out


cdef void* _realloc(void* p, size_t size) except NULL:
    # on failure ``p`` stays valid (and owned by the caller, who frees it)
    cdef void* q = realloc(p, size)
    if q == NULL:
        raise MemoryError("WordFolds: out of memory")
    return q


# ------------------------------------------------------------------------------------------------ index forms
#
# ``fold_forms`` is :func:`m1nd.graph.lexicon.forms_many` without its per-word Python work (~4 us a word: half a
# second over the stdlib's 110,000 distinct words, in every extraction worker and again for the labels of the
# index build). For every ASCII word it computes, exactly, what this Python computes::
#
#     if w.isalpha() and w.islower():
#         parts = [w] if len(w) >= 2 and w not in stop else []
#     else:
#         whole = w.casefold()
#         parts = [whole] if len(whole) >= 2 and whole not in stop else []
#         parts += [p for p in map(str.lower, HUMPS.findall(w)) if len(p) >= 2 and p not in stop]
#
# with HUMPS = ``[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+`` (m1nd.graph.seeds), scanned by hand: at an upper-case
# run of two or more letters followed by a lower-case letter, the run but its last letter (the last starts the next
# hump); else an optional capital and a lower-case run; else an upper-case run; else a digit run; else one character
# is skipped. A word with a non-ASCII character goes to ``fallback(w)`` (Unicode case rules), which returns its parts.
# Then every distinct part is stemmed once (``stem_words``, a batch) and each word's distinct stems, in first-seen
# order, are returned: joined by spaces (``joined``) or as a tuple.

cdef inline bint _upper(uint8_t c) noexcept:
    return 65 <= c <= 90


cdef inline bint _lower(uint8_t c) noexcept:
    return 97 <= c <= 122


cdef inline bint _digit(uint8_t c) noexcept:
    return 48 <= c <= 57


cdef inline int _add_part(list parts, const uint8_t* s, Py_ssize_t a, Py_ssize_t b, char* buf,
                          frozenset stop) except -1:
    """``s[a:b].lower()`` to ``parts`` when 2+ characters long and not a stopword."""
    cdef Py_ssize_t k
    if b - a < 2:
        return 0
    for k in range(a, b):
        buf[k - a] = <char>(s[k] + 32 if _upper(s[k]) else s[k])
    p = PyUnicode_DecodeUTF8(buf, b - a, NULL)
    if p not in stop:
        parts.append(p)
    return 0


cdef list _ascii_parts(object w, const uint8_t* s, Py_ssize_t n, char* buf, frozenset stop):
    cdef list parts = []
    cdef Py_ssize_t i = 0, j, k
    cdef bint plain = n > 0
    for k in range(n):
        if not _lower(s[k]):
            plain = False
            break
    if plain:  # w.isalpha() and w.islower(): the word itself
        if n >= 2 and w not in stop:
            parts.append(w)
        return parts
    _add_part(parts, s, 0, n, buf, stop)  # the whole word, case-folded
    while i < n:
        if _upper(s[i]):
            j = i
            while j < n and _upper(s[j]):
                j += 1
            if j - i >= 2 and j < n and _lower(s[j]):  # [A-Z]+(?=[A-Z][a-z])
                _add_part(parts, s, i, j - 1, buf, stop)
                i = j - 1
            elif i + 1 < n and _lower(s[i + 1]):  # [A-Z]?[a-z]+ with its capital
                j = i + 1
                while j < n and _lower(s[j]):
                    j += 1
                _add_part(parts, s, i, j, buf, stop)
                i = j
            else:  # [A-Z]+
                _add_part(parts, s, i, j, buf, stop)
                i = j
        elif _lower(s[i]):  # [a-z]+
            j = i
            while j < n and _lower(s[j]):
                j += 1
            _add_part(parts, s, i, j, buf, stop)
            i = j
        elif _digit(s[i]):  # \d+
            j = i
            while j < n and _digit(s[j]):
                j += 1
            _add_part(parts, s, i, j, buf, stop)
            i = j
        else:
            i += 1
    return parts


def fold_forms(list words, frozenset stop, object stem_words, object fallback, bint joined):
    """Each word's index forms (see above): a list, in the order of ``words``, of space-joined strings
    (``joined``) or tuples."""
    cdef list split = []
    cdef list parts, seen, out
    cdef dict distinct = {}
    cdef Py_ssize_t n, k, cap = 256
    cdef const uint8_t* s
    cdef bint ascii
    cdef char* buf = <char*>malloc(cap)
    if buf == NULL:
        raise MemoryError()
    try:
        for w in words:
            s = <const uint8_t*>PyUnicode_AsUTF8AndSize(w, &n)
            ascii = True
            for k in range(n):
                if s[k] >= 128:
                    ascii = False
                    break
            if ascii:
                if n > cap:
                    cap = n
                    free(buf)
                    buf = <char*>malloc(cap)
                    if buf == NULL:
                        raise MemoryError()
                parts = _ascii_parts(w, s, n, buf, stop)
            else:
                parts = list(fallback(w))
            split.append(parts)
            for p in parts:
                distinct[p] = None
    finally:
        free(buf)
    order = list(distinct)
    stems = dict(zip(order, stem_words(order)))
    out = []
    for parts in split:
        seen = []
        for p in parts:
            st = stems[p]
            if st not in seen:
                seen.append(st)
        out.append(" ".join(seen) if joined else tuple(seen))
    return out
