"""Receiver types of the Python extractor: the type expressions (``texpr``, see the ``extract`` package docstring)
of names, attributes, returned values and ``with`` / ``except`` targets, collected per scope into
:class:`~m1nd.ingest.extract._common.ScopeTypes`, and the reference a call of an alias makes. The extractor
(``python.py``) calls :func:`collect_types` once per file (then ``python_returns.infer_returns``)."""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest.extract._common import UNKNOWN_TYPE, ScopeTypes, extend_texpr, union_of

DOTTED = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_WSB = re.compile(rb"\s+")


def dotted(node: Any) -> str | None:
    t = node.text
    if DOTTED.fullmatch(t):
        return t.decode("utf-8", "replace")
    t = _WSB.sub(b"", t)
    if DOTTED.fullmatch(t):
        return t.decode("utf-8", "replace")
    return None


# ------------------------------------------------------------------------------------------ receiver types
#
# Type expressions (``texpr``) name what a receiver holds, written so the resolver can evaluate them:
# ``Foo`` / ``mod.Foo`` (a type), ``Foo()`` / ``mod.make()`` (what calling that name returns: an instance of a
# class, or a function's return annotation), ``@`` (the enclosing type, ``self`` / ``cls``), each optionally
# followed by ``>attr`` segments (the type of an attribute of that type). A method call on a typed receiver is
# the reference ``["typed_call", "<texpr>:<method>", owner, count]``.

#: value nodes whose type is a builtin (method calls on them never reach the graph)
_LITERAL_TYPES = {
    "string": "str",
    "concatenated_string": "str",
    "list": "list",
    "list_comprehension": "list",
    "dictionary": "dict",
    "dictionary_comprehension": "dict",
    "set": "set",
    "set_comprehension": "set",
    "tuple": "tuple",
    "integer": "int",
    "float": "float",
    "true": "bool",
    "false": "bool",
}
UNKNOWN = UNKNOWN_TYPE
SELF_NAMES = ("self", "cls")


def _is_none(node: Any) -> bool:
    if node.type == "type" and node.named_child_count == 1:
        node = node.named_child(0)
    return node.type == "none"


def annotation_type(node: Any) -> str | None:
    """Type expression of an annotation when it names one type: ``Foo``, ``mod.Foo``, ``"Foo"``,
    ``Optional[Foo]``, ``Foo | None``, ``Union[Foo, None]``, ``Final[Foo]``, ``list[Foo]`` (-> ``list``);
    otherwise None."""
    for _ in range(8):
        t = node.type
        if t == "type":
            if node.named_child_count != 1:
                return None
            node = node.named_child(0)
        elif t in ("identifier", "attribute"):
            return dotted(node)
        elif t == "string":  # a forward reference
            kids = node.named_children
            if len(kids) == 3 and kids[1].type == "string_content":
                return _string_annotation(kids[1].text)
            return None
        elif t == "binary_operator":  # Foo | None
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is None or right is None:
                return None
            if _is_none(right):
                node = left
            elif _is_none(left):
                node = right
            else:
                return None
        elif t in ("generic_type", "subscript"):
            if t == "generic_type":
                head = node.named_child(0)
                params = node.named_child(1) if node.named_child_count > 1 else None
                args = params.named_children if params is not None else []
            else:
                head = node.child_by_field_name("value")
                args = node.children_by_field_name("subscript")
            if head is None or head.type not in ("identifier", "attribute"):
                return None
            h = dotted(head)
            if h is None:
                return None
            last = h.rsplit(".", 1)[-1]
            if last in ("Optional", "Union"):
                args = [a for a in args if not _is_none(a)]
                if len(args) != 1:
                    return None
                node = args[0]
            elif last in ("Annotated", "Final", "ClassVar"):
                if not args:
                    return None
                node = args[0]
            else:
                return h
        else:
            return None
    return None


_OPTIONAL_TEXT = re.compile(rb"(?:typing\.)?Optional\[\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\]")


def _string_annotation(txt: bytes) -> str | None:
    """A forward reference written as a string: ``"Foo"``, ``"mod.Foo"``, ``"Foo | None"``, ``"Optional[Foo]"``."""
    txt = txt.strip()
    m = _OPTIONAL_TEXT.fullmatch(txt)
    if m is not None:
        txt = m.group(1)
    elif b"|" in txt:
        parts = [p.strip() for p in txt.split(b"|") if p.strip() != b"None"]
        if len(parts) != 1:
            return None
        txt = parts[0]
    if DOTTED.fullmatch(txt):
        return txt.decode("utf-8", "replace")
    return None


def value_type(node: Any, depth: int = 0, selfs: tuple[str, ...] = ("self", "cls")) -> str | None:
    """Type expression of an assigned value: a literal's builtin type, ``Foo()`` for a call of a (dotted) name,
    ``@>m()`` / ``X()>m()`` for a method's result, ``@>a`` for ``self.a``, ``=x`` for another name (resolved
    later), None for ``None`` (no information), else UNKNOWN."""
    for _ in range(4):
        t = node.type
        if t == "parenthesized_expression" and node.named_child_count == 1:
            node = node.named_child(0)
            continue
        if t == "assignment":  # a = b = Foo()
            nxt = node.child_by_field_name("right")
            if nxt is None:
                return UNKNOWN
            node = nxt
            continue
        break
    t = node.type
    if t == "none":
        return None
    if t == "conditional_expression" and node.named_child_count == 3 and depth < 4:
        # ``A() if c else B()``: either type (their union); ``A() if c else None``: A()
        alts = {value_type(node.named_child(0), depth + 1, selfs), value_type(node.named_child(2), depth + 1, selfs)}
        alts.discard(None)
        if not alts or not all(a and a[0] != "=" for a in alts):
            return UNKNOWN if alts else None
        return union_of(alts)  # type: ignore[arg-type]
    lit = _LITERAL_TYPES.get(t)
    if lit is not None:
        return lit
    if t == "call":
        fn = node.child_by_field_name("function")
        if fn is not None and fn.type in ("identifier", "attribute"):
            d = dotted(fn)
            if d is not None:
                head, _, rest = d.partition(".")
                if d == "staticmethod" and depth < 4:  # ``factory = staticmethod(Foo)`` holds ``Foo``
                    args = node.child_by_field_name("arguments")
                    if args is not None and args.named_child_count == 1:
                        got = value_type(args.named_child(0), depth + 1, selfs)
                        return got if got and got[0] == "=" else UNKNOWN
                    return UNKNOWN
                if head in selfs:
                    # ``cls(...)`` / ``self.__class__(...)``: an instance of the enclosing type; ``self.make()``:
                    # what the enclosing type's method returns (``@>make()``, through attributes on the way)
                    if d == "cls" or rest == "__class__":
                        return "@"
                    if rest:
                        return "@>" + rest.replace(".", ">") + "()"
                return d + "()"
            if (
                fn.type == "attribute" and depth < 4
            ):  # ``Foo().make().run()``: what ``make`` returns, then ``run``
                inner = value_type(fn.child_by_field_name("object"), depth + 1, selfs)
                if inner and inner[0] != "=":
                    attr = fn.child_by_field_name("attribute").text.decode("utf-8", "replace")
                    return extend_texpr(inner, f">{attr}()")
        return UNKNOWN
    if t == "identifier":
        return "=" + node.text.decode("utf-8", "replace")
    if t == "attribute":  # ``loop = self.loop``: the attribute's type
        d = dotted(node)
        if d is not None:
            head, _, rest = d.partition(".")
            if head in selfs:
                return "@>" + rest.replace(".", ">")
            return "=" + d  # ``factory = mod.Foo``: the object a module path names (or an attribute: unknown)
    return UNKNOWN


_IDENT_STRING = re.compile(rb"""(['"])([A-Za-z_][A-Za-z0-9_]*)\1""")


def _getattr_value(args: Any, selfs: tuple[str, ...]) -> str:
    """``getattr(a.b, "c")`` / ``getattr(a.b, "c", None)``: what ``a.b.c`` is (``=a.b.c``), else UNKNOWN."""
    if args is None or args.named_child_count not in (2, 3):
        return UNKNOWN
    obj, name = args.named_child(0), args.named_child(1)
    if args.named_child_count == 3 and args.named_child(2).type != "none":
        return UNKNOWN
    got = _IDENT_STRING.fullmatch(name.text) if name.type == "string" else None
    d = dotted(obj) if obj.type in ("identifier", "attribute") else None
    if got is None or d is None or d.partition(".")[0] in selfs:
        return UNKNOWN
    return "=" + d + "." + got.group(2).decode()


def _pattern_names(node: Any, out: list[Any]) -> None:
    """Identifier and ``self.x`` attribute targets inside a binding pattern."""
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t == "identifier" or t == "attribute":
            out.append(n)
        elif t not in ("subscript", "call", "string", "comment"):
            stack.extend(n.named_children)


def param_names(node: Any) -> frozenset[str]:
    names: list[str] = []
    prms = node.child_by_field_name("parameters")
    for prm in prms.named_children if prms is not None else ():
        t = prm.type
        if t in ("default_parameter", "typed_default_parameter"):
            prm = prm.child_by_field_name("name")
        elif t != "identifier" and prm.named_child_count:
            prm = prm.named_child(0)
        if prm is not None and prm.type == "identifier":
            names.append(prm.text.decode("utf-8", "replace"))
    return frozenset(names)


def param_default(node: Any, name: str) -> str | None:
    """The (dotted) name parameter ``name`` of function ``node`` defaults to, None when it has no such default."""
    prms = node.child_by_field_name("parameters")
    for prm in prms.named_children if prms is not None else ():
        if prm.type not in ("default_parameter", "typed_default_parameter"):
            continue
        pn = prm.child_by_field_name("name")
        if pn is None or pn.text.decode("utf-8", "replace") != name:
            continue
        value = prm.child_by_field_name("value")
        return dotted(value) if value is not None and value.type in _NAME_NODES else None
    return None


def collect_types(
    caps: dict[str, list[Any]],
    defs: list[dict[str, Any]],
    owners: Any,
    types: ScopeTypes,
    aliases: dict[tuple[int, str], list[str | None]],
) -> None:
    """Fill ``types`` from parameters, annotations, assignments and every other binding form (only for the
    names that are receivers of method calls, and for every ``self.x`` / class-level attribute)."""
    owner = owners.owner
    kind_of = [d["kind"] for d in defs]
    wanted = types.wanted
    # ``for x in items``: the elements of a local ``items`` are wanted (``items[]``, see ScopeTypes.elements)
    loops: list[tuple[Any, Any]] = []  # (loop target, iterable)
    for node in caps.get("bind", ()):
        par = node.parent
        if par is not None and par.type in _LOOPS:  # (the query captures a loop's ``left``)
            right = _iterable(node, par.child_by_field_name("right"))
            target = node if node.type == "identifier" else node.named_child(1) if right is not None else None
            if target is not None and target.type == "identifier" and target.text.decode("utf-8", "replace") in wanted:
                loops.append((target, right))
                if right.type == "identifier":
                    name = right.text.decode("utf-8", "replace")
                    wanted.add(name)
                    wanted.add(name + "[]")
    # functions that assign ``cls`` / ``self`` as a local (``cls = self.theclass``): ``cls(...)`` is no instance
    # of the enclosing type there
    rebound: dict[int, tuple[str, ...]] = {}  # scope -> the self names that still mean self / the class there
    types.rebound_self = rebound
    # assignments to a name, a class-level name or self.x: (target, scope, class or -1, assignment)
    asgs: list[tuple[Any, int, int, Any]] = []
    assigned = types.assigned  # (every name bound as a variable: a copy of it is no ``!name``)
    types.owner_at = owner
    class_level = {node.start_byte for node in caps.get("cname", ())}  # (a class body's own statements)
    for node in caps.get("aname", ()):
        name = node.text.decode("utf-8", "replace")
        assigned.setdefault(name, []).append(node.start_byte)
        o = owner(node.start_byte)
        if name in SELF_NAMES:  # ``cls = self.theclass``: ``cls()`` calls what it holds, not the enclosing class
            rebound[o] = tuple(x for x in rebound.get(o, SELF_NAMES) if x != name)
            wanted.add(name)
        if o >= 0 and node.start_byte not in class_level and kind_of[o] == "class":
            # under ``try`` / ``if`` in a class body: a class attribute too (``try: cls = mod._CImpl``)
            asgs.append((node, o, o, node.parent))
        if name in wanted:
            asgs.append((node, o, -1, node.parent))
    for node in caps.get("cname", ()):
        o = owner(node.start_byte)
        if o >= 0 and kind_of[o] == "class":
            asgs.append((node, o, o, node.parent))
    top_classes: dict[str, int] | None = None
    for node in caps.get("aobj", ()):
        nm = node.text.decode("utf-8", "replace")
        if nm in SELF_NAMES:
            o = owner(node.start_byte)
            cls = types.class_of_method(o)
            if cls >= 0:
                left = node.parent
                asgs.append((left.child_by_field_name("attribute"), o, cls, left.parent))
            continue
        if top_classes is None:  # (a class defined twice at the top level: neither)
            names = [d["name"] for d in defs if d["parent"] < 0 and d["kind"] == "class"]
            top_classes = {d["name"]: i for i, d in enumerate(defs)
                           if d["parent"] < 0 and d["kind"] == "class" and names.count(d["name"]) == 1}
        cls = top_classes.get(nm, -1)
        if cls >= 0 and owner(node.start_byte) < 0:
            # ``SSLContext.sslsocket_class = SSLSocket`` at the module's top level: a class attribute of the
            # module's own class, set once the other class exists
            left = node.parent
            asgs.append((left.child_by_field_name("attribute"), -1, cls, left.parent))
    rights = [asg.child_by_field_name("right") for _, _, _, asg in asgs]
    class_names = {(o, node.text) for node, o, cls, _ in asgs if cls == o}  # names a class body assigns
    own_names: set[int] = set()
    for i, right in enumerate(rights):  # `x = y` / `x = y.z`: y's type is wanted too (is y a variable?)
        if right is not None and right.type in _NAME_NODES:
            head = right.text.partition(b".")[0].strip()
            target, o, cls, _ = asgs[i]
            if cls == o and (o, head) in class_names:
                own_names.add(i)  # ``B = A`` in a class body names the class's own ``A``: not followed
            wanted.add(head.decode("utf-8", "replace"))
    # a nested definition binds its name in the enclosing scope; a module-level one binds the object it defines
    # (``factory = Foo`` holds the class ``Foo``: ``!Foo``)
    for d in defs:
        p = d["parent"]
        if d["name"] in wanted and (p < 0 or kind_of[p] != "class"):  # (methods: not attributes worth a type)
            types.bind(p, d["name"], "!" + d["name"] if p < 0 else UNKNOWN)
    for node in caps.get("ptyped", ()):
        name = node.text.decode("utf-8", "replace")
        if name in wanted:
            ty = node.parent.child_by_field_name("type")
            texpr = annotation_type(ty) if ty is not None else None
            types.bind(owner(node.start_byte), name, texpr or UNKNOWN, declared=True)
    found: list[Any] = []
    looped = {target.start_byte for target, _ in loops}  # loop targets bound below, from element types
    for cap in ("bind", "apat"):
        for node in caps.get(cap, ()):
            o = owner(node.start_byte)
            found.clear()
            _pattern_names(node, found)
            for n in found:
                if n.type == "identifier":
                    assigned.setdefault(n.text.decode("utf-8", "replace"), []).append(n.start_byte)
            val = _as_target_type(node) if node.type == "as_pattern_target" and len(found) == 1 else UNKNOWN
            items = _unpacked(node, found, rebound.get(o, SELF_NAMES)) if cap == "apat" else None
            for i, n in enumerate(found):
                if n.start_byte not in looped:
                    _bind_target(types, kind_of, o, n, items[i] if items else val)
    for target, right in loops:  # (``x`` of ``for i, x in enumerate(items)`` too)
        o = owner(target.start_byte)
        if o >= 0 and kind_of[o] == "class":
            _bind_target(types, kind_of, o, target, UNKNOWN)
            continue
        for val in element_types(right, rebound.get(o, SELF_NAMES)):
            types.bind(o, target.text.decode("utf-8", "replace"), val)
    for node in caps.get("glob", ()):
        o = owner(node.start_byte)
        for n in node.named_children:
            if n.type != "identifier":
                continue
            nm = n.text.decode("utf-8", "replace")
            assigned.setdefault(nm, []).append(-1)
            types.bind(-1, nm, UNKNOWN)
            s = o
            while s >= 0:  # nonlocal: the enclosing functions' binding changes too
                types.bind(s, nm, UNKNOWN)
                s = types.parent_scope(s)
    for i, ((target, o, cls, asg), right) in enumerate(zip(asgs, rights)):
        ty = asg.child_by_field_name("type")
        if ty is not None:
            val = annotation_type(ty) or UNKNOWN
        else:
            if right is None:
                continue
            val = value_type(right, 0, rebound.get(o, SELF_NAMES)) if i not in own_names else UNKNOWN
            if cls >= 0 and cls == o and val == "getattr()":
                # a class body's ``SELECTOR = getattr(selectors, 'PollSelector', None)``: ``selectors.PollSelector``
                val = _getattr_value(right.child_by_field_name("arguments"), rebound.get(o, SELF_NAMES))
        name = target.text.decode("utf-8", "replace")
        if cls >= 0:
            types.bind_attr(cls, name, val, o, declared=ty is not None)
        else:
            types.bind(o, name, val, declared=ty is not None)
            if name + "[]" in wanted:  # ``items = [A(), B()]``: what a loop over it sees
                elems = element_types(right) if right is not None and right.type in _CONTAINERS else [UNKNOWN]
                for v in elems:
                    types.bind(o, name + "[]", v)
            # ``eq = self.assertEqual`` / ``F = fractions.Fraction``: calling ``eq`` calls what it names
            named = dotted(right) if ty is None and right is not None and right.type in _NAME_NODES else None
            aliases.setdefault((o, name), []).append(named)


_NAME_NODES = ("identifier", "attribute")
_LOOPS = ("for_statement", "for_in_clause")
_CONTAINERS = frozenset({"list", "tuple", "set", "list_comprehension", "set_comprehension", "generator_expression"})


def _iterable(target: Any, right: Any) -> Any | None:
    """The container a loop target takes elements of: ``for x in items`` -> items, ``for i, x in enumerate(items)``
    -> items (for ``x``); None for other targets."""
    if right is None:
        return None
    while right.type == "parenthesized_expression" and right.named_child_count == 1:
        right = right.named_child(0)
    if target.type == "identifier":
        return right
    if target.type not in ("pattern_list", "tuple_pattern") or target.named_child_count != 2:
        return None
    fn = right.child_by_field_name("function") if right.type == "call" else None
    args = right.child_by_field_name("arguments") if fn is not None else None
    if fn is None or fn.text != b"enumerate" or args is None or args.named_child_count != 1:
        return None
    return args.named_child(0)


def element_types(node: Any, selfs: tuple[str, ...] = SELF_NAMES) -> list[str | None]:
    """Type expressions of the elements a loop over ``node`` sees: a literal list / tuple / set's elements, a
    comprehension's element, ``=items[]`` for a local name (resolved by ScopeTypes.elements); [UNKNOWN] otherwise.
    (``None`` elements say nothing, as ``x = None`` does.)"""
    t = node.type
    if t in ("list", "tuple", "set"):
        vals = [value_type(e, 0, selfs) for e in node.named_children]
        return [UNKNOWN] if UNKNOWN in vals or len(vals) > 16 else vals  # (``[]``: no element yet)
    if t in ("list_comprehension", "set_comprehension", "generator_expression"):
        body = node.child_by_field_name("body")
        return [value_type(body, 0, selfs) if body is not None else UNKNOWN]
    if t == "identifier":
        return ["=" + node.text.decode("utf-8", "replace") + "[]"]
    return [UNKNOWN]


def alias_call(
    types: ScopeTypes,
    aliases: dict[tuple[int, str], list[str | None]],
    heads: set[str],
    scope: int,
    name: str,
    owner: int,
) -> tuple[str, str, int] | None:
    """The reference a call of variable ``name`` (bound in ``scope``) makes when every binding of it assigns the
    same dotted name: ``self.m`` -> a ``self`` call, ``self.a.m`` -> a typed call, an imported or top-level name
    (possibly dotted) -> a call / qualified call; None otherwise."""
    named = aliases.get((scope, name))
    if scope >= 0 and name in types.params_of(scope):
        # ``def f(x, deepcopy=deepcopy)``: a parameter never assigned in the body, defaulting to a name
        target = None if named or types.nbind.get((scope, name), 0) else param_default(types.fn_nodes[scope], name)
    elif not named or len(named) != types.nbind.get((scope, name), 0):
        return None
    else:
        target = named[0]
        if any(t != target for t in named):
            return None
    if target is None:
        return None
    head, _, rest = target.partition(".")
    if head in SELF_NAMES and rest:
        mid, _, m = rest.rpartition(".")
        return ("typed_call", "@>" + mid.replace(".", ">") + ":" + m, owner) if mid else ("self", m, owner)
    if head in heads:
        return ("qualified" if rest else "call", target, owner)
    return None


def _unpacked(pattern: Any, found: list[Any], selfs: tuple[str, ...]) -> list[str] | None:
    """``a, b = f()``: the type of each target is the returned tuple's item at its position (``f()>#0``, ``f()>#1``:
    the resolver reads the function's ``items``); only for a flat pattern of names / ``self.x`` (no ``*rest``,
    no nesting) and a call's value. ``found`` lists the targets in pattern order."""
    right = pattern.parent.child_by_field_name("right") if pattern.parent is not None else None
    if right is None or right.type != "call" or len(found) != pattern.named_child_count:
        return None
    pos: dict[int, int] = {}
    for i, n in enumerate(pattern.named_children):
        if n.type not in _NAME_NODES:
            return None
        pos[n.start_byte] = i
    texpr = value_type(right, 0, selfs)
    if not texpr or texpr[0] == "=" or not texpr.endswith("()"):
        return None
    return [extend_texpr(texpr, f">#{pos[n.start_byte]}") for n in found]


def _as_target_type(node: Any) -> str:
    """Type of the name an ``as`` binds: ``with Foo() as x`` (what ``Foo().__enter__()`` returns),
    ``except Foo as e`` (a ``Foo``); UNKNOWN otherwise."""
    pat = node.parent
    holder = pat.parent if pat is not None else None
    if holder is None or node.named_child(0).type != "identifier":
        return UNKNOWN
    value = pat.named_child(0)
    if holder.type == "with_item":
        texpr = value_type(value)
        return extend_texpr(texpr, ">__enter__()") if texpr and texpr[0] != "=" else UNKNOWN
    if holder.type == "except_clause" and value.type in ("identifier", "attribute"):
        return dotted(value) or UNKNOWN
    return UNKNOWN


def _bind_target(
    types: ScopeTypes, kind_of: list[str], o: int, n: Any, val: str | None, declared: bool = False
) -> None:
    """Bind an assignment target: a name of scope ``o``, ``self.x`` in a method, a class-level name."""
    if n.type == "identifier":
        nm = n.text.decode("utf-8", "replace")
        if o >= 0 and kind_of[o] == "class":
            types.bind_attr(o, nm, val, o, declared=declared)
        else:
            types.bind(o, nm, val, declared=declared)
        return
    obj = n.child_by_field_name("object")
    if obj is None or obj.type != "identifier" or obj.text.decode("utf-8", "replace") not in SELF_NAMES:
        return
    cls = types.class_of_method(o)
    if cls >= 0:
        attr = n.child_by_field_name("attribute")
        types.bind_attr(cls, attr.text.decode("utf-8", "replace"), val, o, declared=declared)
