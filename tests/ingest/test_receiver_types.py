"""Method calls on receivers whose type is plain from the code (``typed_call``, graph.md §7): each construct on a
small fixture. ``pkg/db.py`` and ``pkg/other.py`` both define ``query`` and ``fetch``, so a call on a receiver of
unknown type is a tie (no edge) and every edge below comes from the receiver's type."""

from __future__ import annotations

import pytest
from m1nd.ingest.extract import extract_file

PY_FILES = {
    "pkg/__init__.py": "",
    "pkg/db.py": '''
        class Conn:
            def query(self):
                pass


        class Cursor:
            def fetch(self):
                pass


        class SubConn(Conn):
            pass


        def connect() -> "Conn":
            return Conn()
        ''',
    "pkg/other.py": """
        class Other:
            def query(self):
                pass

            def fetch(self):
                pass
        """,
    "pkg/svc.py": '''
        import threading
        from typing import Optional
        from .db import Conn, Cursor, SubConn, connect

        _default = Conn()


        class Base:
            def __init__(self):
                self.cur = Cursor()


        class Service(Base):
            pool: Conn

            def __init__(self, conn: Conn, other):
                super().__init__()
                self.conn = conn
                self.other = other
                self.maybe: Optional[Cursor] = None
                self.mixed = Conn()

            def reset(self):
                self.mixed = Cursor()

            def attrs(self):
                self.conn.query()
                self.cur.fetch()
                self.maybe.fetch()
                self.pool.query()
                self.other.query()
                self.mixed.query()

            def params(self, c: Optional[Conn], d: "Cursor | None", e, s: SubConn):
                c.query()
                d.fetch()
                e.query()
                s.query()

            def locals_(self, e):
                x = Conn()
                x.query()
                y: Cursor = e
                y.fetch()
                z = connect()
                z.query()
                Conn().query()
                v = x
                v.query()

            def conflicts(self, e, items):
                w = Conn()
                w = e
                w.query()
                for k in items:
                    k.query()
                k = Conn()
                x = Conn()
                x.fetch()

            def outside(self):
                t = threading.Thread()
                t.query()
                lst = []
                lst.query()
                "a".query()


        def use_global():
            _default.query()


        def shadow(_default):
            _default.query()


        def outer():
            x = Conn()

            def inner():
                x.query()

            return inner
        ''',
}

S = "file::pkg/svc.py"
QUERY = "file::pkg/db.py::class::Conn::fn::query"
FETCH = "file::pkg/db.py::class::Cursor::fn::fetch"


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv") / "repo", PY_FILES))


def _calls(g, fn: str) -> set[str]:
    return g.targets(f"{S}::{fn}", "calls")


def test_python_attributes(g) -> None:
    calls = _calls(g, "class::Service::fn::attrs")
    assert QUERY in calls  # self.conn = conn, conn: Conn; and the class-level `pool: Conn`
    assert FETCH in calls  # self.cur = Cursor() in the base class; self.maybe: Optional[Cursor]
    assert g.edge(f"{S}::class::Service::fn::attrs", QUERY, "calls").count == 2
    assert g.edge(f"{S}::class::Service::fn::attrs", FETCH, "calls").count == 2
    # self.other (unannotated parameter) and self.mixed (Conn() and Cursor()): no type, a tie, no edge
    assert "file::pkg/other.py::class::Other::fn::query" not in calls
    assert g.edge(f"{S}::class::Service::fn::attrs", QUERY, "calls").w0 == pytest.approx(0.5)


def test_python_parameters(g) -> None:
    calls = _calls(g, "class::Service::fn::params")
    assert {QUERY, FETCH} <= calls  # Optional[Conn], "Cursor | None", SubConn -> Conn.query through the base
    assert g.edge(f"{S}::class::Service::fn::params", QUERY, "calls").count == 2
    assert not any("other.py" in t for t in calls)  # e.query(): unknown receiver, a tie


def test_python_locals(g) -> None:
    calls = _calls(g, "class::Service::fn::locals_")
    # x = Conn(); y: Cursor; z = connect() -> "Conn"; Conn().query(); v = x
    assert g.edge(f"{S}::class::Service::fn::locals_", QUERY, "calls").count == 4
    assert FETCH in calls
    assert not any("other.py" in t for t in calls)


def test_python_conflicts_never_guess(g) -> None:
    calls = _calls(g, "class::Service::fn::conflicts")
    # w bound to Conn() and to a parameter, k to a loop item and Conn(): no type; x: Conn has no fetch
    assert not calls & {QUERY, FETCH, "file::pkg/other.py::class::Other::fn::query",
                        "file::pkg/other.py::class::Other::fn::fetch"}


def test_python_outside_types(g) -> None:
    # threading.Thread(), [] and "a" are types outside the graph: no edge, not even a guess
    assert not _calls(g, "class::Service::fn::outside")


def test_python_scopes(g) -> None:
    assert QUERY in g.targets(f"{S}::fn::use_global", "calls")  # module-level _default = Conn()
    assert QUERY not in g.targets(f"{S}::fn::shadow", "calls")  # a parameter shadows the module name
    assert QUERY in g.targets(f"{S}::fn::outer::fn::inner", "calls")  # closure over the outer x


def test_python_blob_shape() -> None:
    src = b"""
class A:
    x: "Foo"
    def __init__(self, c: Conn):
        self.c = c
        self.n = None
    def f(self):
        self.c.a.m()
"""
    blob = extract_file("a.py", src, "python")
    cls = next(d for d in blob["definitions"] if d["name"] == "A")
    assert cls["attrs"] == {"c": "Conn", "x": "Foo"}  # `self.n = None` says nothing
    assert ["typed_call", "@>c>a:m", 2, 1] in blob["references"]


TS_FILES = {
    "src/db.ts": """
        export class Conn {
          query() {}
        }
        export class Other {
          query() {}
        }
        """,
    "src/more.ts": """
        export class Third {
          query() {}
        }
        """,
    "src/svc.ts": """
        import { Conn } from './db';

        export class Svc {
          pool: Conn;
          constructor(private conn: Conn, other: any) {
            this.made = new Conn();
            this.other = other;
          }
          attrs() {
            this.conn.query();
            this.made.query();
            this.pool.query();
            this.other.query();
          }
          locals(x: Conn | null, e) {
            x.query();
            const z = new Conn();
            z.query();
            new Conn().query();
            let w = new Conn();
            w = e;
            w.query();
          }
        }
        """,
    "src/plain.js": """
        const { Conn } = require('./db');

        class Plain {
          constructor() {
            this.c = new Conn();
          }
          run(p) {
            this.c.query();
            p.query();
          }
        }
        """,
}

TQ = "file::src/db.ts::class::Conn::fn::query"


@pytest.fixture(scope="module")
def tg(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_ts") / "repo", TS_FILES))


def test_ts_receivers(tg) -> None:
    svc = "file::src/svc.ts::class::Svc::fn"
    # parameter property, this.made = new Conn(), field annotation; this.other: unknown
    assert tg.edge(f"{svc}::attrs", TQ, "calls").count == 3
    # `x: Conn | null`, `const z = new Conn()`, `new Conn().query()`; w has two bindings: no type, a tie
    assert tg.edge(f"{svc}::locals", TQ, "calls").count == 3
    assert not any(t.endswith(("Other::fn::query", "Third::fn::query"))
                   for t in tg.targets(f"{svc}::locals", "calls") | tg.targets(f"{svc}::attrs", "calls"))


def test_js_constructor_attribute(tg) -> None:
    calls = tg.targets("file::src/plain.js::class::Plain::fn::run", "calls")
    assert TQ in calls  # this.c = new Conn() in the constructor
    assert not any(t.endswith(("Other::fn::query", "Third::fn::query")) for t in calls)


GO_FILES = {
    "go.mod": "module example.com/app\n",
    "db/conn.go": """
        package db

        type Conn struct{}

        func NewConn() (*Conn, error) { return &Conn{}, nil }
        """,
    "db/conn_ops.go": """
        package db

        func (c *Conn) Query() {}
        """,
    "db/other.go": """
        package db

        type Other struct{}

        func (o *Other) Query() {}
        """,
    "svc/svc.go": """
        package svc

        import "example.com/app/db"

        type Svc struct {
            conn *db.Conn
            any  interface{}
        }

        func (s *Svc) Run(p *db.Conn, e *db.Conn) {
            s.conn.Query()
            p.Query()
            x := &db.Conn{}
            x.Query()
            y, err := db.NewConn()
            _ = err
            y.Query()
            var z db.Conn
            z.Query()
            w := db.Conn{}
            w = other()
            w.Query()
        }
        """,
}

GQ = "file::db/conn_ops.go::recv::Conn::fn::Query"


@pytest.fixture(scope="module")
def gg(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_go") / "repo", GO_FILES))


def test_go_receivers(gg) -> None:
    run = "file::svc/svc.go::struct::Svc::fn::Run"
    # s.conn (struct field), p *db.Conn, &db.Conn{}, db.NewConn() -> *Conn, var z db.Conn; the method is
    # declared in another file of the package
    assert gg.edge(run, GQ, "calls").count == 5
    # w has two bindings: no type, and Query is a tie between Conn and Other
    assert "file::db/other.go::recv::Other::fn::Query" not in gg.targets(run, "calls")


JAVA_FILES = {
    "src/main/java/a/db/Conn.java": """
        package a.db;

        public class Conn {
            public void query() {}
        }
        """,
    "src/main/java/a/db/Other.java": """
        package a.db;

        public class Other {
            public void query() {}
        }
        """,
    "src/main/java/a/svc/Svc.java": """
        package a.svc;

        import a.db.Conn;
        import java.util.List;

        public class Svc {
            private Conn conn;
            private Object any;

            public void run(Conn p, List<Object> items) {
                conn.query();
                this.conn.query();
                p.query();
                Conn x = new Conn();
                x.query();
                var y = new Conn();
                y.query();
                new Conn().query();
                for (Conn k : java.util.List.of(x)) { k.query(); }
                items.forEach(z -> ((Other) z).query());
            }
        }
        """,
}


@pytest.fixture(scope="module")
def jg(tmp_path_factory):
    from ingest_helpers import build, write_files

    return build(write_files(tmp_path_factory.mktemp("recv_java") / "repo", JAVA_FILES))


def test_java_receivers(jg) -> None:
    run = "file::src/main/java/a/svc/Svc.java::class::Svc::fn::run"
    q = "file::src/main/java/a/db/Conn.java::class::Conn::fn::query"
    # field (bare and this.), parameter, local, var = new, new Conn().m(), for-each variable
    assert jg.edge(run, q, "calls").count == 7
