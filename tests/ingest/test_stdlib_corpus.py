"""The pipeline on a real corpus: the standard library's ``json`` and ``email`` packages."""

from __future__ import annotations

import shutil
import sysconfig
from pathlib import Path

import pytest
from ingest_helpers import assert_invariants, build
from m1nd.graph.schema import KINDS

STDLIB = Path(sysconfig.get_paths()["stdlib"])


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    if not (STDLIB / "json" / "decoder.py").is_file() or not (STDLIB / "email" / "message.py").is_file():
        pytest.skip("stdlib sources not available")
    root = tmp_path_factory.mktemp("stdlib") / "lib"
    for pkg in ("json", "email"):
        shutil.copytree(STDLIB / pkg, root / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return build(root)


def test_json(g) -> None:
    cls = g.node("file::json/decoder.py::class::JSONDecoder")
    assert cls.kind == KINDS["class"] and cls.line_end > cls.line_start + 20
    assert cls.doc.startswith("Simple JSON")
    decode = g.node("file::json/decoder.py::class::JSONDecoder::fn::decode")
    assert decode.signature.startswith("def decode(self, s")
    # JSONDecoder.decode calls self.raw_decode
    assert g.has(
        "file::json/decoder.py::class::JSONDecoder::fn::decode",
        "file::json/decoder.py::class::JSONDecoder::fn::raw_decode",
        "calls",
    )
    # json/__init__.py re-exports the decoder class (from .decoder import JSONDecoder, JSONDecodeError)
    assert g.has("file::json/__init__.py", "file::json/decoder.py::class::JSONDecoder", "reexports")
    assert g.has("file::json/__init__.py", "file::json/decoder.py", "imports")
    # top-level code (`_default_decoder = JSONDecoder(...)`) is attributed to the file
    assert g.has("file::json/__init__.py", "file::json/decoder.py::class::JSONDecoder", "calls")
    assert g.has("file::json/tool.py::fn::main", "file::json/__init__.py::fn::loads", "calls")


def test_email(g) -> None:
    calls = g.rel_count("calls")
    assert calls > 500
    assert g.node("file::email/message.py::class::Message").kind == KINDS["class"]
    assert g.has(
        "file::email/message.py::class::EmailMessage", "file::email/message.py::class::MIMEPart", "inherits"
    )
    # absolute `from email import utils` inside the package resolves to the package module
    assert g.has("file::email/message.py", "file::email/utils.py", "imports")
    # a cross-module call through the module binding (`utils.encode_rfc2231(...)`)
    assert g.has(
        "file::email/message.py::fn::_formatparam", "file::email/utils.py::fn::encode_rfc2231", "calls"
    )
    # multi-level relative package: email/mime/text.py imports from email.mime.nonmultipart
    assert g.has(
        "file::email/mime/text.py::class::MIMEText",
        "file::email/mime/nonmultipart.py::class::MIMENonMultipart",
        "inherits",
    )
    assert g.stats["parse_errors"] == {}
    assert g.parts.unresolved_refs >= 0 and g.parts.ambiguous_refs >= 0
    assert "re" in g.parts.external_imports["email/utils.py"]


def test_invariants(g) -> None:
    assert_invariants(g)
