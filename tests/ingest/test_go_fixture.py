"""Golden expectations for a Go module (graph.md §3 recv ids, §6 Go, §7 go.mod resolution)."""

from __future__ import annotations

import pytest
from ingest_helpers import assert_invariants, build, write_files
from m1nd.graph.schema import KINDS

FILES = {
    "go.mod": """
        module example.com/m

        go 1.22
        """,
    "pool/pool.go": """
        // Package pool runs jobs.
        package pool

        import (
            "fmt"

            w "example.com/m/worker"
        )

        // Pool holds workers.
        type Pool struct {
            w.Base
            workers []*w.Worker
        }

        type Runner interface {
            Run(j Job) error
        }

        type Job int

        // Submit queues a job.
        func (p *Pool) Submit(j Job) error {
            p.grow()
            fmt.Println("submit")
            w.New().Do()
            return nil
        }

        func (p *Pool) grow() {}

        func New() *Pool { return &Pool{} }
        """,
    "pool/pool_ops.go": """
        package pool

        func (p *Pool) Drain() int {
            p.Submit(0)
            return helper()
        }

        func helper() int { return New().size() }
        """,
    "pool/pool_test.go": """
        package pool

        import "testing"

        func TestSubmit(t *testing.T) {
            New().Submit(1)
        }
        """,
    "worker/worker.go": """
        package worker

        type Base struct{}

        func (b Base) Ping() {}

        type Worker struct {
            Base
        }

        func New() *Worker { return &Worker{} }

        func (w *Worker) Do() {}
        """,
    "cmd/main.go": """
        package main

        import "example.com/m/pool"

        func main() {
            p := pool.New()
            p.Drain()
        }
        """,
}


@pytest.fixture(scope="module")
def g(tmp_path_factory):
    return build(write_files(tmp_path_factory.mktemp("go") / "repo", FILES))


def test_definitions_and_recv_ids(g) -> None:
    pool = g.node("file::pool/pool.go::struct::Pool")
    assert pool.kind == KINDS["struct"] and (pool.line_start, pool.line_end) == (11, 14)
    assert pool.doc == "Pool holds workers."
    assert g.node("file::pool/pool.go::interface::Runner").kind == KINDS["interface"]
    assert g.node("file::pool/pool.go::type::Job").kind == KINDS["type"]
    # receiver declared in the same file: the method is a member of the type
    submit = g.node("file::pool/pool.go::struct::Pool::fn::Submit")
    assert submit.qname == "Pool.Submit" and submit.signature == "func (p *Pool) Submit(j Job) error"
    assert submit.doc == "Submit queues a job."
    assert g.has(
        "file::pool/pool.go::struct::Pool", "file::pool/pool.go::struct::Pool::fn::Submit", "contains"
    )
    # receiver declared in another file: recv:: id segment, contained by the file, references the type
    drain = "file::pool/pool_ops.go::recv::Pool::fn::Drain"
    assert g.node(drain).qname == "Pool.Drain"
    assert g.has("file::pool/pool_ops.go", drain, "contains")
    assert g.has(drain, "file::pool/pool.go::struct::Pool", "references")
    assert not any(k.endswith("recv::Pool") for k in g.nodes)  # recv is an id segment, never a node
    assert g.node("file::pool/pool.go").doc == "Package pool runs jobs."


def test_calls(g) -> None:
    submit = "file::pool/pool.go::struct::Pool::fn::Submit"
    assert g.has(submit, "file::pool/pool.go::struct::Pool::fn::grow", "calls")  # receiver call
    drain = "file::pool/pool_ops.go::recv::Pool::fn::Drain"
    assert g.has(drain, submit, "calls")  # receiver call to a method declared in another file
    assert g.has(drain, "file::pool/pool_ops.go::fn::helper", "calls")
    # same package, other file: step 5 (factor 0.9)
    e = g.edge("file::pool/pool_ops.go::fn::helper", "file::pool/pool.go::fn::New", "calls")
    assert e.w0 == pytest.approx(0.45)
    # pkg.F through an aliased import of an in-module package
    assert g.has(submit, "file::worker/worker.go::fn::New", "calls")
    assert g.has("file::cmd/main.go::fn::main", "file::pool/pool.go::fn::New", "calls")
    # p := pool.New() returns *Pool: p.Drain() is the receiver type's method (typed_call, factor 1.0)
    assert g.edge("file::cmd/main.go::fn::main", drain, "calls").w0 == pytest.approx(0.5)


def test_imports_and_embedding(g) -> None:
    assert g.has("file::pool/pool.go", "dir::worker", "imports")
    assert g.has("file::cmd/main.go", "dir::pool", "imports")
    assert g.parts.external_imports["pool/pool.go"] == ["fmt"]
    assert g.has("file::pool/pool.go::struct::Pool", "file::worker/worker.go::struct::Base", "inherits")
    assert g.has("file::worker/worker.go::struct::Worker", "file::worker/worker.go::struct::Base", "inherits")
    assert g.has("file::pool/pool.go::struct::Pool", "file::worker/worker.go::struct::Worker", "references")
    assert g.has(
        "file::pool/pool.go::struct::Pool::fn::Submit", "file::pool/pool.go::type::Job", "references"
    )
    assert g.node("file::go.mod").lang == "config"


def test_tests(g) -> None:
    t = "file::pool/pool_test.go"
    assert g.node(t).is_test and g.node(f"{t}::fn::TestSubmit").is_test
    assert g.has(t, "file::pool/pool.go", "tests")
    assert g.has(f"{t}::fn::TestSubmit", "file::pool/pool.go::struct::Pool::fn::Submit", "tests")


def test_invariants(g) -> None:
    assert_invariants(g)
