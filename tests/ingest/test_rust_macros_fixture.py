"""Rust constructs of issue 12: items inside item-wrapping macros (``cfg_rt! { … }``), ``macro_rules!`` macros as
nodes and their invocations, trait associated types, impl blocks in another file than their type."""

from __future__ import annotations

import pytest
from ingest_helpers import assert_invariants, build, write_files
from m1nd.graph.schema import KINDS
from m1nd.ingest.extract import extract_file

FILES = {
    "Cargo.toml": """
        [package]
        name = "rt"
        version = "0.1.0"
        """,
    "src/lib.rs": """
        #[macro_use]
        mod macros;
        pub mod rt;
        pub mod pool;
        mod pool_ext;
        """,
    "src/macros.rs": """
        macro_rules! cfg_rt {
            ($($item:item)*) => { $( #[cfg(feature = "rt")] $item )* }
        }

        #[macro_export]
        macro_rules! ensure {
            ($e:expr) => { assert!($e) };
        }
        """,
    "src/rt.rs": """
        cfg_rt! {
            /// The runtime.
            pub struct Runtime { n: usize }

            impl Runtime {
                pub fn new() -> Self { Runtime { n: 0 } }
            }

            cfg_net! {
                pub fn bind() {}
            }
        }

        pub fn spawn() {
            ensure!(true);
            println!("not a graph macro");
        }

        lazy_static! {
            static ref NOT_ITEMS: u8 = 1;
        }
        """,
    "src/pool.rs": """
        pub struct Pool;

        pub trait Reset {
            type Out;
            fn reset(&mut self) -> Self::Out;
        }
        """,
    "src/pool_ext.rs": """
        use crate::pool::{Pool, Reset};

        impl Pool {
            pub fn grow(&self) {}
        }

        impl Reset for Pool {
            type Out = ();
            fn reset(&mut self) {}
        }

        pub fn use_it() {
            Pool::grow(&Pool);
        }
        """,
}

RT = "file::src/rt.rs"


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    return build(write_files(tmp_path_factory.mktemp("rs") / "repo", FILES))


def test_invariants(g) -> None:
    assert_invariants(g)


def test_items_inside_wrapper_macros(g) -> None:
    rt = g.node(f"{RT}::struct::Runtime")
    assert rt.kind == KINDS["struct"] and rt.line_start == 3 and rt.doc == "The runtime."
    assert rt.signature == "pub struct Runtime"
    new = g.node(f"{RT}::impl::Runtime::fn::new")
    assert (new.line_start, new.line_end) == (6, 6)
    assert g.has(f"{RT}::impl::Runtime", f"{RT}::struct::Runtime", "references")
    assert g.node(f"{RT}::fn::bind").line_start == 10  # nested wrapper
    assert g.has(RT, f"{RT}::struct::Runtime", "contains")


def test_wrapper_unwrapping_keeps_lines_and_skips_non_items() -> None:
    src = b"cfg_x! {\n    fn a() {}\n}\nthread_local! { static A: u8 = 1; }\nfoo! { not items ( }\n"
    b = extract_file("src/x.rs", src, "rust")
    assert [(d["id"], d["line_start"]) for d in b["definitions"]] == [("fn::a", 2)]


def test_macro_rules_nodes_and_calls(g) -> None:
    m = g.node("file::src/macros.rs::macro::cfg_rt")
    assert m.kind == KINDS["macro"] and m.signature == "macro_rules! cfg_rt" and m.line_start == 1
    assert g.node("file::src/macros.rs::macro::ensure").line_start == 6  # attributes stay outside the span
    assert g.has(f"{RT}::fn::spawn", "file::src/macros.rs::macro::ensure", "calls")


def test_associated_types_and_cross_file_impls(g) -> None:
    p, ext = "file::src/pool.rs", "file::src/pool_ext.rs"
    assert g.node(f"{p}::trait::Reset::type::Out").kind == KINDS["type"]
    assert g.node(f"{ext}::impl::Pool:Reset::type::Out").kind == KINDS["type"]
    # an impl block in another file than its type is attached to it; trait impls are linked both ways
    assert g.has(f"{ext}::impl::Pool", f"{p}::struct::Pool", "references")
    assert g.has(f"{ext}::impl::Pool:Reset", f"{p}::trait::Reset", "implements")
    assert g.has(f"{p}::struct::Pool", f"{p}::trait::Reset", "implements")
    assert g.has(f"{ext}::fn::use_it", f"{ext}::impl::Pool::fn::grow", "calls")
