"""Context managers and class objects (issue 12 item 5): ``with opened() as conn`` where ``opened`` is a
``@contextmanager`` generator gives ``conn`` what it yields; ``Client.conn_class = Conn`` at a module's top level
is a class attribute of the module's own ``Client``; an attribute holding a class (``conn_class = Conn``) answers
method calls with the class's methods (``self.conn_class.create()``, a class method returning an instance).
``close``, ``send`` and ``create`` are also defined by ``Pipe`` in the same package, so a name-based guess would link
them: every edge below comes from these rules."""

from __future__ import annotations

import pytest

FILES = {
    "pkg/__init__.py": "",
    "pkg/net.py": """
        from contextlib import contextmanager
        import contextlib


        class Conn:
            @classmethod
            def create(cls):
                return cls()

            def send(self):
                pass

            def close(self):
                pass


        class Client:
            conn_class = None

            def connect(self):
                return self.conn_class.create()


        Client.conn_class = Conn


        @contextmanager
        def opened():
            conn = Conn()
            try:
                yield conn
            finally:
                conn.close()


        @contextlib.contextmanager
        def either(flag):
            if flag:
                yield Conn()
            else:
                yield Client()


        def plain():
            yield Conn()
        """,
    "pkg/other.py": """
        class Pipe:
            def send(self):
                pass

            def close(self):
                pass

            @classmethod
            def create(cls):
                return cls()
        """,
    "pkg/use.py": """
        from pkg.net import Client, Conn, either, opened, plain
        from pkg.other import Pipe


        def use_manager():
            with opened() as conn:
                conn.send()


        def use_client():
            Client().connect().send()


        class Tests:
            conn_class = Conn

            def go(self):
                self.conn_class.create()


        class PipeTests(Tests):
            conn_class = None


        class MixedTests:
            conn_class = Conn

            def go(self):
                self.conn_class.create()


        class OtherMixedTests(MixedTests):
            conn_class = Pipe


        def use_either():
            with either(True) as c:
                c.send()


        def use_generator():
            with plain() as c:
                c.close()


        def set_later():
            Client.conn_class = None
        """,
}

U = "file::pkg/use.py"
CONN = "file::pkg/net.py::class::Conn"
PIPE = "file::pkg/other.py::class::Pipe"


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_managers") / "repo", FILES))


def test_with_a_context_manager_gives_what_it_yields(g) -> None:
    calls = g.targets(f"{U}::fn::use_manager", "calls")
    assert f"{CONN}::fn::send" in calls and f"{PIPE}::fn::send" not in calls


def test_class_attribute_set_at_the_top_level_and_class_objects(g) -> None:
    # ``Client.conn_class = Conn`` (module level): ``self.conn_class.create()`` is Conn.create, returning a Conn
    assert f"{CONN}::fn::create" in g.targets("file::pkg/net.py::class::Client::fn::connect", "calls")
    assert f"{CONN}::fn::send" in g.targets(f"{U}::fn::use_client", "calls")
    # a class attribute holding a class; PipeTests holds None there (says nothing), so Conn.create
    assert f"{CONN}::fn::create" in g.targets(f"{U}::class::Tests::fn::go", "calls")
    # a derived type holds another class there: Conn.create or Pipe.create, no edge
    assert not {c for c in g.targets(f"{U}::class::MixedTests::fn::go", "calls") if c.endswith("::fn::create")}


def test_no_type_without_one_yielded_type_or_a_context_manager(g) -> None:
    # yields of different types (no method in common), a plain generator (no ``@contextmanager``)
    assert f"{CONN}::fn::send" not in g.targets(f"{U}::fn::use_either", "calls")
    assert f"{CONN}::fn::close" not in g.targets(f"{U}::fn::use_generator", "calls")
