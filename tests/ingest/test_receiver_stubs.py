"""Return types of standard-library functions from typeshed's stubs (issue 12 item 5): a call of a standard-library
function of the graph whose source gives no known type takes the stubs' return (``logging.getLogger`` ->
``logging.Logger``). A class of the graph links; a type outside the graph settles the call (no name guess); a name
the graph's module lacks is not known (the call stays as before); source annotations win.

The fixture repository holds small modules at standard-library paths (as an ingest of the standard library does);
each has a decoy class elsewhere defining the same method name, so a name-based guess would link there."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

FILES = {
    "logging/__init__.py": """
        _cache = {}


        class Logger:
            def info(self, msg):
                pass


        def getLogger(name=None):
            return _cache[name]


        def getLoggerClass():
            return _cache[None]
        """,
    "re/__init__.py": """
        import _sre


        def compile(pattern, flags=0):
            return _cache(pattern, flags)


        def _cache(pattern, flags):
            return _sre.compile(pattern, flags)


        Pattern = type(compile(""))
        """,
    "textwrap.py": """
        def dedent(text):
            return _whitespace.sub("", text)
        """,
    "shapes.py": """
        class A:
            def area(self):
                pass

            def draw(self):
                pass


        class B(A):
            def draw(self):
                pass


        class Adapter:
            def info(self, msg):
                pass


        def make():
            return _registry()


        def annotated() -> Adapter:
            return _registry()


        def missing():
            return _registry()


        def renamed():
            return _registry()
        """,
    "decoy.py": """
        class Decoy:
            def info(self, msg):
                pass

            def sub(self, repl, text):
                pass

            def strip(self):
                pass

            def area(self):
                pass

            def draw(self):
                pass

            def spin(self):
                pass
        """,
    "use.py": """
        import logging
        import re
        import shapes
        import textwrap


        def log():
            logging.getLogger("x").info("hi")


        def log_attr():
            logger = logging.getLogger()
            logger.info("hi")


        def regex():
            re.compile("a").sub("b", "c")


        def text():
            textwrap.dedent(" a").strip()


        def union():
            shape = shapes.make()
            shape.area()
            shape.draw()


        def source_wins():
            shapes.annotated().info("x")


        def not_in_graph():
            shapes.missing().spin()


        def older_name():
            shapes.renamed().area()
        """,
}

#: the stubs' word for the fixture's own module ``shapes`` (the real table covers logging, re, textwrap)
SHAPES = {"shapes": {"make": "shapes.A|shapes.B", "annotated": "logging.Logger", "missing": "shapes.Gone",
                      "renamed": "shapes._NewA"}}
#: ``shapes._NewA`` is the newest Python's name of what older ones call ``shapes.A``
RENAMED = {"shapes._NewA": ["shapes.A"]}
U = "file::use.py"
DECOY = "file::decoy.py::class::Decoy"


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    from ingest_helpers import build, write_files

    from m1nd.ingest.resolve import stubs

    real = stubs.stdlib_returns()
    patch = pytest.MonkeyPatch()
    patch.setattr(stubs, "stdlib_returns", lambda: {**real, **SHAPES})
    patch.setattr(stubs, "stdlib_renamed", lambda: RENAMED)
    try:
        yield build(write_files(tmp_path_factory.mktemp("recv_stubs") / "repo", FILES))
    finally:
        patch.undo()


def test_real_table_names_what_the_stdlib_returns() -> None:
    from m1nd.ingest.resolve.stubs import stdlib_returns

    table = stdlib_returns()
    assert table["re"]["compile"] == "re.Pattern"
    assert table["re"]["match"] == "re.Match"  # (``Match[str] | None``: None removed)
    assert table["logging"]["getLogger"] == "logging.Logger"
    assert table["asyncio.events"]["new_event_loop"] == "asyncio.events.AbstractEventLoop"
    assert table["xml.etree.ElementTree"]["XML"] == "xml.etree.ElementTree.Element"
    assert "import_module" not in table.get("importlib", {})  # a module object answers any attribute: not known


def test_stubbed_return_links_to_the_graph_class(g) -> None:
    info = "file::logging/__init__.py::class::Logger::fn::info"
    for fn in ("log", "log_attr"):
        calls = g.targets(f"{U}::fn::{fn}", "calls")
        assert info in calls and f"{DECOY}::fn::info" not in calls, fn


def test_type_outside_the_graph_settles_the_call(g) -> None:
    # ``re.Pattern`` is a variable of the graph's ``re`` (a type made in C), ``builtins.str`` lies outside
    for fn, meth in (("regex", "sub"), ("text", "strip")):
        calls = g.targets(f"{U}::fn::{fn}", "calls")
        assert not any(c.startswith(DECOY) for c in calls), (fn, calls)
        assert f"{DECOY}::fn::{meth}" not in calls


def test_union_links_each_alternative_s_method(g) -> None:
    calls = g.targets(f"{U}::fn::union", "calls")
    assert "file::shapes.py::class::A::fn::area" in calls  # B inherits A's
    # A and B each define their own: either may be called
    assert {c for c in calls if c.endswith("::fn::draw")} == {"file::shapes.py::class::A::fn::draw",
                                                              "file::shapes.py::class::B::fn::draw"}
    assert f"{DECOY}::fn::area" not in calls


def test_source_annotation_wins(g) -> None:
    calls = g.targets(f"{U}::fn::source_wins", "calls")
    assert "file::shapes.py::class::Adapter::fn::info" in calls
    assert "file::logging/__init__.py::class::Logger::fn::info" not in calls


def test_name_the_graph_module_lacks_is_not_known(g) -> None:
    # ``shapes.Gone`` is no name of the graph's ``shapes``: not known, the plain method-call rule as before
    assert f"{DECOY}::fn::spin" in g.targets(f"{U}::fn::not_in_graph", "calls")


def test_older_name_of_a_renamed_class(g) -> None:
    calls = g.targets(f"{U}::fn::older_name", "calls")
    assert "file::shapes.py::class::A::fn::area" in calls and f"{DECOY}::fn::area" not in calls


# ------------------------------------------------------------------------------------------------ the generator

STUBS = {
    "builtins.pyi": """
        class object: ...
        class str: ...
        class bytes: ...
        class int: ...
        class bool(int): ...
        class type: ...
        class list: ...
        """,
    "typing.pyi": """
        class Any: ...
        Optional: _SpecialForm
        Union: _SpecialForm
        Literal: _SpecialForm
        Self: _SpecialForm
        Callable: _SpecialForm
        class Protocol: ...
        def TypeVar(name): ...
        def overload(f): ...
        class IO: ...
        """,
    "_impl.pyi": """
        class Reader:
            def read(self) -> bytes: ...
        def make_reader() -> Reader: ...
        """,
    "mod.pyi": """
        import sys
        from typing import IO, Any, Optional, Literal, Protocol, Self, TypeVar, overload, Callable
        from _impl import Reader as Reader, make_reader as make_reader

        _T = TypeVar("_T")
        AnyStr = TypeVar("AnyStr", str, bytes)
        _Either: TypeAlias = Reader | Box

        class Box:
            def copy(self) -> Self: ...
            def maybe(self) -> Box | None: ...
            def opt(self) -> Optional[Reader]: ...
            def generic(self) -> list[Box]: ...
            def anything(self) -> Any: ...
            def typevar(self, x: _T) -> _T: ...
            def nothing(self) -> None: ...
            def kind(self) -> Literal["a", "b"]: ...
            def factory(self) -> type[Box]: ...
            def fn(self) -> Callable[[], int]: ...
            def proto(self) -> Sized: ...
            def dynamic(self) -> Dyn: ...
            def either(self) -> _Either: ...
            def stream(self) -> IO: ...
            def name(self, x: AnyStr) -> AnyStr: ...

        class Sized(Protocol):
            def __len__(self) -> int: ...

        class Dyn:
            def __getattr__(self, name: str) -> Any: ...

        @overload
        def load(b: bytes) -> Box: ...
        @overload
        def load(s: str) -> Reader: ...

        if sys.version_info >= (3, 12):
            def versioned() -> Box: ...
        else:
            def versioned() -> Reader: ...

        if sys.platform == "win32":
            def platform() -> Box: ...
        else:
            def platform() -> Reader: ...

        if sys.version_info >= (3, 14):
            class _Policy: ...
        else:
            class _Policy: ...
            Policy = _Policy

        def policy() -> _Policy: ...
        """,
}


def _generator():
    path = Path(__file__).resolve().parents[2] / "tools" / "gen_stdlib_returns.py"
    spec = importlib.util.spec_from_file_location("gen_stdlib_returns", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # (its dataclasses look their module up)
    spec.loader.exec_module(mod)
    return mod


def test_generator_reads_returns_from_stubs(tmp_path) -> None:
    for rel, text in STUBS.items():
        (tmp_path / rel).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    stubs = _generator().Stubs.from_dir(tmp_path)
    table = stubs.returns()
    mod = table["mod"]
    assert mod["Box.copy"] == "mod.Box"  # Self: the class
    assert mod["Box.maybe"] == "mod.Box" and mod["Box.opt"] == "_impl.Reader"  # None removed; re-export followed
    assert mod["Box.generic"] == "builtins.list"  # a generic class: its parameters dropped
    assert mod["Box.kind"] == "builtins.str"  # a literal's type
    assert mod["Box.name"] == "builtins.bytes|builtins.str"  # a constrained type variable: one of its constraints
    assert mod["Box.either"] == "_impl.Reader|mod.Box"  # an alias of a union
    assert mod["load"] == "_impl.Reader|mod.Box"  # overloads: their union
    assert mod["versioned"] == "mod.Box"  # the newest Python's branch
    assert mod["platform"] == "_impl.Reader|mod.Box"  # every platform
    assert mod["make_reader"] == "_impl.Reader"  # what the module imports from another is its name too
    assert mod["Reader.read"] == "builtins.bytes"
    assert mod["policy"] == "mod._Policy" and stubs.renamed()["mod._Policy"] == ["mod.Policy"]  # its older name
    for unknown in ("anything", "typevar", "nothing", "factory", "fn", "proto", "dynamic", "stream"):
        assert f"Box.{unknown}" not in mod, unknown
