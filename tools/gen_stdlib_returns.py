"""Generate ``python/m1nd/ingest/resolve/data/stdlib_returns.json.gz``: what the standard library's functions and
methods return, read from typeshed's ``stdlib/`` stubs (issue 12 item 5).

The resolver reads the table when a call's result type is needed and the callee is a standard-library function of
the graph whose source says nothing usable (no annotation, a call into C, a cache lookup): ``re.compile`` ->
``re.Pattern``, ``logging.getLogger`` -> ``logging.Logger``. Source annotations and inferred returns still win.

Typeshed is taken from the ``mypy`` wheel (``mypy/typeshed/stdlib``), a development dependency of this project;
it is needed only to regenerate the table, never at run time. Reproduce with the pinned version::

    pip install mypy==2.4.1
    python tools/gen_stdlib_returns.py            # finds mypy's typeshed, writes the table
    python tools/gen_stdlib_returns.py --stubs DIR --out FILE

The stubs are parsed with ``ast``. For each module (stub path -> dotted name) and each function or method
(``name`` / ``Class.name`` / ``Outer.Inner.name``) the return annotation becomes one qualified class name (the
module that defines the class in the stubs, re-exports and aliases followed) or a union ``a.B|c.D``:

- ``X | None`` / ``Optional[X]`` -> ``X`` (``None`` alone: no entry); overloads and definitions in several
  ``sys.platform`` branches -> the union of their returns;
- generic parameters dropped (``Pattern[str]`` -> ``re.Pattern``); ``Literal[...]`` -> the literal's builtin type;
  ``Self`` -> the class; ``TypeGuard`` / ``TypeIs`` -> ``builtins.bool``;
- ``sys.version_info`` conditions are decided for the newest Python (``NEWEST``); ``renamed`` lists the other
  names a class has in other versions (``_AbstractEventLoopPolicy`` was ``AbstractEventLoopPolicy``), which the
  resolver tries when the graph's module lacks the newest name;
- a constrained type variable (``AnyStr``) -> the union of its constraints;
- no entry when any alternative is not one known class: ``Any``, another type variable, ``type[X]`` (a class object),
  a callable, a protocol, a class of ``typing`` (``IO[bytes]``, ``Mapping``: interfaces the returned objects need
  not derive from), a class whose instances answer any attribute (it defines ``__getattr__``, e.g. a module
  object: ``m.f()`` is no method of its class).

Typeshed is licensed under the Apache License 2.0 (and MIT for some parts), see
https://github.com/python/typeshed/blob/main/LICENSE; the generated table records the typeshed source it came from.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

#: the Python version ``sys.version_info`` conditions are decided for (the newest typeshed describes)
NEWEST = (3, 14)
OUT = Path(__file__).resolve().parent.parent / "python/m1nd/ingest/resolve/data/stdlib_returns.json.gz"
FORMAT = 1

_NONE = "None"
#: special forms that stand for no class (a return typed so says nothing about the receiver)
_UNKNOWN_FORMS = frozenset(
    {"Any", "Never", "NoReturn", "Callable", "Type", "type", "Concatenate", "Unpack", "TypeVar", "ParamSpec",
     "TypeVarTuple", "Protocol", "Generic"}
)
_TYPING = frozenset({"typing", "typing_extensions", "builtins", "_typeshed", "collections.abc", "_collections_abc"})


class Unknown(Exception):
    """A return annotation that names no known class."""


@dataclass
class Module:
    name: str
    #: top-level name -> ("class", node) | ("import", module, name) | ("module", module) | ("alias", expr)
    #: | ("typevar", constraints) | ("var",) | ("func",)
    names: dict[str, tuple] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)
    #: qualified function name ("f", "C.m", "C.D.m") -> return annotations (None: none written) and its class
    funcs: dict[str, list[tuple[ast.expr | None, str | None]]] = field(default_factory=dict)
    #: class name -> other names module-level assignments give it in some version branch (``AbstractEventLoopPolicy
    #: = _AbstractEventLoopPolicy`` under ``sys.version_info < (3, 14)``): the name an older source defines it by
    renamed: dict[str, list[str]] = field(default_factory=dict)
    #: qualified class name -> True when its instances say nothing of their class: it defines ``__getattr__``
    #: (instances answer any attribute) or is a ``Protocol`` (any class with those methods fits)
    classes: dict[str, bool] = field(default_factory=dict)


def _cond(test: ast.expr) -> bool | None:
    """Value of an ``if`` condition of a stub: ``sys.version_info`` comparisons for NEWEST, None for anything
    else (``sys.platform``: both branches are kept)."""
    if isinstance(test, ast.BoolOp):
        vals = [_cond(v) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in vals else (None if None in vals else True)
        return True if True in vals else (None if None in vals else False)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        v = _cond(test.operand)
        return None if v is None else not v
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and ast.unparse(test.left) == "sys.version_info"
        and isinstance(test.comparators[0], ast.Tuple)
    ):
        try:
            want = tuple(int(ast.literal_eval(e)) for e in test.comparators[0].elts)
        except (ValueError, TypeError):
            return None
        have = NEWEST[: len(want)]
        op = test.ops[0]
        table = {ast.GtE: have >= want, ast.Gt: have > want, ast.Lt: have < want, ast.LtE: have <= want,
                 ast.Eq: have == want, ast.NotEq: have != want}
        return table.get(type(op))
    return None


def _live(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of a body that hold for NEWEST (both branches of undecided conditions), flattened."""
    out: list[ast.stmt] = []
    for st in body:
        if isinstance(st, ast.If):
            v = _cond(st.test)
            if v is not False:
                out.extend(_live(st.body))
            if v is not True:
                out.extend(_live(st.orelse))
        elif isinstance(st, ast.Try):
            out.extend(_live(st.body))
        else:
            out.append(st)
    return out


def _resolve_relative(mod: str, is_pkg: bool, level: int, target: str | None) -> str:
    parts = mod.split(".")
    if not is_pkg:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    base = ".".join(parts)
    return f"{base}.{target}" if target and base else (target or base)


def parse_module(name: str, text: str, is_pkg: bool) -> Module:
    """One stub module's names, star imports, classes and functions with their return annotations."""
    m = Module(name)
    tree = ast.parse(text)

    def walk_class(node: ast.ClassDef, prefix: str) -> None:
        qual = f"{prefix}{node.name}"
        m.classes[qual] = any(ast.unparse(b).split("[")[0].rsplit(".", 1)[-1] == "Protocol" for b in node.bases)
        for st in _live(node.body):
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if st.name == "__getattr__":
                    m.classes[qual] = True
                if isinstance(st, ast.AsyncFunctionDef):
                    continue  # (calling it gives a coroutine)
                m.funcs.setdefault(f"{qual}.{st.name}", []).append((st.returns, qual))
            elif isinstance(st, ast.ClassDef):
                walk_class(st, qual + ".")

    for st in _live(tree.body):
        if isinstance(st, ast.ClassDef):
            m.names[st.name] = ("class",)
            walk_class(st, "")
        elif isinstance(st, ast.FunctionDef):
            m.names[st.name] = ("func",)
            m.funcs.setdefault(st.name, []).append((st.returns, None))
        elif isinstance(st, ast.AsyncFunctionDef):
            m.names[st.name] = ("func",)
        elif isinstance(st, ast.Import):
            for a in st.names:
                if a.asname:
                    m.names[a.asname] = ("module", a.name)
                else:
                    m.names.setdefault(a.name.split(".")[0], ("module", a.name.split(".")[0]))
        elif isinstance(st, ast.ImportFrom):
            src = _resolve_relative(name, is_pkg, st.level, st.module) if st.level else (st.module or "")
            for a in st.names:
                if a.name == "*":
                    m.stars.append(src)
                else:
                    m.names[a.asname or a.name] = ("import", src, a.name)
        elif isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            value = st.value
            ann = st.annotation if isinstance(st, ast.AnnAssign) else None
            for t in targets:
                if not isinstance(t, ast.Name):
                    continue
                if isinstance(value, ast.Call) and ast.unparse(value.func).rsplit(".", 1)[-1] in (
                    "TypeVar", "ParamSpec", "TypeVarTuple", "NewType",
                ):
                    # a constrained type variable (``AnyStr = TypeVar("AnyStr", str, bytes)``) is one of its
                    # constraints; any other (unconstrained, bound, NewType) is not known
                    cons = value.args[1:] if ast.unparse(value.func).endswith("TypeVar") else []
                    m.names[t.id] = ("typevar", cons)
                elif value is not None and (ann is None or ast.unparse(ann).endswith("TypeAlias")):
                    m.names[t.id] = ("alias", value)
                else:
                    m.names[t.id] = ("var",)
        elif type(st).__name__ == "TypeAlias":  # ``type X = ...`` (Python 3.12+ syntax)
            m.names[st.name.id] = ("alias", st.value)  # type: ignore[attr-defined]
    for st in _every_branch(tree.body):
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Name) and st.value.id in m.classes:
            for t in st.targets:
                if isinstance(t, ast.Name) and t.id != st.value.id:
                    m.renamed.setdefault(st.value.id, []).append(t.id)
    return m


def _every_branch(body: list[ast.stmt]) -> list[ast.stmt]:
    """Every top-level statement of a stub, under any condition."""
    out: list[ast.stmt] = []
    for st in body:
        if isinstance(st, ast.If):
            out.extend(_every_branch(st.body))
            out.extend(_every_branch(st.orelse))
        else:
            out.append(st)
    return out


class Stubs:
    """Every stub module of a typeshed ``stdlib/`` tree and the resolution of names to defining classes."""

    def __init__(self, modules: dict[str, Module]) -> None:
        self.modules = modules

    @classmethod
    def from_dir(cls, root: Path) -> Stubs:
        modules: dict[str, Module] = {}
        for p in sorted(root.rglob("*.pyi")):
            rel = p.relative_to(root).with_suffix("")
            parts = list(rel.parts)
            is_pkg = parts[-1] == "__init__"
            if is_pkg:
                parts = parts[:-1]
            if not parts or any(not x.isidentifier() for x in parts):
                continue
            name = ".".join(parts)
            modules[name] = parse_module(name, p.read_text(encoding="utf-8"), is_pkg)
        return cls(modules)

    def lookup(self, mod: str, name: str, depth: int = 0) -> tuple[str, str, tuple] | None:
        """(module, name, entry) where ``name`` seen from module ``mod`` is defined (imports, aliases to plain
        names and star imports followed); None when not found."""
        if depth > 20:
            return None
        m = self.modules.get(mod)
        if m is None:
            return None
        got = m.names.get(name)
        if got is None:
            for s in m.stars:
                found = self.lookup(s, name, depth + 1)
                if found is not None:
                    return found
            if f"{mod}.{name}" in self.modules:
                return mod, name, ("module", f"{mod}.{name}")
            return None
        if got[0] == "import":
            if f"{got[1]}.{got[2]}" in self.modules:
                return mod, name, ("module", f"{got[1]}.{got[2]}")
            found = self.lookup(got[1], got[2], depth + 1)
            return found if found is not None else (got[1], got[2], ("missing",))
        return mod, name, got

    def types(self, mod: str, node: ast.expr | None, cls: str | None, depth: int = 0) -> set[str]:
        """The qualified classes annotation ``node`` of module ``mod`` names (``None`` for None); raises Unknown."""
        if node is None or depth > 12:
            raise Unknown
        if isinstance(node, ast.Constant):
            if node.value is None:
                return {_NONE}
            if isinstance(node.value, str):  # a forward reference
                return self.types(mod, ast.parse(node.value, mode="eval").body, cls, depth + 1)
            raise Unknown
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.types(mod, node.left, cls, depth + 1) | self.types(mod, node.right, cls, depth + 1)
        if isinstance(node, ast.Subscript):
            head = self._special(mod, node.value)
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if head in ("Optional", "Union"):
                out: set[str] = set()
                for a in args:
                    out |= self.types(mod, a, cls, depth + 1)
                return out
            if head == "Literal":
                return {_literal_type(a) for a in args}
            if head in ("Annotated", "Final", "ClassVar", "Required", "NotRequired", "ReadOnly"):
                return self.types(mod, args[0], cls, depth + 1)
            if head in ("TypeGuard", "TypeIs"):
                return {"builtins.bool"}
            return self.types(mod, node.value, cls, depth + 1)  # a generic class: its parameters dropped
        if isinstance(node, (ast.Name, ast.Attribute)):
            head = self._special(mod, node)
            if head == "Self":
                if cls is None:
                    raise Unknown
                return {f"{mod}.{cls}"}
            if head == "LiteralString":
                return {"builtins.str"}
            if head is not None:
                raise Unknown  # Any, Never, Callable, type[...] ...
            return self._class(mod, node, depth)
        raise Unknown

    def _where(self, mod: str, node: ast.expr) -> tuple[str, str, tuple] | None:
        if isinstance(node, ast.Name):  # (then the builtins every module sees)
            return self.lookup(mod, node.id) or self.lookup("builtins", node.id)
        if isinstance(node, ast.Attribute):
            inner = self._where(mod, node.value)
            if inner is None or inner[2][0] != "module":
                return None
            return self.lookup(inner[2][1], node.attr)
        return None

    def _special(self, mod: str, node: ast.expr) -> str | None:
        """The typing special form a name denotes (``Optional``, ``Any``, ``Self`` ...), None for a class."""
        where = self._where(mod, node)
        if where is None:
            return None
        dmod, dname, entry = where
        if dmod in _TYPING and entry[0] in ("var", "missing") or (dmod, dname) == ("builtins", "type"):
            return dname
        if entry[0] == "class" and dmod in ("typing", "typing_extensions") and dname in _UNKNOWN_FORMS:
            return dname
        return None

    def _class(self, mod: str, node: ast.expr, depth: int) -> set[str]:
        where = self._where(mod, node)
        if where is None:
            raise Unknown
        dmod, dname, entry = where
        if entry[0] == "class":
            if dmod in ("typing", "typing_extensions"):
                # the type system's generic interfaces (``IO[bytes]``, ``Mapping``): the objects returned are of
                # other classes, which need not derive from them (``ZipFile.open`` gives a ``ZipExtFile``)
                raise Unknown
            if self.modules[dmod].classes.get(dname):
                raise Unknown  # a protocol, or instances answer any attribute (``__getattr__``): class not known
            return {f"{dmod}.{dname}"}
        if entry[0] == "alias":  # ``_Reader: TypeAlias = A | B``
            return self.types(dmod, entry[1], None, depth + 1)
        if entry[0] == "typevar" and entry[1]:  # ``-> AnyStr``: one of its constraints (``str | bytes``)
            out: set[str] = set()
            for c in entry[1]:
                out |= self.types(dmod, c, None, depth + 1)
            return out
        raise Unknown

    def renamed(self) -> dict[str, list[str]]:
        """Qualified class -> the other qualified names its module gives it in some Python version (sorted)."""
        return {
            f"{mod}.{cls}": sorted({f"{mod}.{n}" for n in names})
            for mod, m in sorted(self.modules.items())
            for cls, names in sorted(m.renamed.items())
        }

    def returns(self) -> dict[str, dict[str, str]]:
        """module -> qualified function name -> its return: a class or a union ``a.B|c.D``."""
        out: dict[str, dict[str, str]] = {}
        for mod, m in sorted(self.modules.items()):
            table: dict[str, str] = {}
            for qual, anns in sorted(m.funcs.items()):
                try:
                    got: set[str] = set()
                    for ann, cls in anns:
                        got |= self.types(mod, ann, cls)
                except (Unknown, SyntaxError):
                    continue
                got.discard(_NONE)
                if got:
                    table[qual] = "|".join(sorted(got))
            if table:
                out[mod] = table
        # what a module imports from another (``from _asyncio import get_event_loop as get_event_loop``) may be
        # defined by the module's source: the same entries under its name
        for mod, m in sorted(self.modules.items()):
            for local, entry in m.names.items():
                if entry[0] != "import":
                    continue
                found = self.lookup(mod, local)
                if found is None or found[0] == mod or found[2][0] not in ("func", "class"):
                    continue
                src = out.get(found[0], {})
                got = {k: v for k, v in src.items() if k == found[1] or k.startswith(found[1] + ".")}
                for k, v in got.items():
                    out.setdefault(mod, {}).setdefault(local + k[len(found[1]):], v)
        return out


def _literal_type(node: ast.expr) -> str:
    if isinstance(node, ast.Constant):
        v = node.value
        if v is None:
            return _NONE
        return f"builtins.{type(v).__name__}"
    raise Unknown  # (an enum member: not followed)


def find_typeshed() -> tuple[Path, str]:
    """mypy's bundled ``typeshed/stdlib`` and a label naming its source."""
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec("mypy")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("mypy is not installed: pip install mypy==2.4.1 (or pass --stubs)")
    root = Path(next(iter(spec.submodule_search_locations))) / "typeshed" / "stdlib"
    return root, f"typeshed stdlib bundled with mypy {importlib.metadata.version('mypy')}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--stubs", type=Path, help="a typeshed stdlib/ directory (default: mypy's)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    if args.stubs:
        root, label = args.stubs, f"typeshed stdlib from {args.stubs.name}"
    else:
        root, label = find_typeshed()
    stubs = Stubs.from_dir(root)
    table = stubs.returns()
    doc = {
        "format": FORMAT,
        "source": label,
        "licence": "typeshed: Apache License 2.0 (parts MIT), https://github.com/python/typeshed",
        "newest": list(NEWEST),
        "returns": table,
        "renamed": stubs.renamed(),
    }
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as gz:
        gz.write(raw)  # (mtime 0: the same stubs give the same bytes)
    n = sum(len(v) for v in table.values())
    print(f"{args.out}: {len(table)} modules, {n} functions and methods, {args.out.stat().st_size} bytes ({label})")


if __name__ == "__main__":
    main()
