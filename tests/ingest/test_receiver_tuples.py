"""Tuple positions of returned values (issue 12 item 5): ``sock, addr = server.accept()`` gives ``sock`` the type
of the first item of the tuple ``accept`` returns, when every ``return`` of it gives a tuple of that length (the
items' types may differ between returns: their union). ``close`` and ``recv`` are also defined by ``Pipe`` in the
same package, so a name-based guess would link them: every edge below comes from the item types."""

from __future__ import annotations

import pytest

FILES = {
    "pkg/__init__.py": "",
    "pkg/net.py": """
        class Conn:
            def recv(self):
                pass

            def close(self):
                pass


        class Server:
            def accept(self):
                conn = Conn()
                return conn, "addr"

            def accept_or_fail(self):
                if self:
                    return None
                return Conn(), 0

            def maybe_pair(self):
                if self:
                    return self.pair
                return Conn(), Conn()

            def short_or_long(self):
                if self:
                    return Conn(), 1
                return Conn(), 1, 2


        def open_pair():
            return (Server(), Conn())


        def pairs():
            return [(Conn(), 1)][0]
        """,
    "pkg/other.py": """
        class Pipe:
            def recv(self):
                pass

            def close(self):
                pass

            def accept(self):
                pass
        """,
    "pkg/use.py": """
        from pkg.net import Server, open_pair, pairs


        def serve():
            conn, addr = Server().accept()
            conn.recv()
            addr.upper()


        def serve_none():
            conn, n = Server().accept_or_fail()
            conn.close()


        def from_function():
            server, conn = open_pair()
            server.accept()
            conn.close()


        class Handler:
            def setup(self):
                self.conn, self.addr = Server().accept()

            def handle(self):
                self.conn.recv()


        def not_all_tuples():
            a, b = Server().maybe_pair()
            a.close()


        def lengths_differ():
            a, b = Server().short_or_long()
            a.close()


        def not_a_tuple_literal():
            a, b = pairs()
            a.close()


        def starred():
            a, *rest = Server().accept()
            a.close()
        """,
}

U = "file::pkg/use.py"
CONN = "file::pkg/net.py::class::Conn"
PIPE = "file::pkg/other.py::class::Pipe"


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_tuples") / "repo", FILES))


def test_item_of_a_returned_tuple(g) -> None:
    calls = g.targets(f"{U}::fn::serve", "calls")
    assert f"{CONN}::fn::recv" in calls and f"{PIPE}::fn::recv" not in calls
    # a ``return None`` says nothing about the tuple's items
    assert f"{CONN}::fn::close" in g.targets(f"{U}::fn::serve_none", "calls")


def test_items_of_a_function_and_of_self_attributes(g) -> None:
    calls = g.targets(f"{U}::fn::from_function", "calls")
    assert {"file::pkg/net.py::class::Server::fn::accept", f"{CONN}::fn::close"} <= calls
    assert f"{CONN}::fn::recv" in g.targets(f"{U}::class::Handler::fn::handle", "calls")


def test_no_item_types_without_one_tuple_shape(g) -> None:
    # a return that may be no tuple, returns of different lengths, a value that is no tuple literal, ``*rest``
    for fn in ("not_all_tuples", "lengths_differ", "not_a_tuple_literal", "starred"):
        calls = g.targets(f"{U}::fn::{fn}", "calls")
        assert f"{CONN}::fn::close" not in calls, fn
