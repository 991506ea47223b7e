"""Units of the ritual's text mechanics: byte chunking (properties), phrases, normalisation and judging, escaping."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from m1nd.memory import waketext as W

PIECES = st.lists(st.sampled_from(["word ", "é", "日本", "\n", "\n\n", "\n---\n", "\n## H\n", "\n### h3\n", "```\n",
                                   "Sentence one. ", "x" * 30]), max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=PIECES, limit=st.integers(min_value=1, max_value=64))
def test_chunks_concatenate_back_and_respect_the_limit(text: str, limit: int) -> None:
    chunks = W.split_chunks(text, limit)
    assert "".join(c.text for c in chunks) == text
    assert all(c.text for c in chunks) or text == ""
    for c in chunks:
        n = len(c.text.encode())
        if not c.oversized:
            # only a single character longer than the limit may exceed it without the oversized flag
            assert n <= limit or len(c.text) == 1, (c, limit)
    # no cut strictly inside a fence
    b = text.encode()
    spans = W.fence_spans(b)
    pos = 0
    for c in chunks[:-1]:
        pos += len(c.text.encode())
        assert not any(s < pos < e for s, e in spans), (pos, spans)


def test_cut_preferences() -> None:
    text = "aaaa\n\nbbbb\n## Head\ncccc\n---\ndddd"
    assert [c.text for c in W.split_chunks(text, 30)] == ["aaaa\n\nbbbb\n## Head\ncccc\n---\n", "dddd"]
    assert [c.text for c in W.split_chunks("aaaa\n\nbbbb\n## Head\ncccc", 22)] == ["aaaa\n\nbbbb\n", "## Head\ncccc"]
    assert [c.text for c in W.split_chunks("aaaa\n\nbbbb cccc", 12)] == ["aaaa\n\n", "bbbb cccc"]
    assert [c.text for c in W.split_chunks("ééééé", 4)] == ["éé", "éé", "é"]  # UTF-8 boundaries


def test_a_fence_is_never_split_and_a_trapped_chunk_is_flagged() -> None:
    code = "```\n" + "line\n" * 10 + "```\n"
    text = "intro\n" + code + "after"
    chunks = W.split_chunks(text, 20)
    assert "".join(c.text for c in chunks) == text
    assert code in [c.text for c in chunks]
    assert [c.oversized for c in chunks if c.text == code] == [True]


def test_env_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    for raw, want in (("", 28000), ("0", 28000), ("-5", 28000), ("abc", 28000), ("100", 100)):
        monkeypatch.setenv("M1ND_WAKE_CHUNK_BYTES", raw)
        assert W.chunk_limit() == want
    assert W.shown_title("T", 1, 3) == "T (Part 2/3)" and W.shown_title("T", 0, 1) == "T"
    assert W.strip_part("T (Part 2/3)") == "T" and W.strip_part("T (Part x)") == "T (Part x)"


def test_phrases() -> None:
    body = "Intro line without stop\n\n```\n# not a heading\nCode. Here.\n```\n\nFirst. Second one! Third?"
    # auto: no heading outside fences -> a sentence picked by sha256(content)
    sentences = ["First.", "Second one!", "Third?"]
    pick = sentences[int(hashlib.sha256(body.encode()).hexdigest()[:8], 16) % 3]
    assert W.auto_phrase(body, "T") == pick
    assert W.auto_phrase("# Top ##\nx", "T") == "Top"
    assert W.auto_phrase("just a line", "T") == "just a line" and W.auto_phrase("   ", "Title") == "Title"
    assert W.auto_phrase("#" + " " + "h" * 121 + "\nOk then.", "T") == "Ok then."  # heading too long
    assert W.derived_phrase("## Second\nbody") == "Second"
    assert W.derived_phrase("Plain text here. More.") == "Plain text here."
    assert W.derived_phrase("no stop " + "w" * 100) == ("no stop " + "w" * 100)[:80]
    assert W.derived_phrase("```\ncode only\n```\n") is None
    assert W.chunk_phrases(0, "x", "x", "T", ["a", "b"]) == ("authored", ["a", "b"])
    assert W.chunk_phrases(0, "x.", "x.", "T", []) == ("auto", ["x."])
    assert W.chunk_phrases(1, "## H", "...", "T", ["a"]) == ("derived", ["H"])
    assert W.chunk_phrases(1, "```\nc\n```", "...", "T", ["a"]) == ("unphrased", [])
    assert W.chunk_phrases(1, "## H", "...", "T", []) == ("unphrased", [])
    assert W.entry_content("", None) == "(no content)" and W.entry_content("", "sum") == "sum"


@pytest.mark.parametrize(("guess", "phrases", "want"), [
    ("memory builder", ["memory builder"], ("exact", 0)),
    ("  memory builder  ", ["x", "memory builder"], ("exact", 1)),
    ("Memory Builder!", ["memory builder"], ("close", 0)),
    ("\u201cdon\u2019t panic\u201d\u2026", ['"don\'t panic"'], ("close", 0)),
    ("memory bilder", ["memory builder"], ("close", 0)),  # Levenshtein 1/14
    ("memry bldr", ["memory builder"], ("none", None)),
    ("x", ["close match", "x"], ("exact", 1)),  # exact anywhere beats close earlier
    ("CLOSE MATCH", ["close match", "CLOSE MATCH"], ("exact", 1)),
    ("anything", [], ("none", None)),
    ("?!a", ["!!!"], ("none", None)),  # an empty normalisation never matches
], ids=["exact", "trimmed", "case+punct", "smart-quotes", "levenshtein", "too-far", "exact-wins", "exact-wins-2",
        "no-phrases", "empty-norm"])
def test_judge(guess, phrases, want) -> None:
    assert W.judge(guess, phrases) == want


def test_similarity_threshold() -> None:
    assert W.similar("abcdefghij", "abcdefghXY")  # 0.8
    assert not W.similar("abcdefghij", "abcdefgXYZ")  # 0.7
    long_a, long_b = "ab" * 700, "ab" * 650 + "cd" * 50
    assert W.levenshtein(long_a, long_b) == 100 and W.similar(long_a, long_b)


def test_escape_controls() -> None:
    assert W.escape_controls("a\nb\tc\x1b[0m\u202ed\u2066\x00") == "a\\nb\\tc\\u{1b}[0m\\u{202e}d\\u{2066}\\u{0}"
    assert W.escape_controls("plain é 日本") == "plain é 日本"
