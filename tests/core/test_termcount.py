"""termcount.count_terms: the same triples, in the same order, as Counter(text.split()) per text in Python."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from m1nd.errors import InvalidInputError
from m1nd.graph.engine import count_terms
from m1nd_core import termcount

from . import reference
from .graphs import SETTINGS

#: every separator str.split() knows below 128, a few Unicode ones, and characters that are not separators
_SEPARATORS = " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u2003\u2028\u3000"
_WORD_CHARS = "abcxyz_019ÉéßΩ\u200b\x00\x7f\x1b"
_TEXT = st.text(alphabet=st.sampled_from(list(_SEPARATORS + _WORD_CHARS)), max_size=60)
_ASCII_TEXT = st.lists(st.sampled_from(["get", "set", "x", "self", "a_b", "", " ", "  ", "\t", "\n", "\x1c"]),
                       max_size=40).map(" ".join)


def _same(got, want):
    assert len(got) == len(want) == 4
    for g, w in zip(got[:3], want[:3]):
        assert g.dtype == w.dtype
        assert np.array_equal(g, w)
    assert got[3] == want[3]
    assert all(type(x) is str for x in got[3])


@SETTINGS
@given(st.lists(st.one_of(_TEXT, _ASCII_TEXT), max_size=30), st.lists(st.text(max_size=6), max_size=10,
                                                                       unique=True), st.integers(0, 2**31))
def test_matches_the_python_loop(texts, vocab, seed):
    skip = (np.random.default_rng(seed).random(len(texts)) < 0.2).astype(np.uint8)
    _same(termcount.count_terms(texts, skip, vocab), reference.count_terms(texts, skip, vocab))


@SETTINGS
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=40), max_size=20),
       st.lists(st.text(alphabet=st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc")), min_size=1,
                        max_size=5), max_size=10, unique=True))
def test_matches_on_any_text(texts, vocab):
    skip = np.zeros(len(texts), np.uint8)
    _same(termcount.count_terms(texts, skip, vocab), reference.count_terms(texts, skip, vocab))


def test_lone_surrogates_and_vocabulary_terms_meet():
    # a lone surrogate (a path decoded with surrogateescape) is a term of its own, never equal to another string
    texts = ["a \udce9 b", "\udce9 \u00e9 a", "plain b b"]
    vocab = ["b", "\udce9"]
    got = termcount.count_terms(texts, np.zeros(3, np.uint8), vocab)
    _same(got, reference.count_terms(texts, np.zeros(3, np.uint8), vocab))
    assert got[3] == ["a", "\u00e9", "plain"]


def test_many_terms_grow_the_tables():
    rng = np.random.default_rng(7)
    words = [f"w{k}" for k in range(50_000)]
    texts = [" ".join(rng.choice(words, 300).tolist()) for _ in range(400)]
    skip = (rng.random(400) < 0.1).astype(np.uint8)
    vocab = words[::97]
    _same(termcount.count_terms(texts, skip, vocab), reference.count_terms(texts, skip, vocab))


def test_bad_input_is_refused_clearly():
    with pytest.raises(InvalidInputError, match="2 skip flags for 1 texts"):
        count_terms(["a"], np.zeros(2, np.uint8), [])
    with pytest.raises(InvalidInputError, match="not str"):
        count_terms(["a", b"b"], np.zeros(2, np.uint8), [])
    with pytest.raises(InvalidInputError, match="twice"):
        count_terms(["a"], np.zeros(1, np.uint8), ["x", "x"])
