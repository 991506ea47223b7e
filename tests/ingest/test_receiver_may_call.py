"""A call edge means "may call" (issue 12 item 5, as a class-hierarchy analysis reads it): when the receiver's possible
types are all known, the call links to the method each of them has, the weight shared among the definitions; types
outside the graph have no node and add no edge (the C twin of a class the stdlib tests against its Python version).
When one possible type is not known there is no edge at all, and never a name-based guess. ``read``, ``write`` and
``close`` are also defined by the unrelated ``Decoy``, so a guess would link them: every edge below comes from the
receiver's types.
"""

from __future__ import annotations

import pytest

FILES = {
    "pkg/__init__.py": "",
    "pkg/decoy.py": """
        class Decoy:
            def read(self):
                pass

            def write(self):
                pass

            def close(self):
                pass

            def ping(self):
                pass
        """,
    "pkg/pyimpl.py": """
        import _ext_impl


        class Stream:
            def read(self):
                pass

            def close(self):
                pass

            def __enter__(self):
                return self


        class Buffered(Stream):
            def read(self):
                pass


        class Writer(Stream):
            def write(self):
                pass


        try:
            CStream = _ext_impl.Stream
        except ImportError:
            CStream = None

        if _ext_impl.fast:
            Default = Buffered
        else:
            Default = Writer


        def open_py():
            pass


        def open_c():
            pass


        try:
            open_any = open_py
        except ImportError:
            open_any = open_c
        """,
    "pkg/wide.py": """
        class W0:
            def ping(self):
                pass


        class W1:
            def ping(self):
                pass


        class W2:
            def ping(self):
                pass


        class W3:
            def ping(self):
                pass


        class W4:
            def ping(self):
                pass


        class W5:
            def ping(self):
                pass


        class W6:
            def ping(self):
                pass


        class W7:
            def ping(self):
                pass


        class W8:
            def ping(self):
                pass
        """,
    "pkg/dyn.py": """
        import importlib

        from test_support import import_helper

        pyimpl = import_helper.import_module("pkg.pyimpl")
        py_twin = import_helper.import_fresh_module("pkg.pyimpl", blocked=["_ext_impl"])
        c_twin = import_helper.import_fresh_module("pkg.pyimpl", fresh=["_ext_impl"])
        other = importlib.import_module("pkg.decoy")
        twice = importlib.import_module("pkg.pyimpl")
        twice = importlib.import_module("pkg.decoy")


        def use():
            pyimpl.Writer().write()
            py_twin.Stream().read()
            c_twin.Stream().close()
            twice.Decoy().ping()
            other.Decoy().ping()
        """,
    "pkg/tests.py": """
        import _ext_impl

        from pkg import pyimpl, wide
        from pkg.pyimpl import Buffered, Stream, Writer


        class StreamTests:
            def test_read(self):
                s = self.impl()
                s.read()
                s.close()


        class PyStreamTests(StreamTests):
            impl = pyimpl.Buffered


        class CStreamTests(StreamTests):
            impl = _ext_impl.Stream


        class CAliasTests(StreamTests):
            impl = pyimpl.CStream


        class UnknownMixin:
            def test_read(self):
                self.impl().read()


        class KnownCase(UnknownMixin):
            impl = pyimpl.Stream


        class UnknownCase(UnknownMixin):
            impl = _ext_impl.factory()


        class HookMixin:
            def test_hook(self):
                self.make()


        class HookA(HookMixin):
            def make(self):
                pass


        class HookB(HookMixin):
            def make(self):
                pass


        class StoredMixin:
            def test_hook(self):
                self.make()


        class StoredA(StoredMixin):
            def make(self):
                pass


        class StoredB(StoredMixin):
            def make(self):
                pass


        class StoredC(StoredMixin):
            make = _ext_impl.factory


        class SessionMixin:
            backend = None

            def setUp(self):
                self.session = self.backend()


        class BufferedCase(SessionMixin):
            backend = Buffered

            def test_read(self):
                self.session.read()


        class WriterCase(SessionMixin):
            backend = Writer


        class LoopBase:
            def new_stream(self):
                raise NotImplementedError

            def go(self):
                self.new_stream().read()


        class BufferedLoop(LoopBase):
            def new_stream(self):
                return Buffered()


        class PlainLoop(LoopBase):
            def new_stream(self):
                return Stream()


        def differ(flag):
            s = Buffered()
            if flag:
                s = Stream()
            s.read()


        def partly_unknown(flag, given):
            s = Buffered()
            if flag:
                s = given
            s.read()


        def reused(path):
            f = Writer()
            f.write()
            with open(path) as f:
                f.read()


        def entered():
            with Writer() as w:
                w.write()


        def defaults():
            pyimpl.Default().read()
            pyimpl.open_any()


        def too_wide(k):
            x = wide.W0()
            if k == 1:
                x = wide.W1()
            elif k == 2:
                x = wide.W2()
            elif k == 3:
                x = wide.W3()
            elif k == 4:
                x = wide.W4()
            elif k == 5:
                x = wide.W5()
            elif k == 6:
                x = wide.W6()
            elif k == 7:
                x = wide.W7()
            elif k == 8:
                x = wide.W8()
            x.ping()


        class PyTask:
            def done(self):
                pass


        class TaskTests:
            def new_task(self):
                return self.__class__.Task()

            def test_done(self):
                self.new_task().done()


        class PyTaskTests(TaskTests):
            Task = PyTask


        class CTaskTests(TaskTests):
            Task = getattr(_ext_impl, "Task", None)
        """,
}

T = "file::pkg/tests.py"
P = "file::pkg/pyimpl.py"
READ = f"{P}::class::Stream::fn::read"
BUF_READ = f"{P}::class::Buffered::fn::read"
CLOSE = f"{P}::class::Stream::fn::close"
WRITE = f"{P}::class::Writer::fn::write"
DECOY = {f"file::pkg/decoy.py::class::Decoy::fn::{m}" for m in ("read", "write", "close", "ping")}


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_may_call") / "repo", FILES))


def test_twin_union_links_the_graph_class(g) -> None:
    # impl: pyimpl.Buffered, an outside class, or an alias of one bound under ``try`` (CStream or None)
    calls = g.targets(f"{T}::class::StreamTests::fn::test_read", "calls")
    assert calls & ({READ, BUF_READ, CLOSE} | DECOY) == {BUF_READ, CLOSE}
    # the outside alternative counts in the shared weight: less than a call whose every type is the graph's
    whole = g.edge(f"{T}::fn::entered", WRITE, "calls").w0
    assert g.edge(f"{T}::class::StreamTests::fn::test_read", BUF_READ, "calls").w0 < whole


def test_non_agreeing_union_gives_an_edge_to_each(g) -> None:
    calls = g.targets(f"{T}::fn::differ", "calls")
    assert calls & ({READ, BUF_READ} | DECOY) == {READ, BUF_READ}
    w = g.edge(f"{T}::fn::differ", READ, "calls").w0
    assert w == g.edge(f"{T}::fn::differ", BUF_READ, "calls").w0 < g.edge(f"{T}::fn::entered", WRITE, "calls").w0
    # a mixin's self.make(), defined by each derived type
    hooks = g.targets(f"{T}::class::HookMixin::fn::test_hook", "calls")
    assert hooks == {f"{T}::class::HookA::fn::make", f"{T}::class::HookB::fn::make"}


def test_an_unknown_alternative_gives_no_edge(g) -> None:
    # a mixin's self.make(): StoredC holds a value there (what, the graph does not see), not a definition
    assert not g.targets(f"{T}::class::StoredMixin::fn::test_hook", "calls")
    assert not g.targets(f"{T}::fn::partly_unknown", "calls") & ({READ, BUF_READ} | DECOY)
    # one derived case holds what an outside factory returns (not known): not Stream.read from KnownCase alone
    assert not g.targets(f"{T}::class::UnknownMixin::fn::test_read", "calls") & ({READ, BUF_READ} | DECOY)


def test_a_name_reused_for_an_outside_object_links_nothing(g) -> None:
    # f = Writer() ... with open(path) as f: f.read() is the file's (flow-insensitive typing sees both)
    calls = g.targets(f"{T}::fn::reused", "calls")
    assert not calls & ({READ, BUF_READ} | DECOY)


def test_inherited_return_self_is_the_receiver_s_type(g) -> None:
    # Stream.__enter__ returns self: ``with Writer() as w`` is a Writer, whose write is Writer's
    assert WRITE in g.targets(f"{T}::fn::entered", "calls")


def test_alias_unions_under_if_or_try(g) -> None:
    calls = g.targets(f"{T}::fn::defaults", "calls")
    # Default is Buffered or Writer: read is Buffered's or (inherited) Stream's; either constructor may be called
    assert calls & ({READ, BUF_READ} | DECOY) == {READ, BUF_READ}
    assert {f"{P}::class::Buffered", f"{P}::class::Writer"} <= calls
    # open_any is open_py or open_c: a call of either
    assert {f"{P}::fn::open_py", f"{P}::fn::open_c"} <= calls


def test_more_definitions_than_set_max_give_no_edge(g) -> None:
    assert not g.targets(f"{T}::fn::too_wide", "calls") & DECOY
    assert not {c for c in g.targets(f"{T}::fn::too_wide", "calls") if c.endswith("::fn::ping")}


def test_class_attribute_through_dunder_class_and_literal_getattr(g) -> None:
    # self.__class__.Task(): the Task attribute of self's type (the graph's PyTask, or getattr(_ext_impl, "Task"))
    assert f"{T}::class::PyTask::fn::done" in g.targets(f"{T}::class::TaskTests::fn::test_done", "calls")


def test_module_from_import_module_with_a_literal_name(g) -> None:
    # ``pyimpl = import_helper.import_module("pkg.pyimpl")`` at the top level: the module, as ``import pkg.pyimpl``
    calls = g.targets("file::pkg/dyn.py::fn::use", "calls")
    assert {WRITE, f"{P}::class::Writer", READ, f"{P}::class::Stream"} <= calls
    assert "file::pkg/decoy.py::class::Decoy::fn::ping" in calls  # other = importlib.import_module("pkg.decoy")
    # the C accelerator's fresh module (``fresh=[...]``) is not the graph's: Stream().close() there links nothing,
    # and a name bound twice is no module
    assert g.edge("file::pkg/dyn.py::fn::use", "file::pkg/decoy.py::class::Decoy::fn::ping", "calls").count == 1
    assert CLOSE not in calls
    assert P in g.targets("file::pkg/dyn.py", "imports")


def test_mixin_attribute_is_read_for_the_receiver_s_own_type(g) -> None:
    # SessionMixin assigns self.session = self.backend(): in BufferedCase that is a Buffered (its backend), not every
    # backend of every case mixing SessionMixin in (Writer's inherited Stream.read)
    assert g.targets(f"{T}::class::BufferedCase::fn::test_read", "calls") & {READ, BUF_READ} == {BUF_READ}


def test_an_abstract_method_leaves_the_answer_to_the_overrides(g) -> None:
    # LoopBase.new_stream only raises NotImplementedError: self.new_stream() is what the overrides return
    assert g.targets(f"{T}::class::LoopBase::fn::go", "calls") & ({READ, BUF_READ} | DECOY) == {READ, BUF_READ}
