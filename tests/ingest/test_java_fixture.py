"""Golden expectations for a Java project (graph.md §6 Java, §7 packages from declarations)."""

from __future__ import annotations

import pytest
from ingest_helpers import assert_invariants, build, write_files
from m1nd.graph.schema import KINDS

FILES = {
    "src/main/java/com/ex/pool/Pool.java": """
        package com.ex.pool;

        import com.ex.util.Helpers;
        import com.ex.util.*;
        import static com.ex.util.Helpers.twice;
        import java.util.List;

        /** A pool of workers. */
        public class Pool extends BasePool implements Runner {
            private Worker worker;

            public Pool(int n) { this.init(); }

            public Job get(String key) { return helper(key); }

            public Job get(int index) {
                Helpers.log(index);
                twice(index);
                new Worker().work();
                return null;
            }

            private Job helper(String k) { return null; }
            private void init() { shared(); }

            public static class Inner {
                void x() {}
            }
        }
        """,
    "src/main/java/com/ex/pool/BasePool.java": """
        package com.ex.pool;

        public abstract class BasePool {
            protected void shared() {}
        }
        """,
    "src/main/java/com/ex/pool/Runner.java": """
        package com.ex.pool;

        public interface Runner extends AutoCloseable {
            Job get(int index);
        }
        """,
    "src/main/java/com/ex/pool/Job.java": """
        package com.ex.pool;

        public record Job(int id) {}
        """,
    "src/main/java/com/ex/util/Helpers.java": """
        package com.ex.util;

        public final class Helpers {
            public static void log(int x) {}
            public static int twice(int x) { return 2 * x; }
        }
        """,
    "src/main/java/com/ex/util/Worker.java": """
        package com.ex.util;

        public class Worker {
            public void work() {}
        }
        """,
    "src/test/java/com/ex/pool/PoolTest.java": """
        package com.ex.pool;

        import org.junit.Test;

        public class PoolTest {
            @Test
            public void testGet() {
                new Pool(1).get(2);
            }
        }
        """,
}

D = "file::src/main/java/com/ex/pool"
P = f"{D}/Pool.java"


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    return build(write_files(tmp_path_factory.mktemp("java") / "repo", FILES))


def test_definitions_and_overloads(g) -> None:
    cls = g.node(f"{P}::class::Pool")
    assert (
        cls.kind == KINDS["class"]
        and cls.doc == "A pool of workers."
        and (cls.line_start, cls.line_end) == (9, 29)
    )
    assert cls.signature == "public class Pool extends BasePool implements Runner"
    ctor = g.node(f"{P}::class::Pool::fn::Pool")  # constructor: name = class name
    assert ctor.line_start == 12
    assert g.node(f"{P}::class::Pool::fn::get").signature == "public Job get(String key)"
    assert g.node(f"{P}::class::Pool::fn::get#2").signature == "public Job get(int index)"
    assert g.node(f"{P}::class::Pool::class::Inner").qname == "Pool.Inner"
    assert g.node(f"{D}/Runner.java::interface::Runner").kind == KINDS["interface"]
    assert g.node(f"{D}/Job.java::class::Job").kind == KINDS["class"]  # record
    assert g.node(f"{D}/Runner.java::interface::Runner::fn::get").kind == KINDS["fn"]


def test_resolution(g) -> None:
    assert g.has(f"{P}::class::Pool", f"{D}/BasePool.java::class::BasePool", "inherits")  # same package
    assert g.has(f"{P}::class::Pool", f"{D}/Runner.java::interface::Runner", "implements")
    get2 = f"{P}::class::Pool::fn::get#2"
    U = "file::src/main/java/com/ex/util"
    assert g.has(get2, f"{U}/Helpers.java::class::Helpers::fn::log", "calls")  # Type.m() via import
    assert g.has(get2, f"{U}/Helpers.java::class::Helpers::fn::twice", "calls")  # static import
    assert g.has(get2, f"{U}/Worker.java::class::Worker", "calls")  # new C() via a.b.* import
    assert g.has(get2, f"{U}/Worker.java::class::Worker::fn::work", "calls")
    assert g.has(f"{P}::class::Pool::fn::get", f"{P}::class::Pool::fn::helper", "calls")  # implicit this
    assert g.has(f"{P}::class::Pool::fn::Pool", f"{P}::class::Pool::fn::init", "calls")  # this.m()
    assert g.has(f"{P}::class::Pool::fn::init", f"{D}/BasePool.java::class::BasePool::fn::shared", "calls")
    assert g.has(f"{P}::class::Pool::fn::get", f"{D}/Job.java::class::Job", "references")  # return type
    assert g.has(f"{P}::class::Pool", f"{U}/Worker.java::class::Worker", "references")  # field type
    assert g.has(P, f"{U}/Helpers.java::class::Helpers", "imports")
    assert g.has(P, f"{U}/Helpers.java", "imports")
    assert "java.util.List" in g.parts.external_imports["src/main/java/com/ex/pool/Pool.java"]


def test_tests(g) -> None:
    t = "file::src/test/java/com/ex/pool/PoolTest.java"
    assert g.node(t).is_test
    assert g.node(f"{t}::class::PoolTest::fn::testGet").is_test
    assert g.has(t, P, "tests")
    assert g.has(f"{t}::class::PoolTest::fn::testGet", f"{P}::class::Pool::fn::get", "tests")
    assert g.has(f"{t}::class::PoolTest::fn::testGet", f"{P}::class::Pool", "calls")  # same package


def test_invariants(g) -> None:
    assert_invariants(g)
