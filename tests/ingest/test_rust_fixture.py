"""Golden expectations for a Rust crate (graph.md §3 impl / trait ids, §6 Rust, §7 Cargo / mod resolution)."""

from __future__ import annotations

import pytest
from ingest_helpers import assert_invariants, build, write_files
from m1nd.graph.schema import KINDS

FILES = {
    "Cargo.toml": """
        [package]
        name = "my-crate"
        version = "0.1.0"
        """,
    "src/lib.rs": """
        //! The crate.
        pub mod pool;
        mod util;

        pub use crate::pool::Pool;
        """,
    "src/pool.rs": """
        use std::fmt;
        use crate::util::{helper, inner::deep as deepest};
        use super::util;

        /// A pool.
        pub struct Pool<T> {
            size: usize,
            items: Vec<T>,
        }

        pub trait Base {}

        pub trait Runner: Base {
            fn go(&self);
            fn run(&self) {
                self.go();
            }
        }

        impl<T> Pool<T> {
            pub fn new() -> Self {
                helper();
                Self::build()
            }

            fn build() -> Self {
                deepest();
                util::helper();
                Pool { size: 0, items: Vec::new() }
            }
        }

        impl<T> fmt::Display for Pool<T> {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                Ok(())
            }
        }

        impl<T> Base for Pool<T> {}

        impl<T> Runner for Pool<T> {
            fn go(&self) {
                self.run();
            }
        }

        pub mod shapes {
            pub fn area() -> u32 { 1 }
        }

        #[cfg(test)]
        mod tests {
            use super::*;

            #[test]
            fn test_new() {
                let p: Pool<u8> = Pool::new();
                shapes::area();
            }
        }
        """,
    "src/util/mod.rs": """
        pub mod inner;

        pub fn helper() -> u32 {
            inner::deep()
        }
        """,
    "src/util/inner.rs": """
        pub fn deep() -> u32 { 2 }
        """,
    "tests/pool.rs": """
        use my_crate::pool::Pool;

        #[test]
        fn test_new() {
            let _p: Pool<u8> = Pool::new();
        }
        """,
}

P = "file::src/pool.rs"


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    return build(write_files(tmp_path_factory.mktemp("rs") / "repo", FILES))


def test_definitions(g) -> None:
    s = g.node(f"{P}::struct::Pool")
    assert s.kind == KINDS["struct"] and (s.line_start, s.line_end) == (6, 9) and s.doc == "A pool."
    assert g.node(f"{P}::trait::Runner").kind == KINDS["trait"]
    assert g.node(f"{P}::trait::Runner::fn::run").kind == KINDS["fn"]  # trait default method
    impl = g.node(f"{P}::impl::Pool")
    assert impl.kind == KINDS["impl"] and impl.signature == "impl<T> Pool<T>"
    assert g.node(f"{P}::impl::Pool::fn::new").qname == "Pool.new"
    assert g.node(f"{P}::impl::Pool:Display::fn::fmt").kind == KINDS["fn"]
    assert f"{P}::impl::Pool:Runner::fn::go" in g.nodes
    assert g.node(f"{P}::mod::shapes").kind == KINDS["mod"]
    assert f"{P}::mod::shapes::fn::area" in g.nodes
    assert g.node(f"{P}::mod::tests").is_test
    assert g.node(f"{P}::mod::tests::fn::test_new").is_test
    assert g.node("file::src/lib.rs").doc == "The crate."
    assert g.node("file::tests/pool.rs").is_test


def test_hierarchy(g) -> None:
    # impl Trait for Type -> implements from the impl and from the type
    assert g.has(f"{P}::impl::Pool:Runner", f"{P}::trait::Runner", "implements")
    assert g.has(f"{P}::struct::Pool", f"{P}::trait::Runner", "implements")
    assert g.has(f"{P}::impl::Pool", f"{P}::struct::Pool", "references")
    # supertrait
    assert g.has(f"{P}::trait::Runner", f"{P}::trait::Base", "inherits")
    # impl contains its methods
    assert g.has(f"{P}::impl::Pool", f"{P}::impl::Pool::fn::new", "contains")
    # std traits are outside the graph
    assert g.out(f"{P}::impl::Pool:Display", "implements") == []


def test_calls(g) -> None:
    new = f"{P}::impl::Pool::fn::new"
    assert g.has(new, "file::src/util/mod.rs::fn::helper", "calls")  # use crate::util::{helper}
    assert g.has(new, f"{P}::impl::Pool::fn::build", "calls")  # Self::build()
    build_ = f"{P}::impl::Pool::fn::build"
    assert g.has(build_, "file::src/util/inner.rs::fn::deep", "calls")  # aliased group import
    assert g.has(
        build_, "file::src/util/mod.rs::fn::helper", "calls"
    )  # module path through `use super::util`
    assert g.has(build_, f"{P}::struct::Pool", "calls")  # struct literal
    # self.m() inside a trait default method -> the trait's method; inside a trait impl -> through the type
    assert g.has(f"{P}::trait::Runner::fn::run", f"{P}::trait::Runner::fn::go", "calls")
    assert g.has(f"{P}::impl::Pool:Runner::fn::go", f"{P}::trait::Runner::fn::run", "calls")
    t = f"{P}::mod::tests::fn::test_new"
    assert g.has(t, new, "calls")  # Type::f through `use super::*`
    assert g.has(t, f"{P}::mod::shapes::fn::area", "calls")
    assert g.has("file::src/util/mod.rs::fn::helper", "file::src/util/inner.rs::fn::deep", "calls")


def test_modules_and_imports(g) -> None:
    assert g.has("file::src/lib.rs", P, "declares_module")
    assert g.has("file::src/lib.rs", "file::src/util/mod.rs", "declares_module")
    assert g.has("file::src/util/mod.rs", "file::src/util/inner.rs", "declares_module")
    assert g.has("file::src/lib.rs", f"{P}::struct::Pool", "reexports")
    assert g.has(P, "file::src/util/mod.rs::fn::helper", "imports")
    assert "std::fmt" in g.parts.external_imports["src/pool.rs"]
    # `use super::*` inside `mod tests` refers to this file's module, not to the crate root
    assert not g.has(P, "file::src/lib.rs", "imports")
    # workspace crate name from Cargo.toml (`-` -> `_`) used by an integration test
    assert g.has("file::tests/pool.rs", f"{P}::struct::Pool", "imports")
    assert g.has("file::tests/pool.rs::fn::test_new", f"{P}::impl::Pool::fn::new", "calls")
    assert g.has("file::tests/pool.rs", P, "tests")
    assert g.has("file::tests/pool.rs::fn::test_new", f"{P}::impl::Pool::fn::new", "tests")
    # #[test] inside `#[cfg(test)] mod tests` of a regular file: the file itself is the subject
    assert g.has(f"{P}::mod::tests::fn::test_new", f"{P}::impl::Pool::fn::new", "tests")


def test_invariants(g) -> None:
    assert_invariants(g)
