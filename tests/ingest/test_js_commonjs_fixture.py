"""JavaScript / TypeScript constructs of issue 12: CommonJS exports, object-literal methods, prototype methods,
class fields, default exports, re-exports, ``.mjs`` / ``.cjs``, TS namespaces, overloads and declaration files."""

from __future__ import annotations

import pytest
from ingest_helpers import assert_invariants, build, write_files
from m1nd.graph.schema import KINDS
from m1nd.ingest.extract.javascript import is_declaration_file

FILES = {
    "lib/util.js": """
        exports.slugify = (text) => text.toLowerCase();
        exports.pad = function (s, n) { return s.padStart(n); };
        module.exports.trim = function trim(s) { return s.trim(); };
        """,
    "lib/api.js": """
        module.exports = {
          list() { return []; },
          get: function (id) { return id; },
          remove: (id) => id,
          nested: { deep() {} },
          'kebab-case': function () {},
        };
        """,
    "lib/pool.js": """
        module.exports = class Pool {
          size = 0;
          onDone = (job) => { this.log(job); };
          acquire() { return 1; }
          log(job) {}
        };
        """,
    "lib/anon.cjs": """
        module.exports = function () { return 1; };
        """,
    "lib/index.js": """
        module.exports = require('./util');
        """,
    "lib/view.js": """
        function View(name) { this.name = name; }
        View.prototype.lookup = function lookup(name) { return name; };
        View.prototype.render = function () {};
        Other.prototype = { a() {}, b: function () {} };
        function Other() {}
        const app = {};
        app.use = function use(fn) { this.on('mount', function onmount(parent) {}); };
        exports.View = View;
        """,
    "app.js": """
        const { slugify, pad: leftPad } = require('./lib/util');
        const trim = require('./lib/util').trim;
        const Pool = require('./lib/pool');
        const api = require('./lib/api');

        function main() {
          slugify('x');
          leftPad('x', 2);
          trim(' x ');
          const handler = () => api.list();
          return new Pool();
        }
        """,
    "esm/mod.mjs": """
        export default function named() { return 1; }
        export const helper = () => 2;
        """,
    "esm/anon.mjs": """
        export default class { run() {} }
        """,
    "esm/reexport.mjs": """
        export { helper as aid } from './mod.mjs';
        export * as all from './mod.mjs';
        """,
    "esm/use.mjs": """
        import named from './mod.mjs';
        import { aid } from './reexport.mjs';
        export function go() { named(); aid(); }
        """,
    "ts/shapes.ts": """
        export namespace Geo.Shapes {
          export function area(): number { return 1; }
        }
        export function parse(a: string): number;
        export function parse(a: number): number;
        export function parse(a: any): number { return 0; }
        export abstract class Base {
          abstract run(): void;
          tick(n: number): void;
          tick(n: any) {}
        }
        """,
    "ts/types.d.ts": """
        declare function describe(name: string): void;
        export interface Options {
          on(event: 'a'): void;
          on(event: 'b'): void;
          close(): void;
        }
        export declare class Client { send(x: string): void; }
        """,
}

U = "file::lib/util.js"


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    return build(write_files(tmp_path_factory.mktemp("cjs") / "repo", FILES))


def test_invariants(g) -> None:
    assert_invariants(g)


def test_commonjs_exports(g) -> None:
    assert g.node(f"{U}::fn::slugify").kind == KINDS["fn"]
    assert g.node(f"{U}::fn::pad").line_start == 2
    assert g.node(f"{U}::fn::trim").line_start == 3


def test_module_exports_object_literal(g) -> None:
    api = "file::lib/api.js"
    for name in ("list", "get", "remove", "deep", "kebab-case"):
        assert g.node(f"{api}::fn::{name}").kind == KINDS["fn"]
    assert g.node(f"{api}::fn::get").line_start == 3


def test_module_exports_class(g) -> None:
    p = "file::lib/pool.js::class::Pool"
    assert g.node(p).kind == KINDS["class"] and g.node(p).line_start == 1
    assert g.has(p, f"{p}::fn::acquire", "contains")
    assert g.node(f"{p}::fn::onDone").line_start == 3  # class field holding an arrow function
    assert g.has(f"{p}::fn::onDone", f"{p}::fn::log", "calls")
    assert f"{p}::fn::size" not in g.nodes
    assert g.node("file::lib/anon.cjs::fn::default").lang == "javascript"  # .cjs walked and parsed


def test_prototype_and_member_assignments(g) -> None:
    v = "file::lib/view.js"
    assert g.node(f"{v}::fn::View::fn::lookup").qname == "View.lookup"
    assert f"{v}::fn::View::fn::render" in g.nodes
    assert f"{v}::fn::Other::fn::a" in g.nodes and f"{v}::fn::Other::fn::b" in g.nodes
    use = g.node(f"{v}::fn::use")
    assert use.qname == "app.use"
    assert f"{v}::fn::use::fn::onmount" in g.nodes  # a named callback


def test_require_bindings_resolve(g) -> None:
    main = "file::app.js::fn::main"
    assert g.has(main, f"{U}::fn::slugify", "calls")
    assert g.has(main, f"{U}::fn::pad", "calls")  # destructured with a new local name
    assert g.has(main, f"{U}::fn::trim", "calls")  # require('…').trim
    assert g.has("file::app.js", f"{U}::fn::slugify", "imports")
    assert "file::app.js::fn::main::fn::handler" in g.nodes  # nested arrow function
    # module.exports = require('./util') re-exports the module
    assert g.has("file::lib/index.js", U, "reexports")


def test_default_exports_and_reexports(g) -> None:
    assert "file::esm/mod.mjs::fn::named" in g.nodes
    assert g.node("file::esm/anon.mjs::class::default").kind == KINDS["class"]
    assert "file::esm/anon.mjs::class::default::fn::run" in g.nodes
    go = "file::esm/use.mjs::fn::go"
    assert g.has(go, "file::esm/mod.mjs::fn::named", "calls")  # default import
    assert g.has(go, "file::esm/mod.mjs::fn::helper", "calls")  # through `export { helper as aid } from`
    assert g.has("file::esm/reexport.mjs", "file::esm/mod.mjs", "reexports")


def test_typescript_namespaces_and_overloads(g) -> None:
    s = "file::ts/shapes.ts"
    assert g.node(f"{s}::mod::Geo.Shapes").kind == KINDS["mod"]
    assert f"{s}::mod::Geo.Shapes::fn::area" in g.nodes
    parse = g.node(f"{s}::fn::parse")
    assert (parse.line_start, parse.line_end) == (4, 6) and f"{s}::fn::parse#2" not in g.nodes
    assert parse.signature == "export function parse(a: any): number"
    assert g.node(f"{s}::class::Base::fn::run").line_start == 8  # abstract method
    assert (g.node(f"{s}::class::Base::fn::tick").line_start, g.node(f"{s}::class::Base::fn::tick").line_end) == (9, 10)


def test_declaration_files(g) -> None:
    d = "file::ts/types.d.ts"
    assert g.node(d).lang == "typescript"
    assert g.node(f"{d}::fn::describe").signature == "declare function describe(name: string): void"
    on = g.node(f"{d}::interface::Options::fn::on")  # two overloads, one node
    assert (on.line_start, on.line_end) == (3, 4) and f"{d}::interface::Options::fn::on#2" not in g.nodes
    assert f"{d}::interface::Options::fn::close" in g.nodes
    assert f"{d}::class::Client::fn::send" in g.nodes
    # the path rule ranking uses to tell declarations from implementations
    assert is_declaration_file("ts/types.d.ts") and is_declaration_file("a/b.d.mts")
    assert not is_declaration_file("ts/shapes.ts")
