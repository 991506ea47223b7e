"""Receiver types the code implies without annotations (issue 12 item 5): return types inferred from ``return``
statements, ``self.make()`` and method-call chains, ``with … as x``, ``except E as e``, and ``self.m()`` in a mixin
resolved through the types it is mixed into. ``query`` and ``fetch`` are defined by several classes, so a call on a
receiver of unknown type is a tie (no edge): every edge below comes from the receiver's type."""

from __future__ import annotations

import pytest

FILES = {
    "pkg/__init__.py": "",
    "pkg/db.py": """
        class Conn:
            def query(self):
                pass


        class Cursor:
            def fetch(self):
                pass


        class Session:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def query(self):
                pass


        class Builder:
            def step(self):
                return self

            def query(self):
                pass


        class DbError(Exception):
            def fetch(self):
                pass


        def make():
            return Conn()


        def make_via_local():
            c = Conn()
            return c


        def either(flag):
            if flag:
                return Conn()
            return Cursor()


        def maybe(flag):
            if flag:
                return None
            return Conn()


        def gen():
            yield Conn()
            return Conn()


        async def coro():
            return Conn()
        """,
    "pkg/other.py": """
        class Other:
            def query(self):
                pass

            def fetch(self):
                pass
        """,
    "pkg/use.py": """
        import threading
        from .db import Builder, Conn, Cursor, DbError, Session, coro, either, gen, make, make_via_local, maybe
        from .other import Other


        def returns():
            make().query()
            x = make_via_local()
            x.query()
            maybe(True).query()


        def no_guess():
            either(True).query()
            gen().query()
            coro().query()


        def chains():
            Builder().step().step().query()


        def with_and_except(path):
            with Session() as s:
                s.query()
            with open(path) as fh:
                fh.query()
            try:
                pass
            except DbError as e:
                e.fetch()


        class Factory:
            def conn(self):
                return Conn()

            def use(self):
                c = self.conn()
                c.query()
                self.conn().query()


        class Mixin:
            def run(self):
                self.query()


        class Impl(Mixin, Conn):
            pass


        class TwoWays:
            def run(self):
                self.fetch()


        class ViaCursor(TwoWays, Cursor):
            pass


        class ViaOther(TwoWays, Other):
            pass


        class Outside:
            def run(self):
                self.query()


        class Threaded(Outside, threading.Thread):
            pass


        class Unseen:
            def run(self):
                self.query()


        def typed_local_calls():
            b = Builder()
            b.step().query()
            s = b.step()
            s.query()


        def handler():
            pass


        def shadowing(handler):
            handler()


        def not_shadowed():
            handler()


        def variables(helper, items):
            helper()
            for query in items:
                query()
            make = items[0]
            make()


        class Aliased(Conn):
            def run(self):
                q = self.query
                q()


        class Holder:
            def __init__(self):
                self.conn = Conn()

            def run(self):
                c = self.conn
                c.query()


        class WithProperty:
            @property
            def conn(self):
                return Conn()

            def run(self):
                self.conn.query()


        class NeedsCursor:
            def run(self):
                self.cur.fetch()


        class WithCursor(NeedsCursor):
            def setUp(self):
                self.cur = Cursor()


        class NeedsAny:
            def run(self):
                self.cur.fetch()


        class AnyCursor(NeedsAny):
            def setUp(self):
                self.cur = Cursor()


        class AnyOther(NeedsAny):
            def setUp(self):
                self.cur = Other()


        def default_alias(x, mk=make):
            mk()


        def alias_call(flag):
            mk = make
            mk()
            other = make
            if flag:
                other = either
            other()
        """,
    "pkg/third.py": """
        def helper():
            pass


        def query():
            pass
        """,
}

U = "file::pkg/use.py"
QUERY = "file::pkg/db.py::class::Conn::fn::query"
FETCH = "file::pkg/db.py::class::Cursor::fn::fetch"
OTHER_QUERY = "file::pkg/other.py::class::Other::fn::query"
OTHER_FETCH = "file::pkg/other.py::class::Other::fn::fetch"


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_infer") / "repo", FILES))


def test_inferred_return_types(g) -> None:
    # make() returns Conn(); make_via_local() returns a local bound to Conn(); maybe() returns None or Conn()
    assert g.edge(f"{U}::fn::returns", QUERY, "calls").count == 3
    assert OTHER_QUERY not in g.targets(f"{U}::fn::returns", "calls")


def test_no_inferred_type_without_one_answer(g) -> None:
    # either() returns two types; gen() is a generator and coro() a coroutine: calling them gives no Conn
    calls = g.targets(f"{U}::fn::no_guess", "calls")
    assert not calls & {QUERY, OTHER_QUERY, "file::pkg/db.py::class::Session::fn::query"}


def test_return_self_chains(g) -> None:
    assert "file::pkg/db.py::class::Builder::fn::query" in g.targets(f"{U}::fn::chains", "calls")


def test_with_and_except_targets(g) -> None:
    calls = g.targets(f"{U}::fn::with_and_except", "calls")
    assert "file::pkg/db.py::class::Session::fn::query" in calls  # Session.__enter__ returns self
    assert "file::pkg/db.py::class::DbError::fn::fetch" in calls  # except DbError as e
    # open() is outside the graph: fh.query() links nowhere, not even by name
    assert not calls & {QUERY, OTHER_QUERY}
    assert g.edge(f"{U}::fn::with_and_except", "file::pkg/db.py::class::Session::fn::query", "calls").count == 1


def test_self_method_results(g) -> None:
    assert g.edge(f"{U}::class::Factory::fn::use", QUERY, "calls").count == 2


def test_mixin_self_calls(g) -> None:
    # Mixin.run's self.query(): the only type mixing it in is Impl(Mixin, Conn)
    assert QUERY in g.targets(f"{U}::class::Mixin::fn::run", "calls")
    # TwoWays is mixed into a Cursor and an Other: two definitions, either may be called (may-call edges)
    assert g.targets(f"{U}::class::TwoWays::fn::run", "calls") & {FETCH, OTHER_FETCH} == {FETCH, OTHER_FETCH}
    # Outside is mixed into threading.Thread (outside the graph): settled there, no edge
    assert not g.targets(f"{U}::class::Outside::fn::run", "calls")
    # no type of the graph defines Unseen's query: it is mixed in where the graph does not see, no guess
    assert not g.targets(f"{U}::class::Unseen::fn::run", "calls")


def test_calls_on_typed_locals(g) -> None:
    # b = Builder(): b.step() is Builder.step's return (self), directly and through another local
    assert g.edge(f"{U}::fn::typed_local_calls", "file::pkg/db.py::class::Builder::fn::query", "calls").count == 2


def test_calls_of_variables_are_no_definition_calls(g) -> None:
    # helper (a parameter), query (a loop target) and make (a local) hold values: no edge to the graph's
    # helper() / query() / make() definitions of the same names
    assert not g.targets(f"{U}::fn::variables", "calls")
    # a parameter named like a definition of the module shadows it; without the parameter the call is the def's
    assert not g.targets(f"{U}::fn::shadowing", "calls")
    assert g.targets(f"{U}::fn::not_shadowed", "calls") == {f"{U}::fn::handler"}


def test_attribute_values(g) -> None:
    assert QUERY in g.targets(f"{U}::class::Holder::fn::run", "calls")  # c = self.conn
    assert QUERY in g.targets(f"{U}::class::WithProperty::fn::run", "calls")  # a property's returned type
    # a mixin's self.cur, assigned only by the type derived from it
    assert FETCH in g.targets(f"{U}::class::NeedsCursor::fn::run", "calls")
    # two derived types assign different known types: the method of each
    assert g.targets(f"{U}::class::NeedsAny::fn::run", "calls") & {FETCH, OTHER_FETCH} == {FETCH, OTHER_FETCH}


def test_calls_of_aliases(g) -> None:
    # q = self.query; q() calls the method; mk = make; mk() calls make; other names make or either: no edge
    assert QUERY in g.targets(f"{U}::class::Aliased::fn::run", "calls")
    assert g.targets(f"{U}::fn::alias_call", "calls") == {"file::pkg/db.py::fn::make"}
    assert g.edge(f"{U}::fn::alias_call", "file::pkg/db.py::fn::make", "calls").count == 1
    # def f(x, mk=make): mk() calls make (the module-name-as-default idiom)
    assert g.targets(f"{U}::fn::default_alias", "calls") == {"file::pkg/db.py::fn::make"}
