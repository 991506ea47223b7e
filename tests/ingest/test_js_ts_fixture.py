"""Golden expectations for JavaScript, TypeScript and TSX fixtures (graph.md §6, §7 JS/TS module resolution)."""

from __future__ import annotations

import pytest
from ingest_helpers import assert_invariants, build, write_files
from m1nd.graph.schema import KINDS

FILES = {
    "tsconfig.json": """
        {
          // comments and trailing commas are tolerated
          "compilerOptions": {
            "baseUrl": ".",
            "paths": { "@lib/*": ["src/lib/*"], },
          },
        }
        """,
    "src/lib/pool.ts": """
        import { Job } from './job';
        import * as util from "../util";

        export interface Runner {
          run(job: Job): void;
        }

        /** A pool of workers. */
        export class Pool implements Runner {
          size: number = 0;
          onDone = (j: Job) => { this.log(j); };

          constructor(private n: number) {}

          run(job: Job): void {
            this.check(job);
            util.helper(job);
          }

          check(job: Job): boolean { return true; }
          log(j: Job) {}
        }

        export function makePool(n: number): Pool {
          return new Pool(n);
        }

        function overloaded(a: string): void;
        function overloaded(a: any) {}

        export type Alias = Pool | Job;
        export enum Color { Red, Green }
        export namespace Shapes { export function area(): number { return 1; } }
        """,
    "src/lib/job.ts": """
        export class Job { id = 1; }
        export class Base {}
        export class SpecialJob extends Job {}
        """,
    "src/lib/index.ts": """
        export { Pool, makePool } from './pool';
        export * from './job';
        """,
    "src/util.js": """
        function helper(job) { return job; }
        const arrow = (x) => x * 2;
        module.exports = { helper, arrow };
        export default function () { return 1; }
        """,
    "src/app.tsx": """
        import { Pool } from '@lib/pool';
        import { Job } from './lib';
        import React from 'react';

        export function App() {
          const p = new Pool(2);
          p.run(new Job());
          return <Widget size={1} />;
        }

        function Widget(props: any) { return null; }
        """,
    "src/cjs.js": """
        const { helper } = require('./util');
        const util = require('./util.js');

        class Consumer extends Object {
          go() { helper(1); util.arrow(2); }
        }
        """,
    "src/lib/pool.test.ts": """
        import { makePool } from './pool';
        describe('pool', () => { it('works', () => { makePool(1); }); });
        """,
}

P = "file::src/lib/pool.ts"


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    return build(write_files(tmp_path_factory.mktemp("js") / "repo", FILES))


def test_definitions(g) -> None:
    assert g.node(P).lang == "typescript"
    assert g.node("file::src/app.tsx").lang == "tsx"
    assert g.node("file::src/util.js").lang == "javascript"
    assert g.node(f"{P}::interface::Runner").kind == KINDS["interface"]
    pool = g.node(f"{P}::class::Pool")
    assert pool.kind == KINDS["class"] and (pool.line_start, pool.line_end) == (9, 22)
    assert pool.doc == "A pool of workers."
    assert pool.signature == "export class Pool implements Runner"
    assert g.node(f"{P}::class::Pool::fn::constructor").kind == KINDS["fn"]
    assert g.node(f"{P}::class::Pool::fn::onDone").line_start == 11  # arrow-function field
    assert g.node(f"{P}::class::Pool::fn::run").qname == "Pool.run"
    assert g.node(f"{P}::fn::makePool").kind == KINDS["fn"]
    # an overload signature and its implementation are one definition: no #2; the span starts at the
    # signature, the header shown is the implementation's
    assert f"{P}::fn::overloaded" in g.nodes and f"{P}::fn::overloaded#2" not in g.nodes
    ov = g.node(f"{P}::fn::overloaded")
    assert (ov.line_start, ov.line_end) == (28, 29) and ov.signature == "function overloaded(a: any)"
    assert g.node(f"{P}::type::Alias").kind == KINDS["type"]
    assert g.node(f"{P}::enum::Color").kind == KINDS["enum"]
    assert g.node(f"{P}::mod::Shapes").kind == KINDS["mod"]
    assert f"{P}::mod::Shapes::fn::area" in g.nodes
    assert "file::src/util.js::fn::arrow" in g.nodes
    assert "file::src/util.js::fn::default" in g.nodes
    # test files: the file is the test node, describe/it blocks are not symbols
    t = g.node("file::src/lib/pool.test.ts")
    assert t.is_test and not any(k.startswith("file::src/lib/pool.test.ts::") for k in g.nodes)


def test_calls_and_hierarchy(g) -> None:
    run = f"{P}::class::Pool::fn::run"
    assert g.has(run, f"{P}::class::Pool::fn::check", "calls")  # this.m()
    assert g.has(run, "file::src/util.js::fn::helper", "calls")  # namespace import
    assert g.has(f"{P}::class::Pool::fn::onDone", f"{P}::class::Pool::fn::log", "calls")
    assert g.has(f"{P}::fn::makePool", f"{P}::class::Pool", "calls")  # new Pool()
    assert g.has(f"{P}::class::Pool", f"{P}::interface::Runner", "implements")
    assert g.has("file::src/lib/job.ts::class::SpecialJob", "file::src/lib/job.ts::class::Job", "inherits")
    # TS type annotations -> references
    assert g.has(run, "file::src/lib/job.ts::class::Job", "references")
    assert g.has(f"{P}::type::Alias", f"{P}::class::Pool", "references")


def test_module_resolution(g) -> None:
    # relative + extension probing
    assert g.has(P, "file::src/lib/job.ts", "imports")
    assert g.has(P, "file::src/lib/job.ts::class::Job", "imports")
    assert g.has(P, "file::src/util.js", "imports")
    # tsconfig paths alias (@lib/*) and directory index + re-export chain
    app = "file::src/app.tsx"
    assert g.has(app, P, "imports")
    assert g.has(app, "file::src/lib/index.ts", "imports")
    assert g.has(app, "file::src/lib/job.ts::class::Job", "imports")  # through `export * from './job'`
    assert g.has(f"{app}::fn::App", f"{P}::class::Pool", "calls")
    assert g.has(f"{app}::fn::App", "file::src/lib/job.ts::class::Job", "calls")
    assert g.has(f"{app}::fn::App", f"{app}::fn::Widget", "calls")  # JSX element
    # re-exports
    assert g.has("file::src/lib/index.ts", f"{P}::class::Pool", "reexports")
    assert g.has("file::src/lib/index.ts", "file::src/lib/job.ts", "reexports")
    # bare specifiers are external
    assert g.parts.external_imports["src/app.tsx"] == ["react"]
    # require(), destructured and whole-module
    cjs = "file::src/cjs.js"
    assert g.has(cjs, "file::src/util.js", "imports")
    assert g.has(f"{cjs}::class::Consumer::fn::go", "file::src/util.js::fn::helper", "calls")
    assert g.has(f"{cjs}::class::Consumer::fn::go", "file::src/util.js::fn::arrow", "calls")


def test_tests_edges(g) -> None:
    t = "file::src/lib/pool.test.ts"
    assert g.has(t, P, "tests")


def test_invariants(g) -> None:
    assert_invariants(g)
