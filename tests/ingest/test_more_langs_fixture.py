"""Golden expectations for C, C++, C#, Ruby, PHP and Kotlin (issue 12 item 6): each construct of the tags-query
extractor on a small project per language — definitions with kind and lines, containment, imports / includes and
the calls the resolver can link."""

from __future__ import annotations

import pytest
from ingest_helpers import assert_invariants, build, write_files
from m1nd.graph.schema import KINDS
from m1nd.ingest.extract import extract_file

C_FILES = {
    "src/pool.h": """
        #ifndef POOL_H
        #define POOL_H
        typedef struct pool pool_t;
        typedef int (*pool_cb)(int);
        int pool_submit(pool_t *p, int job);
        #endif
        """,
    "src/pool.c": """
        #include "pool.h"
        #include <stdlib.h>

        /* A pool of workers. */
        struct pool {
            int size;
        };

        union value { int i; double d; };

        enum state { IDLE, BUSY };

        typedef struct {
            int x;
        } point_t, *point_p;

        static int helper(int x) {
            return x * 2;
        }

        int pool_submit(pool_t *p, int job)
        {
            return helper(job) + p->size;
        }
        """,
    "src/main.c": """
        #include "pool.h"

        int main(void) {
            return pool_submit(0, 1);
        }
        """,
}

CPP_FILES = {
    "include/pool.hpp": """
        #pragma once
        namespace ex {
        class Base {
         public:
          virtual void shared() {}
        };

        template <typename T>
        class Pool : public Base {
         public:
          Pool();
          ~Pool();
          void submit(int job);
          bool operator==(const Pool&) const;
          int size() const { return n_; }
         private:
          int n_;
        };

        using JobId = int;
        enum class State { Idle, Busy };
        struct Job { int id; };
        }  // namespace ex
        """,
    "src/pool.cc": """
        #include "pool.hpp"

        namespace ex {
        template <typename T>
        void Pool<T>::submit(int job) {
          this->shared();
          helper(job);
        }

        static void helper(int) {}
        }  // namespace ex

        void run() {
          ex::Job* j = new ex::Job();
        }
        """,
}

CS_FILES = {
    "src/Pool.cs": """
        using System;
        using Ex.Util;

        namespace Ex.Pool
        {
            /// <summary>A pool of workers.</summary>
            public class Pool : BasePool, IRunner
            {
                public Pool() { Init(); }
                public void Submit(int job) { Helpers.Log(job); new Worker().Work(); this.Init(); }
                private void Init() { Shared(); }
            }
            public interface IRunner { void Submit(int job); }
            public struct Point { public int X; }
            public enum State { Idle, Busy }
            public record Job(int Id);
            public delegate void Callback(int x);
        }
        """,
    "src/BasePool.cs": """
        namespace Ex.Pool
        {
            public abstract class BasePool { protected void Shared() {} }
        }
        """,
    "src/Util.cs": """
        namespace Ex.Util;

        public static class Helpers { public static void Log(int x) {} }
        public class Worker { public void Work() {} }
        """,
}

RB_FILES = {
    "lib/ex/pool.rb": """
        require 'ex/base'
        require_relative 'helpers'

        module Ex
          # A pool of workers.
          class Pool < Base
            include Helpers

            def initialize(size)
              @size = size
            end

            def self.build(size)
              new(size)
            end

            def submit(job)
              helper(job)
              shared
              Worker.new.work
            end
          end
        end
        """,
    "spec/ex/pool_spec.rb": """
        require 'ex/pool'

        describe Ex::Pool do
          it 'submits' do
            Ex::Pool.new(1).submit(2)
          end
        end
        """,
    "lib/ex/base.rb": """
        module Ex
          class Base
            def shared; end
          end
        end
        """,
    "lib/ex/helpers.rb": """
        module Ex
          module Helpers
            def helper(job); end
          end
          class Worker
            def work; end
          end
        end
        """,
}

PHP_FILES = {
    "src/Pool.php": """
        <?php
        namespace App\\Pool;

        use App\\Util\\Helpers;
        use App\\Util\\{Worker, Logger as Log};

        /** A pool of workers. */
        class Pool extends BasePool implements Runner
        {
            use Countable;

            public function submit($job)
            {
                $this->init();
                Helpers::log($job);
                $w = new Worker();
                parent::shared();
                return helper($job);
            }

            private function init() {}
        }

        function helper($x) { return $x; }
        """,
    "src/BasePool.php": """
        <?php
        namespace App\\Pool;

        abstract class BasePool { protected function shared() {} }
        interface Runner { public function submit($job); }
        trait Countable {}
        enum State: string { case Idle = 'idle'; }
        """,
    "src/Util/Helpers.php": """
        <?php
        namespace App\\Util;

        class Helpers { public static function log($x) {} }
        class Worker {}
        """,
}

KT_FILES = {
    "src/main/kotlin/ex/pool/Pool.kt": """
        package ex.pool

        import ex.util.Helpers
        import ex.util.*

        /** A pool of workers. */
        class Pool(val size: Int) : BasePool(), Runner {
            override fun submit(job: Int) {
                init()
                Helpers.log(job)
                Worker().work()
                this.shared()
            }

            private fun init() {}

            companion object {
                fun create(): Pool = Pool(1)
            }
        }

        interface Runner {
            fun submit(job: Int)
        }

        enum class State {
            IDLE,
            BUSY,
        }

        object Registry {
            fun register() {}
        }

        typealias Jobs = List<Int>

        fun String.shout(): String = uppercase()
        """,
    "src/main/kotlin/ex/pool/BasePool.kt": """
        package ex.pool

        open class BasePool {
            fun shared() {}
        }
        """,
    "src/test/kotlin/ex/pool/PoolTest.kt": """
        package ex.pool

        class PoolTest {
            fun testSubmit() {
                Pool(1).submit(2)
            }
        }
        """,
    "src/main/kotlin/ex/util/Util.kt": """
        package ex.util

        object Helpers {
            fun log(x: Int) {}
        }

        class Worker {
            fun work() {}
        }
        """,
}


def _build(tmp_path_factory, name: str, files: dict[str, str]):
    return build(write_files(tmp_path_factory.mktemp(name) / "repo", files))


@pytest.fixture(scope="module")
def c(tmp_path_factory):
    return _build(tmp_path_factory, "c", C_FILES)


@pytest.fixture(scope="module")
def cpp(tmp_path_factory):
    return _build(tmp_path_factory, "cpp", CPP_FILES)


@pytest.fixture(scope="module")
def cs(tmp_path_factory):
    return _build(tmp_path_factory, "cs", CS_FILES)


@pytest.fixture(scope="module")
def rb(tmp_path_factory):
    return _build(tmp_path_factory, "rb", RB_FILES)


@pytest.fixture(scope="module")
def php(tmp_path_factory):
    return _build(tmp_path_factory, "php", PHP_FILES)


@pytest.fixture(scope="module")
def kt(tmp_path_factory):
    return _build(tmp_path_factory, "kt", KT_FILES)


# ------------------------------------------------------------------------------------------------------------ C


def test_c_definitions(c) -> None:
    P = "file::src/pool.c"
    s = c.node(f"{P}::struct::pool")
    assert (s.kind, s.line_start, s.line_end, s.doc) == (KINDS["struct"], 5, 7, "A pool of workers.")
    assert c.node(f"{P}::struct::value").kind == KINDS["struct"]  # a union
    assert c.node(f"{P}::enum::state").kind == KINDS["enum"]
    # one typedef, two names: each its own node at file level, the anonymous struct is not a node
    assert c.node(f"{P}::type::point_t").line_start == 15
    assert c.node(f"{P}::type::point_p").line_start == 15
    f = c.node(f"{P}::fn::pool_submit")
    assert (f.kind, f.line_start, f.line_end) == (KINDS["fn"], 21, 24)
    assert f.signature == "int pool_submit(pool_t *p, int job)"
    H = "file::src/pool.h"
    assert c.node(f"{H}::type::pool_t").kind == KINDS["type"]
    assert c.node(f"{H}::type::pool_cb").kind == KINDS["type"]  # function pointer typedef
    assert f"{H}::fn::pool_submit" not in c.nodes  # a prototype is not a definition
    assert c.node(P).lang == "c" and c.node(H).lang == "c"


def test_c_includes_and_calls(c) -> None:
    P = "file::src/pool.c"
    assert c.has(P, "file::src/pool.h", "imports")
    assert c.has("file::src/main.c", "file::src/pool.h", "imports")
    assert "stdlib.h" in c.parts.external_imports["src/pool.c"]
    assert c.has(f"{P}::fn::pool_submit", f"{P}::fn::helper", "calls")
    assert c.has("file::src/main.c::fn::main", f"{P}::fn::pool_submit", "calls")  # across files
    assert_invariants(c)


# ---------------------------------------------------------------------------------------------------------- C++


def test_cpp_definitions_and_containment(cpp) -> None:
    H = "file::include/pool.hpp"
    assert cpp.node(H).lang == "cpp"
    ns = cpp.node(f"{H}::mod::ex")
    assert ns.kind == KINDS["mod"]
    pool = cpp.node(f"{H}::mod::ex::class::Pool")
    assert (pool.kind, pool.line_start, pool.line_end) == (KINDS["class"], 9, 18)
    assert pool.qname == "ex.Pool"
    assert cpp.node(f"{H}::mod::ex::class::Pool::fn::size").line_start == 15  # inline method
    assert cpp.node(f"{H}::mod::ex::type::JobId").kind == KINDS["type"]  # using X = …
    assert cpp.node(f"{H}::mod::ex::enum::State").kind == KINDS["enum"]
    assert cpp.node(f"{H}::mod::ex::struct::Job").kind == KINDS["struct"]
    # declarations inside the class body are not definitions; the out-of-line one is, with its receiver
    assert f"{H}::mod::ex::class::Pool::fn::submit" not in cpp.nodes
    S = "file::src/pool.cc"
    sub = cpp.node(f"{S}::mod::ex::recv::Pool::fn::submit")
    assert (sub.kind, sub.line_start) == (KINDS["fn"], 5)


def test_cpp_resolution(cpp) -> None:
    H = "file::include/pool.hpp"
    S = "file::src/pool.cc"
    assert cpp.has(S, H, "imports")
    assert cpp.has(f"{H}::mod::ex::class::Pool", f"{H}::mod::ex::class::Base", "inherits")
    sub = f"{S}::mod::ex::recv::Pool::fn::submit"
    assert cpp.has(sub, f"{H}::mod::ex::class::Base::fn::shared", "calls")  # this-> through the base class
    assert cpp.has(sub, f"{S}::mod::ex::fn::helper", "calls")
    assert cpp.has(f"{S}::fn::run", f"{H}::mod::ex::struct::Job", "calls")  # new ex::Job()
    assert_invariants(cpp)


def test_cpp_operator_names() -> None:
    blob = extract_file("a.cpp", b"struct A { bool operator==(const A&) const { return true; } };\n", "cpp")
    assert [d["name"] for d in blob["definitions"]] == ["A", "operator =="]


def test_h_header_language_from_its_text() -> None:
    assert extract_file("x.h", b"int f(void);\n", "c")["lang"] == "c"
    assert extract_file("x.h", b"namespace a { class B {}; }\n", "c")["lang"] == "cpp"


# ----------------------------------------------------------------------------------------------------------- C#


def test_csharp_definitions(cs) -> None:
    P = "file::src/Pool.cs"
    ns = f"{P}::mod::Ex.Pool"
    cls = cs.node(f"{ns}::class::Pool")
    assert (cls.kind, cls.line_start, cls.line_end, cls.doc) == (KINDS["class"], 7, 12, "A pool of workers.")
    assert cs.node(f"{ns}::class::Pool::fn::Pool").line_start == 9  # constructor
    assert cs.node(f"{ns}::interface::IRunner").kind == KINDS["interface"]
    assert cs.node(f"{ns}::struct::Point").kind == KINDS["struct"]
    assert cs.node(f"{ns}::enum::State").kind == KINDS["enum"]
    assert cs.node(f"{ns}::class::Job").kind == KINDS["class"]  # record
    assert cs.node(f"{ns}::type::Callback").kind == KINDS["type"]  # delegate
    assert cs.node("file::src/Util.cs::mod::Ex.Util").line_start == 1  # file-scoped namespace


def test_csharp_resolution(cs) -> None:
    P = "file::src/Pool.cs"
    ns = f"{P}::mod::Ex.Pool"
    U = "file::src/Util.cs"
    assert cs.has(f"{ns}::class::Pool", "file::src/BasePool.cs::mod::Ex.Pool::class::BasePool", "inherits")
    assert cs.has(f"{ns}::class::Pool", f"{ns}::interface::IRunner", "inherits")
    sub = f"{ns}::class::Pool::fn::Submit"
    assert cs.has(sub, f"{U}::class::Helpers::fn::Log", "calls")  # Type.M() through ``using Ex.Util;``
    assert cs.has(sub, f"{U}::class::Worker", "calls")  # new Worker()
    assert cs.has(sub, f"{ns}::class::Pool::fn::Init", "calls")  # this.Init()
    assert cs.has(f"{ns}::class::Pool::fn::Pool", f"{ns}::class::Pool::fn::Init", "calls")  # implicit this
    init = f"{ns}::class::Pool::fn::Init"
    assert cs.has(init, "file::src/BasePool.cs::mod::Ex.Pool::class::BasePool::fn::Shared", "calls")
    assert "System.*" in cs.parts.external_imports["src/Pool.cs"]
    assert cs.has(P, U, "imports")  # ``using Ex.Util;``: the file a used name comes from
    assert_invariants(cs)


# --------------------------------------------------------------------------------------------------------- Ruby


def test_ruby_definitions(rb) -> None:
    P = "file::lib/ex/pool.rb"
    m = rb.node(f"{P}::mod::Ex")
    assert m.kind == KINDS["mod"]
    cls = rb.node(f"{P}::mod::Ex::class::Pool")
    assert (cls.kind, cls.line_start, cls.line_end, cls.doc) == (KINDS["class"], 6, 22, "A pool of workers.")
    assert rb.node(f"{P}::mod::Ex::class::Pool::fn::initialize").line_start == 9
    assert rb.node(f"{P}::mod::Ex::class::Pool::fn::build").line_start == 13  # def self.build
    assert rb.node("file::lib/ex/helpers.rb::mod::Ex::mod::Helpers").kind == KINDS["mod"]


def test_ruby_resolution(rb) -> None:
    P = "file::lib/ex/pool.rb"
    H = "file::lib/ex/helpers.rb"
    B = "file::lib/ex/base.rb"
    assert rb.has(P, B, "imports")  # require 'ex/base' (a path under lib/)
    assert rb.has(P, H, "imports")  # require_relative 'helpers'
    cls = f"{P}::mod::Ex::class::Pool"
    assert rb.has(cls, f"{B}::mod::Ex::class::Base", "inherits")
    assert rb.has(cls, f"{H}::mod::Ex::mod::Helpers", "inherits")  # include Helpers
    sub = f"{cls}::fn::submit"
    assert rb.has(sub, f"{H}::mod::Ex::mod::Helpers::fn::helper", "calls")  # mixed-in method
    assert rb.has(sub, f"{H}::mod::Ex::class::Worker", "calls")  # Worker.new
    assert_invariants(rb)


# ---------------------------------------------------------------------------------------------------------- PHP


def test_php_definitions(php) -> None:
    P = "file::src/Pool.php"
    cls = php.node(f"{P}::class::Pool")
    assert (cls.kind, cls.line_start, cls.line_end, cls.doc) == (KINDS["class"], 8, 22, "A pool of workers.")
    assert php.node(f"{P}::class::Pool::fn::submit").line_start == 12
    assert php.node(f"{P}::fn::helper").kind == KINDS["fn"]
    B = "file::src/BasePool.php"
    assert php.node(f"{B}::interface::Runner").kind == KINDS["interface"]
    assert php.node(f"{B}::trait::Countable").kind == KINDS["trait"]
    assert php.node(f"{B}::enum::State").kind == KINDS["enum"]
    assert php.node(f"{P}::mod::App\\Pool").kind == KINDS["mod"]


def test_php_resolution(php) -> None:
    P = "file::src/Pool.php"
    B = "file::src/BasePool.php"
    U = "file::src/Util/Helpers.php"
    cls = f"{P}::class::Pool"
    assert php.has(cls, f"{B}::class::BasePool", "inherits")  # same namespace
    assert php.has(cls, f"{B}::interface::Runner", "implements")
    assert php.has(cls, f"{B}::trait::Countable", "inherits")  # trait use
    sub = f"{cls}::fn::submit"
    assert php.has(sub, f"{cls}::fn::init", "calls")  # $this->init()
    assert php.has(sub, f"{U}::class::Helpers::fn::log", "calls")  # use App\Util\Helpers; Helpers::log()
    assert php.has(sub, f"{U}::class::Worker", "calls")  # group use; new Worker()
    assert php.has(sub, f"{B}::class::BasePool::fn::shared", "calls")  # parent::shared()
    assert php.has(sub, f"{P}::fn::helper", "calls")
    assert php.has(P, f"{U}::class::Helpers", "imports")
    assert_invariants(php)


# ------------------------------------------------------------------------------------------------------- Kotlin


def test_kotlin_definitions(kt) -> None:
    P = "file::src/main/kotlin/ex/pool/Pool.kt"
    cls = kt.node(f"{P}::class::Pool")
    assert (cls.kind, cls.line_start, cls.line_end, cls.doc) == (KINDS["class"], 7, 20, "A pool of workers.")
    assert kt.node(f"{P}::class::Pool::fn::submit").line_start == 8
    assert kt.node(f"{P}::class::Pool::class::Companion::fn::create").kind == KINDS["fn"]
    assert kt.node(f"{P}::interface::Runner").kind == KINDS["interface"]
    assert kt.node(f"{P}::enum::State").kind == KINDS["enum"]
    assert kt.node(f"{P}::class::Registry").kind == KINDS["class"]  # object
    assert kt.node(f"{P}::type::Jobs").kind == KINDS["type"]
    assert kt.node(f"{P}::fn::shout").kind == KINDS["fn"]  # extension function


def test_kotlin_resolution(kt) -> None:
    P = "file::src/main/kotlin/ex/pool/Pool.kt"
    B = "file::src/main/kotlin/ex/pool/BasePool.kt"
    U = "file::src/main/kotlin/ex/util/Util.kt"
    cls = f"{P}::class::Pool"
    assert kt.has(cls, f"{B}::class::BasePool", "inherits")
    assert kt.has(cls, f"{P}::interface::Runner", "inherits")
    sub = f"{cls}::fn::submit"
    assert kt.has(sub, f"{cls}::fn::init", "calls")  # implicit this
    assert kt.has(sub, f"{U}::class::Helpers::fn::log", "calls")  # object method through an import
    assert kt.has(sub, f"{U}::class::Worker", "calls")  # constructor call through a star import
    assert kt.has(sub, f"{B}::class::BasePool::fn::shared", "calls")  # this.shared() via the base class
    assert kt.has(P, f"{U}::class::Helpers", "imports")
    assert_invariants(kt)


def test_test_subjects(kt, rb) -> None:
    P = "file::src/main/kotlin/ex/pool/Pool.kt"
    T = "file::src/test/kotlin/ex/pool/PoolTest.kt"
    assert kt.node(T).is_test and kt.has(T, P, "tests")  # PoolTest.kt tests Pool.kt
    assert kt.has(f"{T}::class::PoolTest::fn::testSubmit", f"{P}::class::Pool::fn::submit", "tests")
    S = "file::spec/ex/pool_spec.rb"
    assert rb.node(S).is_test and rb.has(S, "file::lib/ex/pool.rb", "tests")  # pool_spec.rb requires and tests it


def test_kotlin_definitions_recovered_from_a_syntax_error() -> None:
    # one broken expression must not hide the definitions around it (grammar-recovered or read from the ERROR text)
    src = b"class Broken {\n  fun one() { val x = ) }\n  fun two() {}\n}\nclass After {\n  fun three() {}\n}\n"
    blob = extract_file("m.kt", src, "kotlin")
    assert blob["parse_error"] is not None
    names = [(d["name"], d["kind"], d["line_start"]) for d in blob["definitions"]]
    assert names == [("Broken", "class", 1), ("one", "fn", 2), ("two", "fn", 3), ("After", "class", 5),
                     ("three", "fn", 6)]


def test_kotlin_annotated_annotation_class() -> None:
    # ``@A annotation class X`` is read by the grammar as an infix expression, without a syntax error
    blob = extract_file("m.kt", b"@DslMarker\nannotation class KoinDslMarker\n", "kotlin")
    assert [(d["name"], d["kind"]) for d in blob["definitions"]] == [("KoinDslMarker", "class")]


def test_cpp_macro_after_the_declarator() -> None:
    # ``virtual void close() OVERRIDE_MACRO {}``: the grammar reads the macro as the declarator; the name stays close
    src = b"class A {\n public:\n  virtual void close() CXX11_OVERRIDE {}\n};\n"
    assert [d["name"] for d in extract_file("a.h", src, "cpp")["definitions"]] == ["A", "close"]


def test_csharp_operators() -> None:
    src = (b"class A {\n  public static bool operator ==(A a, A b) => true;\n"
           b"  public static implicit operator int(A a) => 0;\n}\n")
    assert [d["name"] for d in extract_file("A.cs", src, "csharp")["definitions"]] == ["A", "operator ==",
                                                                                       "operator int"]


@pytest.mark.parametrize(("path", "lang", "is_test"), [
    ("test/pool_test.c", "c", True), ("src/pool.c", "c", False), ("tests/unit/x.cc", "cpp", True),
    ("Src/Newtonsoft.Json.Tests/Linq/JTokenTests.cs", "csharp", True), ("src/Serilog/Log.cs", "csharp", False),
    ("spec/models/user_spec.rb", "ruby", True), ("lib/ex/pool.rb", "ruby", False),
    ("tests/Unit/PoolTest.php", "php", True), ("src/Pool.php", "php", False),
    ("okhttp/src/jvmTest/kotlin/okhttp3/CallTest.kt", "kotlin", True),
    ("okhttp/src/main/kotlin/Call.kt", "kotlin", False),
])
def test_test_files(path: str, lang: str, is_test: bool) -> None:
    assert extract_file(path, b"\n", lang)["is_test"] is is_test
