"""wordfold: extraction's body terms from the kernel equal the Python version's (re.findall, dict, str.join)."""

import copy
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from m1nd.graph.engine import word_folds
from m1nd.ingest import terms

from . import reference
from .graphs import SETTINGS

_PIECES = [b"get", b"Set", b"self", b"x", b"_", b"__init__", b"HTTPServer", b"parse_url", b"9lives", b"a1",
           b"the", b"and", b"z" * 85, b"Q" * 80, b"\xc3\xa9t\xc3\xa9", b"\x00", b"\xff", b" ", b"  ", b"\t", b"\n",
           b"\r\n", b".", b"(", b"#", b"0", b"12ab"]


@st.composite
def files(draw):
    data = b"".join(draw(st.lists(st.sampled_from(_PIECES), max_size=80)))
    n_lines = data.count(b"\n") + 1
    defs = []
    for _ in range(draw(st.integers(0, 6))):
        a = draw(st.integers(0, n_lines + 1))
        b = draw(st.one_of(st.none(), st.integers(a - 1, n_lines + 2)))
        defs.append({"line_start": a, "line_end": b})
    defs.sort(key=lambda d: (d["line_start"] or 0, -(d["line_end"] or 0)))
    return data, defs


def _both(data, defs, monkeypatch=None, max_words=terms.MAX_WORDS_PER_NODE):
    got = {"definitions": copy.deepcopy(defs)}
    want = {"definitions": copy.deepcopy(defs)}
    terms.attach_terms(got, data)
    reference.attach_terms(want, data, max_words)
    return got, want


@SETTINGS
@given(files())
def test_matches_the_python_version(case):
    data, defs = case
    got, want = _both(data, defs)
    assert got == want


@SETTINGS
@given(files(), st.integers(0, 4))
def test_words_per_node_are_capped_alike(monkeypatch_files, cap):
    data, defs = monkeypatch_files
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(terms, "MAX_WORDS_PER_NODE", cap)
        got, want = _both(data, defs, max_words=cap)
    assert got == want


def test_words_are_what_the_pattern_finds():
    data = b"a bc d_e 9x Xy1 " + b"w" * 81 + b"7 " + b"k" * 79 + b"\xc3\xa9ab\n_z __ q"
    table = word_folds(100)
    ids, off, first, new = table.scan(np.frombuffer(data, np.uint8), np.asarray([0], np.int64),
                                      np.asarray([len(data)], np.int64), np.asarray([0], np.int32), 1, 1000)
    assert new == re.findall(terms.WORD_PATTERN, data) and first == 0
    table.set_folds(first, [w.decode().upper() for w in new])
    assert table.join(ids, off) == [" ".join(w.decode().upper() for w in new)]


def test_a_full_table_starts_over_with_the_same_output(monkeypatch):
    rng = np.random.default_rng(3)
    blobs = []
    for _ in range(20):
        words = [f"w{k}" for k in rng.integers(0, 400, 300)]
        data = "\n".join(" ".join(words[i:i + 10]) for i in range(0, 300, 10)).encode()
        blobs.append((data, [{"line_start": 3, "line_end": 9}, {"line_start": 5, "line_end": 6}]))
    monkeypatch.setattr(terms, "_TABLE", [word_folds(50)])
    for data, defs in blobs:
        got, want = _both(data, defs)
        assert got == want
    assert len(terms._TABLE[0]) <= 50 + 400


def test_misuse_is_refused():
    table = word_folds(10)
    one = np.asarray([0], np.int64)
    with pytest.raises(ValueError, match="out of range"):
        table.scan(np.frombuffer(b"ab", np.uint8), one, np.asarray([3], np.int64), np.asarray([0], np.int32), 1, 5)
    ids, off, first, new = table.scan(np.frombuffer(b"ab cd", np.uint8), one, np.asarray([5], np.int64),
                                      np.asarray([0], np.int32), 1, 5)
    with pytest.raises(ValueError, match="no fold"):
        table.join(ids, off)
    with pytest.raises(ValueError, match="do not follow"):
        table.set_folds(first + 1, ["x"])


_WORD_CHARS = "aAbBzZyY09_-. " + "\u00e9\u00c9\u00df\u0130\u0131\u01c5"  # (é É ß İ ı ǅ: Unicode case rules)


@given(st.lists(st.one_of(st.text(alphabet=_WORD_CHARS, max_size=14),
                          st.sampled_from(["HTTPResponse", "parseHTTPResponse_v2", "ABc", "AB", "the", "The", "THE",
                                           "x1Y2", "__init__", "getURLs2D", "a", ""])), max_size=40))
def test_index_forms_of_words_match_the_python_version(words) -> None:
    """``forms_many`` (the split native for ASCII words, m1nd_core.wordfold.fold_forms) and ``folded_texts`` give
    what the Python version gave, word for word and in the same order."""
    from m1nd.graph.lexicon import folded_texts, forms_many

    want = reference.forms_many(words)
    got = forms_many(words)
    assert got == want and list(got) == list(want)
    distinct = list(dict.fromkeys(words))
    assert folded_texts(distinct) == [" ".join(want[w]) for w in distinct]


def test_index_forms_of_a_real_vocabulary_match_the_python_version() -> None:
    """Every written word of a few stdlib modules (identifiers, constants, dunders, words of comments)."""
    import json
    import textwrap

    from m1nd.graph.lexicon import forms_many

    words = sorted({w.decode() for mod in (json, textwrap, re, copy)
                    for w in re.findall(rb"[A-Za-z_][A-Za-z0-9_]{1,79}", open(mod.__file__, "rb").read())})
    assert len(words) > 1000
    assert forms_many(words) == reference.forms_many(words)
