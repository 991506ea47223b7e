"""Return types of standard-library functions from typeshed's stubs: what a call of a standard-library function or
method of the graph gives when its source says nothing usable (a call into C, a cache lookup, several returns of
unknown type). ``re.compile`` -> ``re.Pattern``, ``logging.getLogger`` -> ``logging.Logger``.

The table (``data/stdlib_returns.json.gz``) is generated from typeshed's ``stdlib/`` stubs by
``tools/gen_stdlib_returns.py`` (typeshed: Apache License 2.0, see that script): module -> function or method
(``f``, ``Class.m``) -> its return, a qualified class (the module the stubs define it in) or a union ``a.B|c.D``,
``None`` already removed. It is read once per process, the first time a graph function's module is one of the
standard library's.

A stubbed class is looked up in the graph by its module path: a class of the graph (the standard library is
ingested) links; a module outside the graph, or a name the graph's module binds to no class (an import from
outside, ``Pattern = type(...)``: a type implemented in C), is a type outside the graph: its method calls are
settled, no guess. A name the graph's module does not have at all (the stubs describe a newer Python, or a name
only the stubs know) is not known: the call stays as before."""

from __future__ import annotations

import functools
import gzip
import json
from importlib import resources
from typing import Any

from m1nd.ingest.resolve.core import ResolverCore
from m1nd.ingest.resolve.tables import CLASSLIKE, EXTERNAL, K_DIR, K_FILE, NOTFOUND, TYPE_KINDS

_CLASS_OR_MODULE = TYPE_KINDS | {K_FILE, K_DIR}


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    data = resources.files("m1nd.ingest.resolve").joinpath("data/stdlib_returns.json.gz").read_bytes()
    doc: dict[str, Any] = json.loads(gzip.decompress(data))
    return doc


def stdlib_returns() -> dict[str, dict[str, str]]:
    """module -> function or method qualified name -> return (the generated table)."""
    returns: dict[str, dict[str, str]] = _table()["returns"]
    return returns


def stdlib_renamed() -> dict[str, list[str]]:
    """qualified class -> its other names in other Python versions (``_AbstractEventLoopPolicy`` was
    ``AbstractEventLoopPolicy``)."""
    renamed: dict[str, list[str]] = _table().get("renamed") or {}
    return renamed


class StubReturns(ResolverCore):
    """What calling a standard-library function of the graph returns, according to the stubs."""

    def stub_return(self, fn: int) -> str | None:
        """The stubs' return of function ``fn`` (``a.B`` / ``a.B|c.D``), None when they name none."""
        f = self.file_by_idx.get(self.file_of[fn])
        if f is None or f.fam != "py":
            return None
        mod = self.stub_module(f.idx)
        if mod is None:
            return None
        table = stdlib_returns().get(mod)
        return table.get(self.qname[fn]) if table else None

    def stub_module(self, file_idx: int) -> str | None:
        """Dotted module name of a Python file of the graph (its path below the source root holding it)."""
        memo = self.stub_mod_memo
        if file_idx in memo:
            return memo[file_idx]
        path = self.py_path.get(file_idx)
        if path is not None:
            for r in self.py_roots:
                if r and path.startswith(r + "/"):
                    path = path[len(r) + 1 :]
                    break
        mod = path.replace("/", ".") if path else None
        memo[file_idx] = mod
        return mod

    def stub_types(self, fn: int) -> frozenset[int] | None:
        """The graph types (``EXTERNAL``: outside the graph) of what ``fn`` returns according to the stubs; None
        when they say nothing or a class they name is not known here."""
        memo = self.stub_memo
        if fn in memo:
            return memo[fn]
        texpr = self.stub_return(fn)
        got: frozenset[int] | None = None
        if texpr:
            f = self.file_by_idx[self.file_of[fn]]
            out = set()
            for qual in texpr.split("|"):
                t = self.stub_class(f.idx, qual)
                if t == NOTFOUND:
                    out.clear()
                    break
                out.add(t)
            got = frozenset(out) if out else None
        memo[fn] = got
        return got

    def stub_class(self, file_idx: int, qual: str) -> int:
        """Class ``qual`` (``pkg.mod.Cls``) of the stubs in the graph: its node; EXTERNAL when its module is outside
        the graph, or the graph's module binds the name to no class (an import from outside, a variable holding a
        call's result: ``Pattern = type(...)``, a type made in C); NOTFOUND when the graph's module does not have
        the name (a name of newer Python versions, or of the stubs only) or it is ambiguous there."""
        memo = self.stub_cls_memo
        got = memo.get(qual)
        if got is not None:
            return got
        memo[qual] = NOTFOUND  # (a cycle guard for the renames)
        res = self._stub_class(file_idx, qual)
        if res == NOTFOUND:  # the graph's Python may know the class by an older name
            for other in stdlib_renamed().get(qual, ()):
                res = self.stub_class(file_idx, other)
                if res != NOTFOUND:
                    break
        memo[qual] = res
        return res

    def _stub_class(self, file_idx: int, qual: str) -> int:
        f = self.file_by_idx[file_idx]
        parts = qual.split(".")
        res = EXTERNAL  # (no module of its path in the graph)
        for i in range(len(parts) - 1, 0, -1):  # the longest module path the graph has
            node = self.py_absolute(f, ".".join(parts[:i]))
            if node is None:
                continue
            for j, seg in enumerate(parts[i:]):
                nxt = self.member(node, seg, TYPE_KINDS if i + j == len(parts) - 1 else _CLASS_OR_MODULE)
                if nxt == NOTFOUND and self._module_var(node, seg):
                    nxt = EXTERNAL
                node = nxt
                if node < 0:
                    break
            res = node if node == EXTERNAL or (node >= 0 and self.kind[node] in CLASSLIKE) else NOTFOUND
            break
        return res

    def _module_var(self, node: int, name: str) -> bool:
        """Is ``name`` a variable module ``node`` assigns a call's result (``extra.vars``)?"""
        if self.kind[node] == K_DIR:
            node = self.py_init_of_dir.get(self.src_path[node], NOTFOUND)
        mf = self.file_by_idx.get(node) if node >= 0 else None
        return mf is not None and name in ((mf.blob.get("extra") or {}).get("vars") or ())
