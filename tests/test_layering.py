"""The layering rules of ARCHITECTURE.md, checked by walking every module's imports with ast.

The import graph counts every import a module can execute, inside functions too (an import moved into a function
still couples the two modules; it only hides a cycle from the interpreter). It leaves out imports under
``if TYPE_CHECKING:`` (never executed) and a module's imports of its own ancestor packages (Python imports those
for every module anyway). Relative imports are resolved; ``from pkg import name`` counts as importing the submodule
``pkg.name`` when there is one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import m1nd

PKG = Path(m1nd.__file__).parent
MODULES = sorted(p for p in PKG.rglob("*.py"))


def _modname(p: Path) -> str:
    rel = p.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


PATHS = {_modname(p): p for p in MODULES}
TREES = {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in PATHS.items()}


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _raw_imports(mod: str) -> set[str]:
    """Every name a module imports (absolute, dotted), executed imports only."""
    is_pkg = PATHS[mod].name == "__init__.py"
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".")[: None if is_pkg else -1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(TREES[mod])
    return out


RAW = {m: _raw_imports(m) for m in PATHS}


def _internal(mod: str, names: set[str]) -> set[str]:
    """The m1nd modules among ``names`` (each resolved to the longest existing module), ancestors left out."""
    found = set()
    for name in names:
        while name and name not in PATHS:
            name = name.rpartition(".")[0]
        if name and name != mod and not mod.startswith(name + "."):
            found.add(name)
    return found


GRAPH = {m: _internal(m, imps) for m, imps in RAW.items()}


def _reach(mod: str) -> set[str]:
    seen: set[str] = set()
    stack = [mod]
    while stack:
        for nxt in GRAPH[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def _cycles() -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def connect(v: str) -> None:  # iterative enough for this graph's depth (a few dozen levels)
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            connect(v)
    return out


def _cycle_path(component: list[str]) -> str:
    """One concrete cycle inside a component, as ``a -> b -> ... -> a`` (shortest back to the first module)."""
    members = set(component)
    start = component[0]
    prev: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(GRAPH[v] & members):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return " -> ".join([*reversed(path), start])  # path runs v back to start
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return " -> ".join(component)


# Import cycles still standing, each owned by work in progress elsewhere (a shrinking list: an entry that is no
# longer a cycle fails the test below, so it gets removed). Empty since issue 16's last two went: the embedder
# choice is handed the query child's class by the composition root, and the embedding child's program is apart
# from the server's handle on it.
ALLOWED_CYCLES: set[frozenset[str]] = set()


def test_no_import_cycles() -> None:
    found = _cycles()
    bad = [f"cycle: {_cycle_path(c)} (modules: {', '.join(c)})" for c in found if frozenset(c) not in ALLOWED_CYCLES]
    assert not bad, "\n".join(bad)


def test_allowed_cycles_still_exist() -> None:
    found = {frozenset(c) for c in _cycles()}
    gone = [sorted(c) for c in ALLOWED_CYCLES if c not in found]
    assert not gone, f"these cycles are gone (or changed): update ALLOWED_CYCLES: {gone}"


def _third_party(mod: str) -> set[str]:
    return {i for i in RAW[mod] if not i.startswith("m1nd.") and i != "m1nd"}


# heavy dependency -> the only module(s) allowed to import it
OWNERS = {
    "apsw": {"m1nd.store.db"},
    "m1nd_core": {"m1nd.graph.engine"},
    "tree_sitter": {"m1nd.ingest.treesitter"},
    "onnxruntime": {"m1nd.memory.embeddings"},
    "tokenizers": {"m1nd.memory.embeddings"},
    "usearch": {"m1nd.memory.vectors"},
    "click": None,  # the CLI package only (below)
    "watchfiles": {"m1nd.watch"},
    "psycopg": {"m1nd.store.pg"},
    "psycopg_pool": {"m1nd.store.pg"},
}


@pytest.mark.parametrize("dep", sorted(d for d, owners in OWNERS.items() if owners is not None))
def test_heavy_dependency_has_one_owner(dep: str) -> None:
    users = {m for m, imps in RAW.items() if any(i == dep or i.startswith(dep + ".") for i in imps)}
    assert users <= OWNERS[dep], f"{dep} imported outside {OWNERS[dep]}: {users - OWNERS[dep]}"


def test_click_only_in_cli() -> None:
    users = {m for m, imps in RAW.items() if "click" in imps or any(i.startswith("click.") for i in imps)}
    assert all(u.startswith("m1nd.cli") for u in users), users


def _under(mod: str, prefixes: tuple[str, ...]) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in prefixes)


# Lower layers: what they must never reach, directly or through any chain of imports.
TRANSITIVE_FORBIDDEN = {
    "m1nd.store": ("m1nd.graph", "m1nd.memory", "m1nd.mcp", "m1nd.cli", "m1nd.ingest", "m1nd.workspace",
                   "m1nd.codegraph", "m1nd.tools", "m1nd.perspectives"),
    "m1nd.graph": ("m1nd.store", "m1nd.mcp", "m1nd.cli", "m1nd.ingest", "m1nd.memory", "m1nd.codegraph",
                   "m1nd.tools", "m1nd.workspace"),
    # (ingest reaches graph.engine through graph.lexicon, the home of the term forms both sides share: the direct
    # rule below keeps ingest itself off the engine)
    "m1nd.ingest": ("m1nd.store", "m1nd.mcp", "m1nd.cli", "m1nd.memory", "m1nd.codegraph", "m1nd.tools",
                    "m1nd.workspace"),
    "m1nd.tools": ("m1nd.mcp", "m1nd.cli"),
    "m1nd.workspace": ("m1nd.mcp", "m1nd.cli", "m1nd.tools"),
    "m1nd.codegraph": ("m1nd.mcp", "m1nd.cli", "m1nd.tools"),
    "m1nd.memory": ("m1nd.mcp", "m1nd.cli", "m1nd.tools"),
    "m1nd.perspectives": ("m1nd.mcp", "m1nd.cli", "m1nd.tools"),
}


@pytest.mark.parametrize("prefix", sorted(TRANSITIVE_FORBIDDEN))
def test_layers_do_not_reach_up(prefix: str) -> None:
    bad = []
    for mod in GRAPH:
        if _under(mod, (prefix,)):
            for target in sorted(_reach(mod)):
                if _under(target, TRANSITIVE_FORBIDDEN[prefix]):
                    bad.append(f"{mod} reaches {target}")
    assert not bad, bad


def test_ingest_does_not_import_the_engine() -> None:
    bad = [m for m in GRAPH if _under(m, ("m1nd.ingest",)) and "m1nd.graph.engine" in GRAPH[m]]
    assert not bad, bad


# The adapters (ARCHITECTURE.md): mcp and cli stand on the tool layer and the workspace; they never import each
# other, the store, the native core or tree-sitter (directly).
ADAPTER_FORBIDDEN = {
    "m1nd.mcp": ("m1nd.cli", "m1nd.store", "m1nd_core", "tree_sitter", "apsw"),
    "m1nd.cli": ("m1nd.mcp", "m1nd.store", "m1nd_core", "tree_sitter", "apsw"),
}
# `m1nd serve` is a CLI command that starts the MCP face: launching it is the one edge between the two adapters.
ADAPTER_EDGES_ALLOWED = {("m1nd.cli.serve", "m1nd.mcp.stdio"), ("m1nd.cli.serve", "m1nd.mcp.http")}


@pytest.mark.parametrize("adapter", sorted(ADAPTER_FORBIDDEN))
def test_adapters_rule(adapter: str) -> None:
    bad = []
    for mod in PATHS:
        if not _under(mod, (adapter,)):
            continue
        for target in sorted(GRAPH[mod] | _third_party(mod)):
            if _under(target, ADAPTER_FORBIDDEN[adapter]) and (mod, target) not in ADAPTER_EDGES_ALLOWED:
                bad.append(f"{mod} -> {target}")
    assert not bad, bad


# Services the adapters reach only through the workspace (or a tool): (adapter module or package, service
# package) pairs still imported directly, a shrinking list (an entry no longer used fails the test).
SERVICES = ("m1nd.codegraph", "m1nd.memory", "m1nd.perspectives", "m1nd.evaluation", "m1nd.graph", "m1nd.ingest",
            "m1nd.diagram", "m1nd.embed_worker")
ADAPTER_SERVICE_EDGES = {
    # `m1nd eval` runs the evaluation harness (no tool exists for it)
    ("m1nd.cli.evaluation", "m1nd.evaluation"),
    # `m1nd graph --format svg` renders a tool result through Graphviz (presentation of an answer, not a query)
    ("m1nd.cli.graph", "m1nd.diagram"),
}


def _service_edges() -> set[tuple[str, str]]:
    edges = set()
    for mod in PATHS:
        if _under(mod, ("m1nd.cli", "m1nd.mcp")):
            for target in GRAPH[mod]:
                for svc in SERVICES:
                    if _under(target, (svc,)):
                        edges.add((mod, svc))
    return edges


def _allowed_by(edge: tuple[str, str]) -> tuple[str, str] | None:
    mod, svc = edge
    return next(((a, s) for a, s in ADAPTER_SERVICE_EDGES if s == svc and _under(mod, (a,))), None)


def test_adapters_reach_services_through_the_workspace() -> None:
    edges = _service_edges()
    bad = sorted(e for e in edges if _allowed_by(e) is None)
    assert not bad, f"adapters importing services directly (go through Workspace or a tool): {bad}"
    gone = sorted(ADAPTER_SERVICE_EDGES - {_allowed_by(e) for e in edges})
    assert not gone, f"no longer imported: remove from ADAPTER_SERVICE_EDGES: {gone}"


def test_public_call_tool_is_the_tool_layers() -> None:
    from m1nd.tools.registry import call_tool

    assert m1nd.call_tool is call_tool


# -- SQL placement ----------------------------------------------------------------------------------------------
SQL = re.compile(r"\b(SELECT\b[\s\S]+?\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
                 r"CREATE\s+(TEMP\s+|UNIQUE\s+|VIRTUAL\s+)?(TABLE|INDEX|TRIGGER|VIEW)|DROP\s+(TABLE|INDEX)|"
                 r"ALTER\s+TABLE|PRAGMA\s+\w+|REPLACE\s+INTO)\b")


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def sql_statements(mod: str) -> int:
    """String literals (f-string parts included, docstrings not) that hold an SQL statement."""
    tree = TREES[mod]
    docs = _docstring_nodes(tree)
    n = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "?"
                           for v in node.values)
            n += bool(SQL.search(text))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            n += bool(SQL.search(node.value))
    # the parts of an f-string are Constant nodes too: do not count a statement twice
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            n -= sum(1 for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
                     and SQL.search(v.value))
    return n


# Modules outside store/ that still hold SQL: a shrinking list (an entry without SQL fails the test below). Empty
# since the code vectors' statements moved to store/node_vectors_repo (issue 16).
SQL_OUTSIDE_STORE: set[str] = set()


def test_sql_only_in_store() -> None:
    bad = {m: sql_statements(m) for m in PATHS
           if not _under(m, ("m1nd.store",)) and m not in SQL_OUTSIDE_STORE and sql_statements(m)}
    assert not bad, f"SQL outside store/ (move it into a repository there): {bad}"


def test_sql_allow_list_shrinks() -> None:
    clean = sorted(m for m in SQL_OUTSIDE_STORE if m not in PATHS or not sql_statements(m))
    assert not clean, f"no SQL left in {clean}: remove them from SQL_OUTSIDE_STORE"


def test_sql_detector_sees_statements() -> None:
    assert sql_statements("m1nd.store.graph_repo") > 10


# Timing a call is the tool layer's job (issue 16 item 3: the registry adds ``elapsed_ms`` to the result of every
# tool declared ``timed``); services answer with data only. (The ingest report was the last exception: its duration
# is no longer stored with the root; the tool, and the watcher for ``m1nd watch``, time the call.)
TIMED_SERVICES_ALLOWED: set[str] = set()


def _mentions_elapsed(mod: str) -> bool:
    return any(isinstance(node, ast.Constant) and node.value == "elapsed_ms" for node in ast.walk(TREES[mod]))


def test_services_do_not_time_themselves() -> None:
    bad = sorted(m for m in PATHS if _under(m, SERVICES) and m not in TIMED_SERVICES_ALLOWED
                 and _mentions_elapsed(m))
    assert not bad, f"services reporting elapsed_ms (declare the tool timed=True instead): {bad}"
    stale = sorted(m for m in TIMED_SERVICES_ALLOWED if m not in PATHS or not _mentions_elapsed(m))
    assert not stale, f"no elapsed_ms left in {stale}: remove them from TIMED_SERVICES_ALLOWED"


def test_no_print_in_library() -> None:
    offenders = []
    for mod, tree in TREES.items():
        if mod.startswith("m1nd.cli") or mod == "m1nd.__main__":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
                kws = {k.arg: k.value for k in node.keywords}
                file_arg = kws.get("file")
                if not (isinstance(file_arg, ast.Attribute) and file_arg.attr == "stderr"):
                    offenders.append(f"{mod}:{node.lineno}")
    assert not offenders, offenders


# -- module size (issue 16 item 5: one idea per module) ---------------------------------------------------------------
MAX_LINES = 600
#: modules still over the limit without a written reason, each a known split to do; the list only shrinks
OVERSIZED_ALLOWED: set[str] = set()


def _oversized() -> dict[str, int]:
    out = {}
    for m, p in PATHS.items():
        n = len(p.read_text(encoding="utf-8").splitlines())
        doc = ast.get_docstring(TREES[m]) or ""
        if n > MAX_LINES and "Why one module of this size" not in doc:
            out[m] = n
    return out


def test_large_modules_say_why() -> None:
    extra = {m: n for m, n in _oversized().items() if m not in OVERSIZED_ALLOWED}
    assert not extra, (f"modules over {MAX_LINES} lines without a 'Why one module of this size' paragraph in their "
                       f"docstring: {extra}; split them by idea, or write the reason at the top")


def test_oversized_allow_list_shrinks() -> None:
    stale = OVERSIZED_ALLOWED - set(_oversized())
    assert not stale, f"remove from OVERSIZED_ALLOWED (now within the limit or explained): {sorted(stale)}"


# -- the composition root (issue 16 item 2): no attribute injection, no module-global registries ----------------------
# A service gets its collaborators from m1nd.workspace (constructor arguments), never by another module writing its
# private attributes or by registering into a module-level list that readers iterate.
_MUTATORS = {"append", "add", "remove", "discard", "pop", "clear", "update", "setdefault", "extend", "insert",
             "popitem"}
_CONTAINERS = {"list", "dict", "set", "WeakSet", "WeakValueDictionary", "WeakKeyDictionary", "defaultdict",
               "OrderedDict", "deque"}
#: module-level containers changed at run time, each with why it is process state rather than a registry a service
#: should be given (caches of pure functions, at-exit bookkeeping, a declarative table filled at import)
MODULE_STATE_ALLOWED = {
    ("m1nd.codegraph.vector_startup", "_preloads"): "`m1nd serve`'s early model loads (before any Workspace), "
                                                    "joined at exit",
    ("m1nd.memory.query_process", "_instances"): "at-exit bookkeeping: live query children are killed at exit",
    ("m1nd.memory.query_process", "_indexes"): "the query child's own process state (one per child process)",
    ("m1nd.memory.query_process", "_states"): "the query child's own process state (one per child process)",
    ("m1nd.memory.query_process", "_dbs"): "the query child's own process state (one per child process)",
    ("m1nd.memory.vectors", "_live"): "at-exit bookkeeping: open indexes are saved at exit",
    ("m1nd.memory.embeddings", "_server"): "the embedder is chosen once per process (one ONNX session)",
    ("m1nd.memory.embeddings", "_remote"): "the embedder is chosen once per process (one ONNX session)",
    ("m1nd.memory.embeddings", "_stderr_seen"): "print-once notices of this process",
    ("m1nd.memory.semantic", "_printed"): "print-once notices of this process",
    ("m1nd.ingest.treesitter", "_languages"): "cache of loaded grammars (pure)",
    ("m1nd.ingest.treesitter", "_queries"): "cache of compiled queries (pure)",
    ("m1nd.ingest.terms", "_TABLE"): "cache of folded words (pure; the native table made on first use)",
    ("m1nd.ingest.extract", "_loaded"): "cache of imported extractor modules (pure)",
    ("m1nd.tools.registry", "TOOLS"): "the tool declarations, filled at import by each tool module, read-only after",
}


def module_state(tree: ast.Module) -> set[str]:
    """Names of module-level containers (``X = []``, ``X: dict = {}``, ``X = WeakSet()``…) that a function of the
    module changes (``X.append(…)``, ``X[k] = …``, ``X += …``); constants never changed are not state."""
    containers = set()
    for st in tree.body:
        targets, value = (st.targets, st.value) if isinstance(st, ast.Assign) else (
            ([st.target], st.value) if isinstance(st, ast.AnnAssign) and st.value is not None else ([], None))
        call = value.func if isinstance(value, ast.Call) else None
        if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)) or (
                call is not None and (getattr(call, "id", None) or getattr(call, "attr", None)) in _CONTAINERS):
            containers.update(t.id for t in targets if isinstance(t, ast.Name))
    changed = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for n in ast.walk(fn):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS
                    and isinstance(n.func.value, ast.Name)):
                changed.add(n.func.value.id)
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AugAssign) else []
            for t in targets:
                base = t.value if isinstance(t, ast.Subscript) else t
                if isinstance(base, ast.Name) and (base is not t or isinstance(n, ast.AugAssign)):
                    changed.add(base.id)
    return containers & changed


# Module-level names a function rebinds through ``global`` (``global _X; _X = …``): module state too, which the
# container detector above does not see (the name is reassigned, not changed in place). Each is process state on
# purpose, with its reason; a new one fails the test until it is given to an object the composition root builds, or
# listed here.
GLOBAL_REBINDS_ALLOWED = {
    ("m1nd.codegraph.queries", "_SEM_POOL"): "the process's two semantic-query threads, made on first use and shared "
                                             "by every CodeGraph of the process (threads are a process resource; a "
                                             "pool per graph would multiply them)",
    ("m1nd.codegraph.ingest_process", "_HOOKS"): "the ingest child's own process state: the hooks its pool "
                                                 "initializer makes from the event and pipe it receives (those reach a "
                                                 "process only at its start)",
    ("m1nd.memory.embeddings", "_chosen"): "the embedder is chosen once per process (one ONNX session), before any "
                                           "Workspace exists (`m1nd serve` starts the model load first)",
    ("m1nd.memory.embeddings", "_noticed"): "print-once notice of this process (no model installed)",
}


def global_rebinds(tree: ast.Module) -> set[str]:
    """Names a function declares ``global`` and assigns (``global _X`` then ``_X = …``, ``_X += …``, ``del _X``)."""
    out = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        declared = {name for n in ast.walk(fn) if isinstance(n, ast.Global) for name in n.names}
        if not declared:
            continue
        for n in ast.walk(fn):
            targets = (n.targets if isinstance(n, (ast.Assign, ast.Delete)) else
                       [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else [])
            for t in targets:
                names = [e for e in t.elts] if isinstance(t, ast.Tuple) else [t]
                out.update(e.id for e in names if isinstance(e, ast.Name) and e.id in declared)
    return out


def _private_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("_")


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def attribute_injections(tree: ast.Module) -> list[str]:
    """Writes (and ``__dict__`` reads) of another object's private attributes: ``cg._x = …``, ``setattr(cg, "_x",
    …)``, ``cg.__dict__["_x"] = …``, ``cg.__dict__.get("_x")``. An object's own ``self._x`` is its business."""
    out = []
    for n in ast.walk(tree):
        targets = (n.targets if isinstance(n, ast.Assign) else [n.target]
                   if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else [])
        for t in targets:
            if (isinstance(t, ast.Attribute) and t.attr.startswith("_") and not t.attr.startswith("__")
                    and not _is_self(t.value)):
                out.append(f"{n.lineno}: {ast.unparse(t)} = …")
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "setattr" and len(n.args) >= 2 and (
                not _is_self(n.args[0]) and _private_literal(n.args[1])):
            out.append(f"{n.lineno}: {ast.unparse(n)}")
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "__dict__" and (
                not _is_self(n.value.value) and _private_literal(n.slice)):
            out.append(f"{n.lineno}: {ast.unparse(n)}")
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" and n.args
                and isinstance(n.func.value, ast.Attribute) and n.func.value.attr == "__dict__"
                and not _is_self(n.func.value.value) and _private_literal(n.args[0])):
            out.append(f"{n.lineno}: {ast.unparse(n)}")
    return out


def test_no_attribute_injection() -> None:
    bad = {m: found for m, tree in TREES.items() if (found := attribute_injections(tree))}
    assert not bad, (f"private attributes set (or read through __dict__) from outside their object: {bad}; give the "
                     f"collaborator to the object's constructor from the composition root (m1nd.workspace)")


def test_no_module_global_registries() -> None:
    found = {(m, name) for m, tree in TREES.items() for name in module_state(tree)}
    extra = sorted(found - set(MODULE_STATE_ALLOWED))
    assert not extra, (f"module-level containers changed at run time: {extra}; a registry of providers or instances "
                       f"belongs to an object the composition root (m1nd.workspace) builds and hands over. Process "
                       f"state on purpose (a pure cache, at-exit bookkeeping) goes into MODULE_STATE_ALLOWED with "
                       f"its reason")
    stale = sorted(set(MODULE_STATE_ALLOWED) - found)
    assert not stale, f"no longer module state: {stale}; remove them from MODULE_STATE_ALLOWED"


def test_no_unlisted_global_rebinds() -> None:
    found = {(m, name) for m, tree in TREES.items() for name in global_rebinds(tree)}
    extra = sorted(found - set(GLOBAL_REBINDS_ALLOWED))
    assert not extra, (f"module-level names rebound through `global`: {extra}; an object the composition root "
                       f"(m1nd.workspace) builds should own it. Process state on purpose goes into "
                       f"GLOBAL_REBINDS_ALLOWED with its reason")
    stale = sorted(set(GLOBAL_REBINDS_ALLOWED) - found)
    assert not stale, f"no longer rebound through `global`: {stale}; remove them from GLOBAL_REBINDS_ALLOWED"


def test_composition_root_detectors_see_the_patterns() -> None:
    """The detectors above catch what issue 16 removed (vectors injected into the CodeGraph, a provider list with
    its epoch), and leave constants and an object's own attributes alone."""
    removed = ast.parse(
        "_PROVIDERS: list = []\n_EPOCH = [0]\n_instances = WeakSet()\nKINDS = {'a': 1}\nNAMES = ['x']\n"
        "def register(fn):\n    _PROVIDERS.append(fn)\n    _EPOCH[0] += 1\n    _instances.add(fn)\n"
        "def read():\n    return KINDS['a'], NAMES[0], len(_PROVIDERS)\n"
        "def attach(cg, cv):\n    cg._code_vectors = cv\n    setattr(cg, '_warm', 1)\n"
        "    cg.__dict__['_x'] = 1\n    return cg.__dict__.get('_code_vectors')\n"
        "class C:\n    def __init__(self):\n        self._own = 1\n        setattr(self, '_y', 2)\n")
    assert module_state(removed) == {"_PROVIDERS", "_EPOCH", "_instances"}
    rebinding = ast.parse(
        "_POOL = None\n_A = _B = 0\n_SEEN = False\n"
        "def pool():\n    global _POOL\n    if _POOL is None:\n        _POOL = object()\n    return _POOL\n"
        "def both():\n    global _A, _B\n    _A, _B = 1, 2\n"
        "def count():\n    global _SEEN\n    print(_SEEN)\n"
        "def local():\n    _POOL = 1\n    return _POOL\n")
    assert global_rebinds(rebinding) == {"_POOL", "_A", "_B"}  # _SEEN is only read; local() binds a local
    assert sorted(int(s.split(":")[0]) for s in attribute_injections(removed)) == [13, 14, 15, 16]
