"""The layering rules of ARCHITECTURE.md, checked by walking every module's imports with ast."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import m1nd

PKG = Path(m1nd.__file__).parent
MODULES = sorted(p for p in PKG.rglob("*.py"))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def _modname(p: Path) -> str:
    rel = p.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


IMPORTS = {_modname(p): _imports(p) for p in MODULES}

# heavy dependency -> the only module(s) allowed to import it
OWNERS = {
    "apsw": {"m1nd.store.db"},
    "m1nd_core": {"m1nd.graph.engine"},
    "tree_sitter": {"m1nd.ingest.treesitter"},
    "onnxruntime": {"m1nd.memory.embeddings"},
    "tokenizers": {"m1nd.memory.embeddings"},
    "usearch": {"m1nd.memory.vectors"},
    "watchfiles": {"m1nd.watch"},
}
FORBIDDEN = {  # package prefix -> packages it must never import
    "m1nd.store": ("m1nd.graph", "m1nd.memory", "m1nd.mcp", "m1nd.cli", "m1nd.ingest", "m1nd.workspace"),
    "m1nd.graph": ("m1nd.store", "m1nd.mcp", "m1nd.cli", "m1nd.ingest", "m1nd.memory"),
    "m1nd.ingest": ("m1nd.store", "m1nd.mcp", "m1nd.cli", "m1nd.memory", "m1nd.graph.engine"),
    "m1nd.mcp": ("m1nd.store", "m1nd_core", "tree_sitter", "apsw"),
    "m1nd.cli": ("m1nd.store", "m1nd_core", "tree_sitter", "apsw"),
}


@pytest.mark.parametrize("dep", sorted(OWNERS))
def test_heavy_dependency_has_one_owner(dep: str) -> None:
    users = {m for m, imps in IMPORTS.items() if any(i == dep or i.startswith(dep + ".") for i in imps)}
    assert users <= OWNERS[dep], f"{dep} imported outside {OWNERS[dep]}: {users - OWNERS[dep]}"


@pytest.mark.parametrize("prefix", sorted(FORBIDDEN))
def test_layers_do_not_reach_up(prefix: str) -> None:
    bad = []
    for mod, imps in IMPORTS.items():
        if mod == prefix or mod.startswith(prefix + "."):
            for i in imps:
                if any(i == f or i.startswith(f + ".") for f in FORBIDDEN[prefix]):
                    bad.append(f"{mod} -> {i}")
    assert not bad, bad


def test_click_only_in_cli() -> None:
    users = {m for m, imps in IMPORTS.items() if "click" in imps}
    assert all(u.startswith("m1nd.cli") for u in users), users


def test_no_print_in_library() -> None:
    offenders = []
    for p in MODULES:
        mod = _modname(p)
        if mod.startswith("m1nd.cli") or mod == "m1nd.__main__":
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
                kws = {k.arg: k.value for k in node.keywords}
                file_arg = kws.get("file")
                if not (isinstance(file_arg, ast.Attribute) and file_arg.attr == "stderr"):
                    offenders.append(f"{mod}:{node.lineno}")
    assert not offenders, offenders
