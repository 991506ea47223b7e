"""Conceptual questions in Go, Rust and JavaScript (issue 11: "in every language"): a few words naming what the
code does, not an identifier, the way an agent starts a task. The stdlib set (``test_retrieval_quality.py``) covers
Python; these cover gin (Go), ripgrep (Rust) and axios (JavaScript), located at run time among the git mirrors of
``bench/localization.py`` (nothing fetched is committed; without the mirror a project skips).

The questions were written from the projects' documented features before looking at any ranking, and list the files
a developer would open first. Metric as in the stdlib set: the files of the ranked nodes in first-occurrence order;
recall@10 = share of the expected files among the first 10 distinct files, MRR = mean of 1/rank of the first
expected file. Figures are printed and stored in ``extra_info``; the assertion only guards against a collapse.
"""

from __future__ import annotations

import pytest

import localization as L
from corpus import file_quality
from m1nd.tools.registry import call_tool

SETS: dict[str, list[tuple[str, list[str]]]] = {
    "gin-gonic/gin": [
        ("match a request path against the registered routes with parameters and wildcards", ["tree.go"]),
        ("write a JSON response body", ["render/json.go", "context.go"]),
        ("recover from a panic in a handler and answer with status 500", ["recovery.go"]),
        ("log every request with its latency and status code", ["logger.go"]),
        ("bind the fields of a submitted form into a struct", ["binding/form.go", "binding/form_mapping.go"]),
        ("HTTP basic authentication middleware", ["auth.go"]),
        ("group routes under a common path prefix with shared middleware", ["routergroup.go"]),
        ("clean a URL path by removing dot segments and double slashes", ["path.go"]),
        ("serve static files from a directory on disk", ["routergroup.go", "fs.go"]),
        ("switch between debug, release and test mode", ["mode.go"]),
        ("render an HTML template", ["render/html.go"]),
        ("validate struct fields after binding a request", ["binding/default_validator.go"]),
    ],
    "BurntSushi/ripgrep": [
        ("parse gitignore files and match paths against their rules", ["crates/ignore/src/gitignore.rs"]),
        ("walk a directory tree in parallel while honouring ignore files", ["crates/ignore/src/walk.rs"]),
        ("compile glob patterns into a matcher", ["crates/globset/src/glob.rs", "crates/globset/src/lib.rs"]),
        ("print matches as JSON lines", ["crates/printer/src/json.rs"]),
        ("search a memory mapped file", ["crates/searcher/src/searcher/mmap.rs"]),
        ("decompress gzip and other compressed files before searching", ["crates/cli/src/decompress.rs"]),
        ("read the input in chunks through a line buffer", ["crates/searcher/src/line_buffer.rs"]),
        ("file type definitions for languages such as rust and python",
         ["crates/ignore/src/default_types.rs", "crates/ignore/src/types.rs"]),
        ("replace matched text with a replacement that refers to capture groups",
         ["crates/matcher/src/interpolate.rs"]),
        ("colors and styles of the printed output", ["crates/printer/src/color.rs"]),
        ("shell completion for zsh", ["crates/core/flags/complete/zsh.rs"]),
        ("summary of how many matches and files were searched", ["crates/printer/src/stats.rs",
                                                                 "crates/printer/src/summary.rs"]),
    ],
    "axios/axios": [
        ("register request and response interceptors", ["lib/core/InterceptorManager.js", "lib/core/Axios.js"]),
        ("cancel a request that is in flight", ["lib/cancel/CancelToken.js", "lib/cancel/CanceledError.js"]),
        ("build the request URL with serialized query parameters", ["lib/helpers/buildURL.js"]),
        ("send the request with XMLHttpRequest in the browser", ["lib/adapters/xhr.js"]),
        ("send the request with the node http module and follow redirects", ["lib/adapters/http.js"]),
        ("merge the default config with the per-request config", ["lib/core/mergeConfig.js"]),
        ("turn a plain object into multipart form data", ["lib/helpers/toFormData.js"]),
        ("parse raw response headers into an object", ["lib/helpers/parseHeaders.js",
                                                       "lib/core/AxiosHeaders.js"]),
        ("resolve or reject the promise depending on the response status", ["lib/core/settle.js"]),
        ("read the XSRF token from a cookie", ["lib/helpers/cookies.js", "lib/helpers/resolveConfig.js"]),
        ("report upload and download progress", ["lib/helpers/progressEventReducer.js",
                                                 "lib/helpers/speedometer.js"]),
        ("the error object carrying the request, response and error code", ["lib/core/AxiosError.js"]),
    ],
}

MIRRORS = {m.name: m for m in L.discover() if m.name in SETS}


@pytest.mark.slow
@pytest.mark.parametrize("project", sorted(SETS))
def test_conceptual_set(project: str, benchmark, capsys) -> None:  # noqa: ANN001
    mirror = MIRRORS.get(project)
    if mirror is None:
        pytest.skip(f"no git mirror of {project} under {L.MIRROR_ROOT} (or M1ND_LOCALIZATION_MIRRORS)")
    p = L.prepare(mirror, embed=False)
    try:
        recall, mrr, ranks = file_quality(p.workspace, SETS[project], p.src, top_k=100)
        benchmark.extra_info.update({"recall@10": round(recall, 3), "mrr": round(mrr, 3), "queries": len(ranks)})
        with capsys.disabled():
            print(f"\n{project}: recall@10 {recall:.3f}, MRR {mrr:.3f} over {len(ranks)} questions")
            for q, rank in ranks:
                print(f"  {rank!s:>5}  {q}")
        args = {"agent_id": "q", "query": SETS[project][0][0], "coactivation_ltp": False}
        benchmark.pedantic(lambda: call_tool(p.workspace, "activate", args), rounds=5, iterations=1)
    finally:
        p.close()
    assert recall > 0.3 and mrr > 0.2
