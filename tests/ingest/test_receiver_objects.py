"""Class objects held in names and attributes (issue 12 item 5): ``factory = Foo`` holds the class ``Foo`` (or a
function), so calling ``factory`` gives what calling ``Foo`` gives. A class attribute holding a class is there to be
overridden, so ``self.factory()`` counts every type derived from the receiver's that assigns it again: the call
links only when all of them agree on the method. ``read`` and ``close`` are defined by unrelated classes too, so a
name-based guess would link them: every edge below comes from the receiver's types."""

from __future__ import annotations

import pytest

FILES = {
    "pkg/__init__.py": "",
    "pkg/streams.py": """
        class Stream:
            def read(self):
                pass

            def close(self):
                pass


        class BufferedStream(Stream):
            pass


        class RawStream(Stream):
            def read(self):
                pass


        def open_stream():
            return Stream()
        """,
    "pkg/other.py": """
        class Pipe:
            def read(self):
                pass

            def close(self):
                pass

            def seek(self):
                pass
        """,
    "pkg/use.py": """
        import pkg.streams as streams
        from pkg.streams import BufferedStream, RawStream, Stream, open_stream


        class Reader:
            stream_class = Stream

            def go(self):
                self.stream_class().read()


        class Base:
            stream_class = Stream

            def go(self):
                s = self.stream_class()
                s.read()
                s.close()


        class Buffered(Base):
            stream_class = BufferedStream


        class Raw(Base):
            stream_class = RawStream


        class Wrapped:
            opener = staticmethod(open_stream)
            dotted = streams.BufferedStream

            def go(self):
                self.opener().read()
                self.dotted().read()


        class Mixin:
            def go(self):
                self.stream_class().read()


        class MixedA(Mixin):
            stream_class = Stream


        class MixedB(Mixin):
            stream_class = RawStream


        class Window:
            from pkg.streams import BufferedStream as Maker

            def go(self):
                self.Maker().close()
                self.Maker().read()


        class SubWindow(Window):
            Maker = RawStream

            def go2(self):
                self.Maker().read()


        class Other:
            from pkg.other import Pipe as Twice

            def go(self):
                self.Twice().read()


        def twice():
            from pkg.streams import Stream as Twice

            return Twice


        STREAM_NAME = "BufferedStream"


        class PartMixin:
            def go(self):
                self.stream_class().read()


        class PartA(PartMixin):
            stream_class = Stream


        class PartB(PartMixin):
            stream_class = getattr(streams, STREAM_NAME, None)


        class LiteralMixin:
            def go(self):
                self.stream_class().read()


        class LiteralA(LiteralMixin):
            stream_class = Stream


        class LiteralB(LiteralMixin):
            stream_class = getattr(streams, "BufferedStream", None)


        def local_alias():
            make = BufferedStream
            make().read()
            make.close(None)

        """,
}

U = "file::pkg/use.py"
S = "file::pkg/streams.py"
READ = f"{S}::class::Stream::fn::read"
RAW_READ = f"{S}::class::RawStream::fn::read"
CLOSE = f"{S}::class::Stream::fn::close"
PIPE = "file::pkg/other.py::class::Pipe"
READS = {READ, RAW_READ, f"{PIPE}::fn::read"}


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_objects") / "repo", FILES))


def test_class_attribute_holding_a_class(g) -> None:
    assert g.targets(f"{U}::class::Reader::fn::go", "calls") & READS == {READ}


def test_overriding_classes_that_agree_or_not(g) -> None:
    # Base, Buffered (inherits Stream.read) and Raw (overrides read): read has two definitions, either may be
    # called (an edge to each, never Pipe.read by name); close has one
    calls = g.targets(f"{U}::class::Base::fn::go", "calls")
    assert calls & READS == {READ, RAW_READ}
    assert CLOSE in calls
    assert g.targets(f"{U}::class::Mixin::fn::go", "calls") & READS == {READ, RAW_READ}
    # one derived type holds a value of unknown type: not known, no edge (not Stream.read from PartA alone)
    assert not g.targets(f"{U}::class::PartMixin::fn::go", "calls") & READS
    # ``getattr(streams, "BufferedStream", None)`` with a literal name is ``streams.BufferedStream``
    assert g.targets(f"{U}::class::LiteralMixin::fn::go", "calls") & READS == {READ}


def test_class_attribute_imported_in_the_class_body(g) -> None:
    # Window imports BufferedStream as ``Maker`` in its body (a class attribute); SubWindow holds RawStream there
    calls = g.targets(f"{U}::class::Window::fn::go", "calls")
    assert CLOSE in calls  # RawStream inherits Stream.close too
    assert calls & READS == {READ, RAW_READ}  # read: Stream's or RawStream's
    assert g.targets(f"{U}::class::SubWindow::fn::go2", "calls") & READS == {RAW_READ}
    # ``Twice`` is imported twice in the file (two objects): not followed
    assert not g.targets(f"{U}::class::Other::fn::go", "calls") & READS


def test_staticmethod_function_and_dotted_class(g) -> None:
    assert g.targets(f"{U}::class::Wrapped::fn::go", "calls") & READS == {READ}
    assert g.edge(f"{U}::class::Wrapped::fn::go", READ, "calls").count == 2


def test_local_copy_of_a_class(g) -> None:
    calls = g.targets(f"{U}::fn::local_alias", "calls")
    assert calls & READS == {READ}
    assert CLOSE in calls  # ``make.close(...)``: the class's method, as if written ``BufferedStream.close``


def test_a_local_import_is_a_variable_not_the_module_level_name() -> None:
    # ``Stream`` imported inside the function is that function's variable: ``factory`` holds no known object (the
    # module-level ``Stream`` would be the wrong class); a name imported once is followed
    from m1nd.ingest.extract import extract_file

    text = """
from pkg.streams import Stream


def local_import():
    from pkg.other import Pipe as Stream

    factory = Stream
    factory().read()


def module_level():
    factory = Stream
    factory().read()
"""
    refs = extract_file("pkg/x.py", text.encode(), "python")["references"]
    typed = {(r[1], r[2]) for r in refs if r[0] == "typed_call"}
    # ``Stream`` names two objects in this file (the resolver reads imports file-wide): followed in neither function
    assert ("Stream():read", 0) not in typed
    assert ("Stream():read", 1) not in typed
    once = extract_file("pkg/y.py", text.replace("Pipe as Stream", "Pipe").encode(), "python")["references"]
    assert ("Stream():read", 1) in {(r[1], r[2]) for r in once if r[0] == "typed_call"}  # module_level: Stream
