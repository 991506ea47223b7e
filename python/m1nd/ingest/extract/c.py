"""C and C++ (issue 12 item 6) through the tags-query extractor (:mod:`m1nd.ingest.extract.tags`).

Definitions: functions (with a body; prototypes are declarations, not definitions), structs, unions (``struct``),
enums, typedefs and ``using X = …`` (``type``), C++ classes and namespaces (``mod``); a method defined outside its
class keeps the class in ``recv``. References: calls (``f()``, ``obj.f()`` / ``p->f()``, ``this->f()``, ``ns::f()``),
``new T``, base classes. Imports: ``#include "path"`` (``system`` for ``<path>``).

A ``.h`` file is C++ when its text says so (``class``, ``namespace``, ``template <``, access specifiers,
``std::``); its blob then carries ``lang = "cpp"``.
"""

from __future__ import annotations

import re
from typing import Any

from m1nd.ingest.extract import tags
from m1nd.ingest.extract._common import import_binding

EXTRACTOR_VERSION = tags.EXTRACTOR_VERSION

_C_QUERY = r"""
(function_definition declarator: (_) @name) @def.fn
(struct_specifier name: (_) @name body: (_)) @def.struct
(union_specifier name: (_) @name body: (_)) @def.struct
(enum_specifier name: (_) @name body: (_)) @def.enum
(type_definition declarator: (_) @name) @def.type
(preproc_include path: (_) @ref.include)
(call_expression function: (_) @ref.call)
"""

_CPP_QUERY = _C_QUERY + r"""
(class_specifier name: (_) @name body: (_)) @def.class
(namespace_definition name: (_) @name) @def.mod
(alias_declaration name: (_) @name) @def.type
(base_class_clause (_) @ref.base)
(new_expression type: (_) @ref.new)
"""

#: declarator wrappers around the declared name
_WRAPPERS = frozenset({"pointer_declarator", "reference_declarator", "parenthesized_declarator",
                       "attributed_declarator", "array_declarator", "function_declarator"})
_CPP_HINT = re.compile(
    rb"^[ \t]*(?:namespace\b|template[ \t]*<|class[ \t]+\w+[^;(]*$|(?:public|private|protected)[ \t]*:|using[ \t]+"
    rb"namespace\b)|\bstd::",
    re.MULTILINE,
)


def _declared(node: Any) -> Any:
    """The name node inside a (function / pointer / …) declarator."""
    for _ in range(32):
        if node is None or node.type not in _WRAPPERS:
            return node
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type not in ("parameter_list", "type_qualifier")), None)
        node = inner
    return None


def _name_of(node: Any, name: Any, kind: str) -> tuple[str, str, str | None, Any] | None:
    if name is None:
        return None
    # ``typedef struct {…} a_t, *a_p;``: each name is its own definition spanning its declarator (the struct is
    # their sibling, not their member)
    span = name if kind == "type" and node.type == "type_definition" else None
    if kind == "fn" and name.type in ("identifier", "field_identifier") and node.type == "function_definition":
        # ``void close() OVERRIDE_MACRO {…}``: the grammar takes the trailing macro for the declarator and puts the
        # real one (with the parameters) into an ERROR child
        for c in node.named_children:
            if c.type == "ERROR":
                fd = next((x for x in c.named_children if x.type == "function_declarator"), None)
                if fd is not None:
                    name = fd
                    break
    if kind in ("fn", "type"):
        name = _declared(name)
        if name is None:
            return None
    t = name.type
    recv = None
    if t == "qualified_identifier":
        scope = []
        while name is not None and name.type == "qualified_identifier":
            sc = name.child_by_field_name("scope")
            if sc is not None:
                scope.append(tags._txt(sc))
            name = name.child_by_field_name("name")
        if name is None:
            return None
        recv = tags._dotted("::".join(scope), "::") or None
        t = name.type
    if t in ("identifier", "field_identifier", "type_identifier", "namespace_identifier", "primitive_type"):
        text = tags._txt(name)
    elif t == "destructor_name":
        text = "~" + tags._txt(name)[1:].strip()
    elif t == "nested_namespace_specifier":
        text = "".join(tags._txt(name).split()).replace("::", ".")
    elif t in ("template_function", "template_type"):
        inner = name.child_by_field_name("name")
        text = tags._txt(inner) if inner is not None else ""
    elif t == "operator_name":  # ``operator==`` -> ``operator ==`` (ctags' spelling)
        text = "operator " + "".join(tags._txt(name)[8:].split())
    else:
        return None
    if not text or not (text[0].isalpha() or text[0] in "_~"):
        return None
    return text, kind, recv, span


def _ref(cap: str, node: Any, ctx: tags.Ctx) -> None:
    t = node.type
    if cap == "ref.call":
        if t == "identifier":
            ctx.ref("call", tags._txt(node), node)
        elif t == "field_expression":
            fld = node.child_by_field_name("field")
            arg = node.child_by_field_name("argument")
            if fld is None:
                return
            name = tags._txt(fld)
            if arg is not None and arg.type == "this":
                ctx.ref("self", name, node)
            else:
                ctx.ref("method_call", name, node)
        elif t == "qualified_identifier":
            d = tags._dotted(tags._txt(node), "::")
            if d.startswith("std."):
                return
            ctx.ref("qualified" if "." in d else "call", d, node)
        elif t == "template_function":
            nm = node.child_by_field_name("name")
            if nm is not None:
                ctx.ref("call", tags._txt(nm), node)
    elif cap == "ref.include":
        text = tags._txt(node).strip()
        system = text.startswith("<")
        path = text.strip('<>"')
        if path:
            ctx.imports.append(import_binding(path, node.start_point[0] + 1, system=system))
    elif cap in ("ref.base", "ref.new"):
        if t in ("access_specifier", "virtual"):
            return
        if t == "template_type":
            node = node.child_by_field_name("name") or node
        d = tags._dotted(tags._txt(node), "::")
        if d and not d.startswith("std.") and d.replace(".", "").replace("_", "").isalnum():
            ctx.ref("base" if cap == "ref.base" else "new", d, node)


#: ``class EXPORT_MACRO Name : Base {`` / ``struct Name {`` headers inside text the grammar gave up on (an unknown
#: export or attribute macro before the name is the usual cause)
_RECOVER = re.compile(
    rb"^[ \t]*(?:template[ \t]*<[^>\n]*>[ \t]*)?(?P<kw>class|struct)[ \t]+(?:[A-Z_][A-Z0-9_]*(?:\([^)\n]*\))?[ \t]+)?"
    rb"(?P<name>[A-Za-z_]\w*)[ \t]*(?:final[ \t]*)?(?:[:{]|$)",
    re.MULTILINE,
)
_RECOVER_KINDS = {b"class": "class", b"struct": "struct"}

C = tags.Spec("c", _C_QUERY, _name_of, _ref)
CPP = tags.Spec("cpp", _CPP_QUERY, _name_of, _ref, recover=_RECOVER, recover_kinds=_RECOVER_KINDS)


def looks_like_cpp(data: bytes) -> bool:
    return _CPP_HINT.search(data) is not None


def extract(relpath: str, data: bytes, lang: str = "c") -> dict[str, Any]:
    if lang == "c" and relpath.endswith((".h", ".H")) and looks_like_cpp(data):
        lang = "cpp"
    return tags.extract_with(CPP if lang == "cpp" else C, relpath, data)
