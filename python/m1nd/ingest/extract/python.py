"""Python extractor (graph.md §6): classes, functions (async, decorated, nested, ``name = lambda …``), imports,
calls, bases, annotation and decorator references. One tree-sitter query, one pass over its captures."""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import Any

from m1nd.ingest import treesitter as ts
from m1nd.ingest.extract._common import (
    ScopeTypes,
    config_tokens,
    extend_texpr,
    finish_defs,
    first_paragraph,
    import_binding,
    make_def,
    parse_or_blob,
    sha256,
    signature,
)
from m1nd.ingest.extract.python_aliases import dynamic_imports, keep_dynamic_imports, module_aliases
from m1nd.ingest.extract.python_flow import container_writes, narrowed_type
from m1nd.ingest.extract.python_returns import infer_returns
from m1nd.ingest.extract.python_types import (
    DOTTED,
    UNKNOWN,
    alias_call,
    annotation_type,
    collect_types,
    dotted,
    param_names,
    value_type,
)

EXTRACTOR_VERSION = 15
LANG = "python"


def _words(text: str) -> frozenset[str]:
    """A frozenset from a whitespace-separated word list (keeps long tables readable)."""
    return frozenset(text.split())


QUERY = r"""
(class_definition name: (identifier) @class)
(function_definition name: (identifier) @fn)
(type_alias_statement left: (type (identifier) @alias))
(assignment left: (identifier) @lam right: (lambda))
(call function: (identifier) @call)
(call function: (attribute) @acall)
(decorator) @dec
(import_statement) @imp
(import_from_statement) @impf
(class_definition superclasses: (argument_list) @bases)
(typed_parameter type: (type) @type)
(typed_default_parameter type: (type) @type)
(function_definition return_type: (type) @type)
(assignment type: (type) @type)
(assignment left: (identifier) @aname)
(assignment left: (attribute object: (identifier) @aobj))
(assignment left: (pattern_list) @apat)
(assignment left: (tuple_pattern) @apat)
(assignment left: (list_pattern) @apat)
(for_statement left: (_) @bind)
(for_in_clause left: (_) @bind)
(as_pattern_target) @bind
(named_expression name: (identifier) @bind)
(lambda_parameters) @bind
(global_statement) @glob
(nonlocal_statement) @glob
(parameters (typed_parameter (identifier) @ptyped))
(parameters (typed_default_parameter name: (identifier) @ptyped))
(class_definition body: (block (expression_statement (assignment left: (identifier) @cname))))
(class_definition body: (block (expression_statement (assignment right: (assignment left: (identifier) @cname)))))
(return_statement) @ret
(return_statement (identifier) @retname)
(return_statement (expression_list (identifier) @retname))
(return_statement (tuple (identifier) @retname))
(yield) @yield
(yield (identifier) @retname)
"""

#: bases that never produce ``inherits`` edges (graph.md §6)
SKIP_BASES = frozenset(
    {
        "object",
        "ABC",
        "Protocol",
        "Generic",
        "NamedTuple",
        "TypedDict",
        "Enum",
        "IntEnum",
        "Flag",
        "IntFlag",
        "BaseException",
        "Exception",
        "ArithmeticError",
        "AssertionError",
        "AttributeError",
        "BufferError",
        "EOFError",
        "ImportError",
        "ModuleNotFoundError",
        "LookupError",
        "IndexError",
        "KeyError",
        "MemoryError",
        "NameError",
        "UnboundLocalError",
        "OSError",
        "IOError",
        "EnvironmentError",
        "BlockingIOError",
        "ChildProcessError",
        "ConnectionError",
        "BrokenPipeError",
        "ConnectionAbortedError",
        "ConnectionRefusedError",
        "ConnectionResetError",
        "FileExistsError",
        "FileNotFoundError",
        "InterruptedError",
        "IsADirectoryError",
        "NotADirectoryError",
        "PermissionError",
        "ProcessLookupError",
        "TimeoutError",
        "ReferenceError",
        "RuntimeError",
        "NotImplementedError",
        "RecursionError",
        "StopIteration",
        "StopAsyncIteration",
        "SyntaxError",
        "IndentationError",
        "TabError",
        "SystemError",
        "TypeError",
        "ValueError",
        "UnicodeError",
        "UnicodeDecodeError",
        "UnicodeEncodeError",
        "UnicodeTranslateError",
        "Warning",
        "UserWarning",
        "DeprecationWarning",
        "PendingDeprecationWarning",
        "SyntaxWarning",
        "RuntimeWarning",
        "FutureWarning",
        "ImportWarning",
        "UnicodeWarning",
        "BytesWarning",
        "ResourceWarning",
        "EncodingWarning",
        "ZeroDivisionError",
        "OverflowError",
        "FloatingPointError",
        "GeneratorExit",
        "KeyboardInterrupt",
        "SystemExit",
        "BaseExceptionGroup",
        "ExceptionGroup",
        "int",
        "str",
        "dict",
        "list",
        "tuple",
        "set",
        "frozenset",
        "float",
        "bytes",
        "type",
    }
)

PY_BUILTIN_TYPES = _words("""
    str bytes bytearray int float complex bool dict list tuple set frozenset object type memoryview range
    slice super property classmethod staticmethod
""")

_WSB = re.compile(rb"\s+")
_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_ISINSTANCE = re.compile(rb"isinstance\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,")
_STR_PREFIX = re.compile(r"^[rRuUbBfF]{0,2}('''|\"\"\"|'|\")")


def _docstring(body: Any) -> str:
    if body is None or body.named_child_count == 0:
        return ""
    first = body.named_child(0)
    if first.type != "expression_statement" or first.named_child_count == 0:
        return ""
    s = first.named_child(0)
    if s.type != "string":
        return ""
    text = s.text.decode("utf-8", "replace")
    m = _STR_PREFIX.match(text)
    if not m:
        return ""
    q = m.group(1)
    inner = text[m.end() :]
    inner = inner.removesuffix(q)
    return first_paragraph(inner)



def _type_names(node: Any, out: list[tuple[str, int]]) -> None:
    """Identifiers / dotted names inside an annotation (incl. subscripts); string annotations are skipped."""
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t == "identifier":
            out.append((n.text.decode("utf-8", "replace"), n.start_byte))
        elif t == "attribute":
            d = dotted(n)
            if d is not None:
                out.append((d, n.start_byte))
        elif t in ("string", "none", "integer", "float", "true", "false", "ellipsis", "comment"):
            continue
        else:
            stack.extend(n.named_children)



def extract(relpath: str, data: bytes) -> dict[str, Any]:
    blob, root = parse_or_blob(LANG, EXTRACTOR_VERSION, relpath, data)
    if root is None:
        return blob
    file_test = blob["is_test"]
    caps = ts.captures(ts.query(LANG, QUERY), root)

    defs: list[dict[str, Any]] = []
    spans: list[tuple[int, int, int]] = []
    for cap, kind in (("class", "class"), ("fn", "fn"), ("alias", "type"), ("lam", "fn")):
        for name_node in caps.get(cap, ()):
            node = name_node.parent
            if kind == "type":
                node = node.parent
            name = name_node.text.decode("utf-8", "replace")
            outer = node
            par = node.parent
            if par is not None and par.type == "decorated_definition":
                outer = par
            if kind == "type":
                sig = signature(data, node.start_byte, node.end_byte)
                doc = ""
            elif cap == "lam":  # `key = lambda item: item.name`
                lam = node.child_by_field_name("right")
                body = lam.child_by_field_name("body") if lam is not None else None
                sig = signature(data, node.start_byte, body.start_byte if body is not None else node.end_byte,
                                strip_tail=":")
                doc = ""
            else:
                body = node.child_by_field_name("body")
                sig = signature(
                    data,
                    node.start_byte,
                    body.start_byte if body is not None else node.end_byte,
                    strip_tail=":",
                )
                doc = _docstring(body)
            ret = None
            if cap == "fn":
                rt = node.child_by_field_name("return_type")
                if rt is not None:
                    ret = annotation_type(rt)
            s, e = outer.start_byte, outer.end_byte
            # test_* functions anywhere; test*/Test* (unittest style) only inside test files
            is_test = (
                kind == "fn" and (name.startswith("test_") or (file_test and name.startswith("test")))
            ) or (kind == "class" and file_test and name.startswith("Test"))
            spans.append((s, e, len(defs)))
            d = make_def(
                kind,
                name,
                outer.start_point[0] + 1,
                outer.end_point[0] + 1,
                sig,
                doc,
                sha256(data[s:e]),
                is_test,
            )
            if ret:
                d["ret"] = ret
            if cap == "fn":
                d["_node"] = node
            defs.append(d)
    owners = finish_defs(defs, spans)
    fn_nodes = {i: d.pop("_node") for i, d in enumerate(defs) if "_node" in d}

    # imports
    imports: list[dict[str, Any]] = []
    bound: set[str] = set()
    is_init = relpath.rsplit("/", 1)[-1] in ("__init__.py", "__init__.pyi")
    acall_texts = [node.text for node in caps.get("acall", ())]
    wanted = {h.decode("utf-8", "replace") for h in {t.partition(b".")[0] for t in acall_texts}}
    # returned names are typed too: a function without a return annotation returns what they hold
    wanted.update(n.text.decode("utf-8", "replace") for n in caps.get("retname", ()))
    # names called bare: a call of a variable (``F = Fraction``; a parameter) is no call of a definition
    called = {n.text.decode("utf-8", "replace") for n in caps.get("call", ())}
    wanted.update(called)
    wanted.discard("self")
    wanted.discard("cls")
    types = ScopeTypes(defs, wanted, fn_nodes, param_names, local_calls=True, unions=True, objects=True)
    local_imports: set[tuple[int, str]] = set()  # (function, name) imported inside a function
    imported: dict[str, int] = {}  # import bindings per local name (the resolver reads them file-wide)
    class_imports: list[tuple[int, str]] = []  # (class, name) imported in a class body
    for node in caps.get("imp", ()):
        line = node.start_point[0] + 1
        o = owners.owner(node.start_byte)
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                mod = child.child_by_field_name("name").text.decode("utf-8", "replace")
                alias = child.child_by_field_name("alias").text.decode("utf-8", "replace")
                bound.add(alias)
                imported[alias] = imported.get(alias, 0) + 1
                if o >= 0:
                    wanted.add(alias)  # (a local import is a variable of the function: never ``!name``)
                    types.bind(o, alias, UNKNOWN)
                    local_imports.add((o, alias))
            else:
                mod = child.text.decode("utf-8", "replace")
                alias = None
                bound.add(mod.split(".", 1)[0])
                imported[mod.split(".", 1)[0]] = imported.get(mod.split(".", 1)[0], 0) + 1
                if o >= 0:
                    wanted.add(mod.split(".", 1)[0])
                    types.bind(o, mod.split(".", 1)[0], UNKNOWN)
                    local_imports.add((o, mod.split(".", 1)[0]))
            imports.append(
                import_binding(mod, line, alias=alias)
            )
    for node in caps.get("impf", ()):
        line = node.start_point[0] + 1
        mod_node = node.child_by_field_name("module_name")
        level = 0
        mod = ""
        if mod_node is not None:
            if mod_node.type == "relative_import":
                for c in mod_node.named_children:
                    if c.type == "import_prefix":
                        level = len(c.text.strip())
                    else:
                        mod = c.text.decode("utf-8", "replace")
            else:
                mod = mod_node.text.decode("utf-8", "replace")
        names: list[list[str]] = []
        star = False
        for child in node.named_children:
            if child == mod_node:
                continue
            if child.type == "wildcard_import":
                star = True
            elif child.type == "aliased_import":
                nm = child.child_by_field_name("name").text.decode("utf-8", "replace")
                al = child.child_by_field_name("alias").text.decode("utf-8", "replace")
                names.append([nm, al])
                bound.add(al)
                imported[al] = imported.get(al, 0) + 1
            elif child.type == "dotted_name":
                nm = child.text.decode("utf-8", "replace")
                names.append([nm, nm])
                bound.add(nm)
                imported[nm] = imported.get(nm, 0) + 1
        o = owners.owner(node.start_byte)
        if o >= 0:
            for _, local in names:
                wanted.add(local)
                types.bind(o, local, UNKNOWN)
                local_imports.add((o, local))
                if defs[o]["kind"] == "class":
                    class_imports.append((o, local))
        if mod == "__future__":
            continue
        imports.append(
            import_binding(mod, line, names=names, level=level, reexport=is_init, star=star)
        )

    # a name imported twice (a function's or class body's own import) names different objects in different places,
    # which the resolver's file-wide import bindings cannot tell apart: never ``!name``
    types.ambiguous_names = {n for n, k in imported.items() if k > 1}
    for o, local in class_imports:  # imported in a class body: a class attribute holding the object
        types.bind_attr(o, local, UNKNOWN if local in types.ambiguous_names else "!" + local, o)
    top_names = {d["name"] for d in defs if d["parent"] < 0}
    heads = bound | top_names
    aliases: dict[tuple[int, str], list[str | None]] = {}
    # ``ssl = import_helper.import_module("ssl")`` at the top level: the module, as ``import ssl`` (not typed as a
    # variable, so ``ssl.SSLContext()`` stays a dotted name the resolver follows through the import)
    dynamic = dynamic_imports(caps, owners.owner)
    wanted.difference_update(n for n in dynamic if n not in heads)
    collect_types(caps, defs, owners, types, aliases)
    for name, (mod, line, _) in keep_dynamic_imports(dynamic, types.assigned, owners.owner).items():
        if name not in heads:
            imports.append(import_binding(mod, line, alias=name))
            heads.add(name)
    module_alias, module_vars = module_aliases(caps, owners.owner, types.assigned, heads, types,
                                               any(imp.get("star") for imp in imports))
    container_writes(caps, acall_texts, owners, types, data)
    infer_returns(caps, defs, owners, types, fn_nodes)
    # references deduplicated per (kind, name, owner) with an occurrence count
    counts: dict[tuple[str, str, int], int] = {}
    get = counts.get
    bounds, owner_of = owners.bounds, owners.owners

    # decorators (def -> decorator), remember their call nodes so they are not also counted as calls
    dec_calls: set[int] = set()
    for node in caps.get("dec", ()):
        expr = node.named_child(0) if node.named_child_count else None
        if expr is None:
            continue
        if expr.type == "call":
            dec_calls.add(expr.start_byte)
            expr = expr.child_by_field_name("function")
        if expr is not None and expr.type in ("identifier", "attribute"):
            d = dotted(expr)
            if d is not None:
                key = ("decorator", d, owner_of[bisect_right(bounds, node.start_byte) - 1])
                counts[key] = get(key, 0) + 1

    # (scope, name) a definition binds: its parent function or the module (a method binds no name)
    def_binds = {
        (d["parent"], d["name"]) for d in defs if d["parent"] < 0 or defs[d["parent"]]["kind"] != "class"
    }
    for node in caps.get("call", ()):
        sb = node.start_byte
        if sb in dec_calls:
            continue
        name = node.text.decode("utf-8", "replace")
        o = owner_of[bisect_right(bounds, sb) - 1]
        s = types.scope_of(o, name)
        if (
            s is not None
            and (s, name) not in def_binds
            and ((s >= 0 and (s, name) not in local_imports) or (s < 0 and name not in heads))
        ):
            # a variable (assigned, a parameter, a loop target; a function's local shadows an import or a
            # definition of the module): no definition of that name; it is a call of what the variable names
            # when its only bindings name one thing (an alias), else of something not known here
            key = alias_call(types, aliases, heads, s, name, o)
            if key is not None:
                counts[key] = get(key, 0) + 1
            continue
        key = ("call", name, o)
        counts[key] = get(key, 0) + 1

    tested: set[bytes] | None = None
    for node, t in zip(caps.get("acall", ()), acall_texts):
        sb = node.start_byte
        if sb in dec_calls:
            continue
        o = owner_of[bisect_right(bounds, sb) - 1]
        if DOTTED.fullmatch(t) is None:
            t2 = _WSB.sub(b"", t)
            if t2.startswith(b"super().") and _IDENT.fullmatch(t2, 8):
                key = ("super", t2[8:].decode("utf-8", "replace"), o)
                counts[key] = get(key, 0) + 1
                continue
            if DOTTED.fullmatch(t2) is None:
                m = node.child_by_field_name("attribute").text.decode("utf-8", "replace")
                recv = value_type(node.child_by_field_name("object"))
                if recv and recv[0] != "=":  # "x".join(), Foo(a).m(), [..].index()
                    key = ("typed_call", f"{types.localize(o, recv)}:{m}", o)
                else:
                    key = ("method_call", m, o)
                counts[key] = get(key, 0) + 1
                continue
            t = t2
        d = t.decode("utf-8", "replace")
        head, _, rest = d.partition(".")
        if head == "self" or head == "cls":
            if "." in rest:
                mid, _, m = rest.rpartition(".")
                key = ("typed_call", "@>" + mid.replace(".", ">") + ":" + m, o)
            else:
                key = ("self", rest, o)
            counts[key] = get(key, 0) + 1
            continue
        # (a name that is also imported or defined at top level keeps the qualified rule: `os = fresh('os')`)
        recv = types.lookup(o, head) if head in types.typed_names and head not in heads else None
        if recv and recv[0] == "!" and "|" not in recv:
            # ``F = Foo; F.make()`` calls ``Foo.make``: the qualified rule, as if written out (``m = mod.x``
            # may copy a module's variable, which the qualified rule would not find: the old rule there)
            if "." not in recv and recv[1:] in heads:
                key = ("qualified", f"{recv[1:]}.{rest}", o)
                counts[key] = get(key, 0) + 1
                continue
            recv = None
        if recv:
            mid, _, m = rest.rpartition(".")
            key = ("typed_call", (extend_texpr(recv, ">" + mid.replace(".", ">")) if mid else recv) + ":" + m, o)
        elif head in PY_BUILTIN_TYPES and head not in heads:
            continue  # str.join(...), dict.fromkeys(...), int.from_bytes(...)
        elif head in heads:
            key = ("qualified", d, o)
        else:
            m = d.rsplit(".", 1)[1]
            # ``if isinstance(x, Foo): x.m()``: an instance of Foo (or of a type derived from it) there
            if tested is None:  # names the file tests with isinstance (found once, most files test none)
                tested = set(_ISINSTANCE.findall(data)) if b"isinstance(" in data else set()
            hb = head.encode()
            narrow = narrowed_type(node, hb, data) if hb in tested and "." not in rest else None
            key = ("typed_call", f"{narrow}:{m}", o) if narrow else ("method_call", m, o)
        counts[key] = get(key, 0) + 1

    for node in caps.get("bases", ()):
        for b in node.named_children:
            if b.type == "keyword_argument":
                continue
            if b.type == "subscript":
                b = b.child_by_field_name("value")
            if b is None or b.type not in ("identifier", "attribute"):
                continue
            d = dotted(b)
            if d is None:
                continue
            o = owner_of[bisect_right(bounds, b.start_byte) - 1]
            last = d.rsplit(".", 1)[-1]
            if last in SKIP_BASES:
                if last != "object" and o >= 0:
                    defs[o]["ext_base"] = True  # methods may be inherited from outside the graph
                continue
            key = ("base", d, o)
            counts[key] = get(key, 0) + 1

    names_pos: list[tuple[str, int]] = []
    for node in caps.get("type", ()):
        names_pos.clear()
        _type_names(node, names_pos)
        for name, pos in names_pos:
            key = ("reference", name, owner_of[bisect_right(bounds, pos) - 1])
            counts[key] = get(key, 0) + 1

    refs = [[k, n, o, c] for (k, n, o), c in counts.items()]
    for i, d in enumerate(defs):
        if d["kind"] == "class":
            attrs = types.attrs(i)
            if attrs:
                d["attrs"] = attrs

    blob["definitions"] = defs
    blob["references"] = refs
    blob["imports"] = imports
    blob["config_refs"] = config_tokens(data, root)
    # module docstring
    blob["doc"] = _docstring(root)
    if b"__all__" in data:
        exported = _dunder_all(root)
        if exported is not None:
            blob["extra"]["all"] = exported
    if module_alias:
        blob["extra"]["aliases"] = module_alias
    if module_vars:
        blob["extra"]["vars"] = module_vars
    return blob


def _dunder_all(root: Any) -> list[str] | None:
    """The module's public names from top-level ``__all__ = [...]`` / ``(...)`` and ``__all__ += [...]`` of string
    literals (None when there is no such assignment, or one the extractor cannot read: then every name counts)."""
    names: list[str] | None = None
    for stmt in root.named_children:
        if stmt.type != "expression_statement" or stmt.named_child_count != 1:
            continue
        node = stmt.named_child(0)
        if node.type not in ("assignment", "augmented_assignment"):
            continue
        left = node.child_by_field_name("left")
        if left is None or left.type != "identifier" or left.text != b"__all__":
            continue
        right = node.child_by_field_name("right")
        if right is None or right.type not in ("list", "tuple"):
            return None
        got = []
        for item in right.named_children:
            if item.type != "string" or any(c.type == "interpolation" for c in item.named_children):
                return None
            content = [c for c in item.named_children if c.type == "string_content"]
            got.append(content[0].text.decode("utf-8", "replace") if content else "")
        names = got if node.type == "assignment" or names is None else names + got
    return names
