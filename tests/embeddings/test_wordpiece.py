"""m1nd's BERT WordPiece reader against ``tokenizers`` (the reference, in the test extra): the same ids and offsets
for the shipped model's file and for cased / BertProcessing variants, on real source files, on every kind of Unicode
text, and the fallback to ``tokenizers`` for files of another kind (issue 17: the default install has no
``tokenizers``)."""

from __future__ import annotations

import copy
import json
import os
import sys
import sysconfig
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from m1nd.memory import embeddings as E
from m1nd.memory.wordpiece import UnsupportedTokenizer, WordPieceTokenizer

tokenizers = pytest.importorskip("tokenizers")

CONFIG = json.loads(E.DEFAULT_TOKENIZER.read_text(encoding="utf-8"))
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def _variant(**changes: object) -> dict:
    cfg = copy.deepcopy(CONFIG)
    for key, value in changes.items():
        section, _, field = key.partition("__")
        if field:
            cfg[section][field] = value
        else:
            cfg[section] = value
    return cfg


VARIANTS = {
    "minilm": CONFIG,
    # a cased model: no lowercasing, and so no accent stripping either (strip_accents null follows lowercase)
    "cased": _variant(normalizer__lowercase=False),
    "accents-kept": _variant(normalizer__strip_accents=False),
    "no-clean-no-cjk": _variant(normalizer__clean_text=False, normalizer__handle_chinese_chars=False),
    "bert-processing": _variant(post_processor={"type": "BertProcessing", "sep": ["[SEP]", 102],
                                                "cls": ["[CLS]", 101]}),
}


def _pair(cfg: dict) -> tuple[WordPieceTokenizer, object]:
    ref = tokenizers.Tokenizer.from_str(json.dumps(cfg))
    ref.no_padding()
    ref.no_truncation()
    return WordPieceTokenizer.from_config(cfg), ref


PAIRS = {name: _pair(cfg) for name, cfg in VARIANTS.items()}


def _same(ours: WordPieceTokenizer, ref: object, text: str) -> None:
    for special in (True, False):
        a = ours.encode(text, add_special_tokens=special)
        b = ref.encode(text, add_special_tokens=special)
        assert a.ids == b.ids, (text, special)
        assert a.offsets == [tuple(o) for o in b.offsets], (text, special)


def _sources() -> list[str]:
    files = sorted((STDLIB / "email").glob("*.py"))[:10] + sorted((STDLIB / "json").glob("*.py"))
    return [f.read_text(encoding="utf-8", errors="replace") for f in files]


SAMPLES = [
    "", "   ", "Hello, World!", "def foo_bar(self, x: int) -> None:\n    return x+1  # ok",
    "déjà vu Ελληνικά ΟΔΟΣ naïve café İstanbul ǅ ﬁ ß ẞ", "日本語のテキスト 中文 한국어 텍스트", "emoji 😀👍🏽 done",
    "tab\there\nnew\r\x00nul\x7fdel\x1c\x85", "[CLS] x [SEP] y[MASK]z[PAD]", "a" * 150 + " " + "b" * 99,
    "x\u200by\u2028z\u00a0w\u3000v\ufeff\ufffd", "À\u3097 \u0383 \u2065 \u08ca\u0627", "«quotes» — dashes… ‘’ “”",
]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_same_ids_and_offsets_as_tokenizers_on_samples_and_source_files(name: str) -> None:
    ours, ref = PAIRS[name]
    for text in SAMPLES + _sources():
        _same(ours, ref, text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_same_ids_and_offsets_on_any_unicode_text(text: str) -> None:
    for name in ("minilm", "cased"):
        _same(*PAIRS[name], text)


def test_batches_and_the_embedder_use_it() -> None:
    ours, ref = PAIRS["minilm"]
    texts = SAMPLES[:6]
    assert [e.ids for e in ours.encode_batch(texts)] == [e.ids for e in ref.encode_batch(texts)]
    assert isinstance(E.load_tokenizer(E.DEFAULT_TOKENIZER), WordPieceTokenizer)


def _bpe_file(tmp_path: Path) -> Path:
    path = tmp_path / "tokenizer.json"
    bpe = tokenizers.Tokenizer(tokenizers.models.BPE(vocab={"a": 0, "b": 1, "ab": 2}, merges=[("a", "b")]))
    path.write_text(bpe.to_str(), encoding="utf-8")
    return path


def test_another_kind_of_tokenizer_goes_to_tokenizers(tmp_path: Path) -> None:
    path = _bpe_file(tmp_path)
    with pytest.raises(UnsupportedTokenizer, match="not WordPiece"):
        WordPieceTokenizer.from_file(path)
    tok = E.load_tokenizer(path)
    assert isinstance(tok, tokenizers.Tokenizer)
    assert os.environ["HF_HUB_OFFLINE"] == "1"  # set before tokenizers is imported: it never reaches the Hub
    assert tok.encode("ab").ids == [2]
    assert not tok.padding and not tok.truncation


def test_another_kind_without_tokenizers_installed_says_what_to_install(tmp_path: Path, monkeypatch) -> None:
    path = _bpe_file(tmp_path)
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # an import of it now raises ImportError
    with pytest.raises(E.EmbedderUnavailableError, match=r"pip install 'm1nd\[tokenizers\]'"):
        E.load_tokenizer(path)


def test_an_unreadable_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(E.EmbedderUnavailableError, match="cannot read tokenizer"):
        E.load_tokenizer(path)
