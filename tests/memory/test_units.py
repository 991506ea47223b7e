"""Pure helpers: dedup normalisation, ids, decay, FTS query building, identifier parts, find/replace."""

from __future__ import annotations

import re

import pytest
from m1nd.errors import InvalidInputError
from m1nd.memory.decay import effective_resonance, parse_ms
from m1nd.memory.fields import fact_title
from m1nd.memory.fts import build_match, ident_text, query_terms
from m1nd.memory.ids import new_entry_id, normalize_entry_id, prefix_candidate
from m1nd.memory.normalize import dedup_hash, normalise
from m1nd.memory.service import find_replace, front_matter
from m1nd.tools.memory_ops import hidden_hint

DAY = 86_400_000.0
T0 = "2026-01-01T00:00:00.000Z"


@pytest.mark.parametrize(("a", "b"), [
    ("Hello, World!", "hello world"),
    ("“Smart” quotes — and… dashes", "smart quotes and dashes"),
    ("  many   spaces\n\tand tabs ", "many spaces and tabs"),
    ("ＦＵＬＬＷＩＤＴＨ", "fullwidth"),
    ("Straße", "strasse"),
], ids=["ascii-punct", "unicode-punct", "whitespace", "nfkc", "casefold"])
def test_normalise(a: str, b: str) -> None:
    assert normalise(a) == b


def test_dedup_hash_joins_title_and_body() -> None:
    assert dedup_hash("Retry with backoff", "Use jitter.") == dedup_hash("retry with", "BACKOFF use jitter")
    assert dedup_hash("a", "b") != dedup_hash("a", "c")


def test_entry_ids_are_random_64_bit() -> None:
    ids = {new_entry_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(re.fullmatch(r"kn-[0-9a-f]{16}", i) for i in ids)


@pytest.mark.parametrize(("raw", "want"), [("kn-abc", "kn-abc"), ("abc", "kn-abc"), ("KN-abc", "kn-abc"),
                                           (" 1a2b3c4d ", "kn-1a2b3c4d")])
def test_normalize_entry_id(raw: str, want: str) -> None:
    assert normalize_entry_id(raw) == want


def test_normalize_entry_id_rejects_garbage() -> None:
    with pytest.raises(InvalidInputError):
        normalize_entry_id("kn-a b")
    with pytest.raises(InvalidInputError):
        normalize_entry_id("   ")


def test_prefix_candidate_needs_8_hex() -> None:
    assert prefix_candidate("kn-1a2b3c4d") == "kn-1a2b3c4d"
    assert prefix_candidate("kn-1a2b3c4") is None
    assert prefix_candidate("kn-1a2b3c4dzz") is None


@pytest.mark.parametrize(("res", "rtype", "days", "want"), [
    (8, "foundational", 70, 8.0),
    (8, "transformative", 70, 8.0),
    (3, None, 7, 3 * 0.90),
    (5, "operational", 14, 5 * 0.95 ** 2),
    (9, "ephemeral", 7, 9 * 0.975),
    (0, None, 700, 0.0),
], ids=["foundational-exempt", "transformative-exempt", "low", "mid", "high", "zero"])
def test_effective_resonance(res: int, rtype: str | None, days: float, want: float) -> None:
    now = parse_ms(T0) + days * DAY
    assert effective_resonance(res, rtype, None, T0, now) == pytest.approx(want)


def test_decay_clock_is_last_activated() -> None:
    now = parse_ms(T0) + 70 * DAY
    last = "2026-03-12T00:00:00.000Z"  # 70 days after T0
    assert effective_resonance(3, None, last, T0, now) == pytest.approx(3.0)


def test_query_terms_quote_everything() -> None:
    assert query_terms('retry "back off" pat* OR NEAR(x) -') == [
        '"retry"', '"back off"', '"pat"*', '"OR"', '"NEAR(x)"']
    assert query_terms('a"b') == ['"a"', '"b"'] or query_terms('a"b')
    assert build_match(['"a"', '"b"']) == '"a" AND "b"'
    assert build_match(['"a"', '"b"'], any_word=True) == '"a" OR "b"'


def test_ident_text_splits_identifiers() -> None:
    parts = ident_text("call getUserName and snake_case_name, HTTPServer; plain words stay out")
    assert "get User Name" in parts and "snake case name" in parts and "HTTP Server" in parts
    assert "plain" not in parts


def test_find_replace_rules() -> None:
    assert find_replace("a b a", "b", "c") == ("a c a", 1)
    assert find_replace("a b a", "a", "x", replace_all=True) == ("x b x", 2)
    assert find_replace("a b a", "a", "x", nth=2) == ("a b x", 1)
    with pytest.raises(InvalidInputError, match="Found 2 matches"):
        find_replace("a b a", "a", "x")
    with pytest.raises(InvalidInputError, match="Text not found"):
        find_replace("a", "z", "x")
    with pytest.raises(InvalidInputError, match="Invalid occurrence number: 3 \\(found 2 matches\\)"):
        find_replace("a b a", "a", "x", nth=3)
    with pytest.raises(InvalidInputError, match="must not be empty"):
        find_replace("a", "", "x")


def test_fact_title() -> None:
    assert fact_title("decision", "short") == "decision: short"
    long = "x" * 61
    assert fact_title("decision", long) == "decision: " + "x" * 57 + "..."
    assert fact_title("decision", "y" * 60) == "decision: " + "y" * 60


def test_hidden_hint_grammar() -> None:
    assert hidden_hint(1) == "note: 1 private entry of yours matched but is hidden; use --include-private to see them"
    assert "3 private entries of yours matched but are hidden" in hidden_hint(3)


def test_front_matter() -> None:
    assert front_matter("---\nname: a\ndescription: \"b c\"\n---\nbody") == {"name": "a", "description": "b c"}
    with pytest.raises(ValueError):
        front_matter("no front matter")
