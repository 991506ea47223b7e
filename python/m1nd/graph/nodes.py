"""Node attribute table in CSR order (index i = i-th node by ext_id), column-wise."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from m1nd.graph.schema import KINDS

KIND_CODE = KINDS
KIND_NAMES = tuple(sorted(KINDS, key=KINDS.__getitem__))
DIR, FILE = KINDS["dir"], KINDS["file"]


@dataclass
class NodeTable:
    ext_id: list[str]
    label: list[str]
    qname: list[str]
    kind: np.ndarray  # uint8[N]
    lang: list[str]
    root_id: np.ndarray  # int32[N]
    source_path: list[str]
    line_start: np.ndarray  # int32[N]
    line_end: np.ndarray  # int32[N]
    signature: list[str]
    doc: list[str]
    is_test: np.ndarray  # bool[N]
    content_hash: list[str]
    last_change_ms: np.ndarray  # int64[N]
    churn: np.ndarray  # float32[N]
    commit_count: np.ndarray  # int32[N]
    pagerank: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    file_of: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    index: dict[str, int] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.ext_id)

    @classmethod
    def from_columns(cls, cols: dict[str, list[Any]]) -> NodeTable:
        n = len(cols["ext_id"])

        def arr(name: str, dtype: Any, default: Any = 0) -> np.ndarray:
            return np.fromiter((default if v is None else v for v in cols[name]), dtype=dtype, count=n)

        def strs(name: str) -> list[str]:
            return [v or "" for v in cols[name]]

        t = cls(ext_id=list(cols["ext_id"]), label=strs("label"), qname=strs("qname"), kind=arr("kind", np.uint8),
                lang=strs("lang"), root_id=arr("root_id", np.int32), source_path=strs("source_path"),
                line_start=arr("line_start", np.int32), line_end=arr("line_end", np.int32),
                signature=strs("signature"), doc=strs("doc"), is_test=arr("is_test", np.bool_, False),
                content_hash=strs("content_hash"), last_change_ms=arr("last_change_ms", np.int64),
                churn=arr("churn", np.float32), commit_count=arr("commit_count", np.int32))
        t.finish()
        return t

    def finish(self) -> None:
        self.index = {e: i for i, e in enumerate(self.ext_id)}
        if len(self.pagerank) != self.n:
            self.pagerank = np.zeros(self.n, np.float32)
        self.file_of = np.full(self.n, -1, dtype=np.int32)
        for i, e in enumerate(self.ext_id):
            if self.kind[i] == DIR:
                continue
            head = e.split("::file::", 1)[0] + "::" if "::file::" in e else ""
            self.file_of[i] = self.index.get(f"{head}file::{self.source_path[i]}", -1)

    def kind_name(self, i: int) -> str:
        k = int(self.kind[i])
        return KIND_NAMES[k] if k < len(KIND_NAMES) else str(k)

    _STRINGS = ("ext_id", "label", "qname", "lang", "source_path", "signature", "doc", "content_hash")
    _ARRAYS = ("kind", "root_id", "line_start", "line_end", "is_test", "last_change_ms", "churn", "commit_count",
               "pagerank", "file_of")

    def arrays(self) -> dict[str, np.ndarray]:
        """Everything needed to rebuild the table, as flat arrays (the on-disk cache)."""
        from m1nd.graph.strings import pack_strings

        out = {k: pack_strings(getattr(self, k)) for k in self._STRINGS}
        out.update({k: getattr(self, k) for k in self._ARRAYS})
        out["n"] = np.asarray([self.n])
        return out

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray]) -> NodeTable:
        from m1nd.graph.strings import LazyStrings, unpack_strings

        n = int(a["n"][0])
        # ext_id, label and source_path are needed by every query; the rest stay packed until first use
        eager = ("ext_id", "label", "source_path")
        kw: dict[str, Any] = {k: unpack_strings(a[k], n) if k in eager else LazyStrings(a[k], n)
                              for k in cls._STRINGS}
        kw.update({k: a[k] for k in cls._ARRAYS})
        t = cls(**kw)
        t.index = {e: i for i, e in enumerate(t.ext_id)}
        return t
