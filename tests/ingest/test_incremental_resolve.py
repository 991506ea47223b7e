"""A patched resolver equals a fresh full resolution (issue 15 item 4): random edits of a small multi-language
tree, each applied to one live :class:`TrackedResolver` when it accepts the patch (else rebuilt, as the watcher
does), and every node record, edge (weight and count) and unresolved / ambiguous count compared with
:func:`resolve` of the edited extracts."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from m1nd.ingest.extract import extract_file
from m1nd.ingest.resolve import resolve
from m1nd.ingest.resolve.incremental import TrackedResolver

BASE = {
    "shop/__init__.py": "from .cart import Cart\n__all__ = ['Cart']\n",
    "shop/cart.py": (
        "from .pricing import price_of, Discount\n\n\n"
        "class Cart:\n"
        "    def __init__(self, inv):\n        self.inv = inv\n        self.rule = Discount()\n\n"
        "    def add_item(self, sku):\n        self.inv.reserve(sku)\n        return price_of(sku)\n\n"
        "    def total(self):\n        return self.rule.apply(self.add_item('x'))\n"
    ),
    "shop/pricing.py": (
        "def price_of(sku):\n    return len(sku)\n\n\n"
        "class Discount:\n    def apply(self, amount):\n        return helper(amount)\n\n\n"
        "def helper(x):\n    return x\n"
    ),
    "shop/inventory.py": (
        "from shop.pricing import helper\n\n\n"
        "class Inventory:\n    def reserve(self, sku):\n        return helper(sku)\n"
    ),
    "tests/test_cart.py": (
        "from shop.cart import Cart\n\n\n"
        "def test_add_item():\n    Cart(None).add_item('a')\n\n\n"
        "def test_total():\n    Cart(None).total()\n"
    ),
    "web/app.js": "import { fmt } from './util.js';\nexport function render(x) { return fmt(x); }\n",
    "web/util.js": "export function fmt(x) { return String(x); }\n",
    "README.md": "# Shop\n\nSee `price_of` and `Cart.total` in shop/cart.py.\n",
}
LANG = {".py": "python", ".js": "javascript", ".md": "markdown"}

EDITS = (
    "append_unique",  # a new function nobody mentions
    "append_known",  # a new function with a name other files look up (falls back)
    "body",  # a body edit that changes calls
    "shift",  # lines move, nothing else
    "rename",  # the first definition renamed
    "new_method",  # a method added to the first class
    "attr",  # an attribute with a type added to the first class
    "drop_last",  # the last definition removed
)


def _extract(rel: str, text: str) -> dict[str, Any]:
    blob = extract_file(rel, text.encode(), LANG[rel[rel.rfind("."):]])
    blob.pop("terms", None)
    for d in blob.get("definitions") or ():
        d.pop("terms", None)
    return blob


def _edit(text: str, rel: str, op: str, n: int) -> str:
    js = rel.endswith(".js")
    if op == "append_unique":
        return text + (f"\nexport function zq_unique_{n}(v) {{ return fmt(v); }}\n" if js else
                       f"\n\ndef zq_unique_{n}(v):\n    return helper(v)\n")
    if op == "append_known":
        return text + ("\nexport function fmt2(v) { return v; }\n" if js else "\n\ndef helper(v):\n    return v\n")
    if op == "body":
        return text.replace("return ", f"zq_call_{n % 3}()\n    return ", 1) if not js else text.replace(
            "return ", f"zq{n % 3}(); return ", 1)
    if op == "shift":
        return "\n" * (1 + n % 3) + text
    if op == "rename":
        return text.replace("def ", f"def r{n}_", 1) if not js else text.replace("function ", f"function r{n}", 1)
    if op == "new_method" and "class " in text:
        head, _, rest = text.partition("class ")
        name, _, body = rest.partition(":\n")
        return f"{head}class {name}:\n    def zq_m{n}(self):\n        return self.total()\n\n{body}"
    if op == "attr" and "def __init__(self" in text:
        return text.replace(
            "def __init__(self, inv):\n", f"def __init__(self, inv):\n        self.zq{n} = Discount()\n", 1
        )
    if op == "drop_last":
        cut = text.rfind("\ndef ")
        return text[:cut] + "\n" if cut > 0 else text
    return text + "\n"


def _state(r: TrackedResolver) -> tuple[Any, ...]:
    live = set(range(len(r.ext))) - r.dead
    return ({n.ext_id: n for n in r.records(live)}, r.edges_from(live), r.unresolved, r.ambiguous)


def _fresh(extracts: dict[str, dict[str, Any]], mtimes: dict[str, int]) -> tuple[Any, ...]:
    p = resolve(dict(extracts), mtimes=dict(mtimes))
    return ({n.ext_id: n for n in p.nodes}, {(e.src, e.dst, e.relation): (e.w0, e.count) for e in p.edges},
            p.unresolved_refs, p.ambiguous_refs)


def test_unique_new_function_is_patched_and_exact() -> None:
    texts = dict(BASE)
    extracts = {rel: _extract(rel, t) for rel, t in texts.items()}
    r = TrackedResolver(copy.deepcopy(extracts), None, {}, None).run()
    rel = "shop/pricing.py"
    extracts[rel] = _extract(rel, _edit(texts[rel], rel, "append_unique", 1))
    got = r.patch(copy.deepcopy({rel: extracts[rel]}), {rel: 5_000})
    assert got is not None and "file::shop/pricing.py::fn::zq_unique_1" in {r.ext[i] for i in got.rows}
    assert _state(r) == _fresh(extracts, {rel: 5_000})


def test_a_name_other_files_look_up_falls_back() -> None:
    extracts = {rel: _extract(rel, t) for rel, t in BASE.items()}
    r = TrackedResolver(copy.deepcopy(extracts), None, {}, None).run()
    rel = "shop/cart.py"
    new = _extract(rel, _edit(BASE[rel], rel, "append_known", 0))  # `helper`: pricing and inventory use it
    assert r.patch({rel: new}, {}) is None and not r.broken


@pytest.mark.parametrize("seed", range(3))
def test_random_edits_match_a_full_resolution(seed: int) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    files = sorted(BASE)
    seen = {"patched": 0}
    op = st.tuples(st.sampled_from(files), st.sampled_from(EDITS), st.integers(0, 5))

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True,
              database=None)
    @given(st.lists(st.lists(op, min_size=1, max_size=2), min_size=1, max_size=5), st.integers(0, 10**6))
    def run(batches: list[list[tuple[str, str, int]]], salt: int) -> None:
        texts = dict(BASE)
        extracts = {rel: _extract(rel, t) for rel, t in texts.items()}
        mtimes = {rel: 1_000 for rel in texts}
        r = TrackedResolver(copy.deepcopy(extracts), None, dict(mtimes), None).run()
        for k, batch in enumerate(batches):
            changes = {}
            for rel, what, n in batch:
                if rel.endswith(".md"):
                    texts[rel] += f"\nMore about `helper` {n}.\n"
                else:
                    texts[rel] = _edit(texts[rel], rel, what, n + seed * 7 + salt % 5)
                extracts[rel] = changes[rel] = _extract(rel, texts[rel])
                mtimes[rel] = 2_000 + k
            got = r.patch(copy.deepcopy(changes), {rel: mtimes[rel] for rel in changes})
            if got is None:
                r = TrackedResolver(copy.deepcopy(extracts), None, dict(mtimes), None).run()
                continue
            seen["patched"] += 1
            assert _state(r) == _fresh(extracts, mtimes), (batch, texts)

    run()
    assert seen["patched"] > 0  # the patch path ran, not only its fall-backs


def test_a_name_another_edited_file_imports_is_not_patched() -> None:
    """``b`` imports ``fresh_name`` before ``a`` defines it; a batch that adds it to ``a`` and edits ``b``'s body
    would leave ``b``'s import binding stale: refused (and a fresh resolution links the call)."""
    texts = {"a.py": "def old():\n    return 1\n",
             "b.py": "from a import fresh_name\n\n\ndef use():\n    return fresh_name()\n"}
    extracts = {rel: _extract(rel, t) for rel, t in texts.items()}
    r = TrackedResolver(copy.deepcopy(extracts), None, {}, None).run()
    changes = {"a.py": _extract("a.py", texts["a.py"] + "\n\ndef fresh_name():\n    return 2\n"),
               "b.py": _extract("b.py", texts["b.py"] + "\n\ndef more():\n    return use()\n")}
    changes["b.py"] = _extract("b.py", texts["b.py"].replace("return fresh_name()", "x = 1\n    return fresh_name()"))
    assert r.patch(copy.deepcopy(changes), {}) is None and not r.broken
    fresh = _fresh({**extracts, **changes}, {})
    assert ("file::b.py::fn::use", "file::a.py::fn::fresh_name", 2) in {k[:3] for k in fresh[1]}  # calls


def test_a_touched_file_moves_only_its_dates() -> None:
    """Same bytes, new modification time (the resolver's own, slimmed extract is given back): its rows' dates and
    its directories' follow, its edges stay."""
    extracts = {rel: _extract(rel, t) for rel, t in BASE.items()}
    mtimes = {rel: 1_000 for rel in BASE}
    r = TrackedResolver(copy.deepcopy(extracts), None, dict(mtimes), None).run()
    rel = "shop/cart.py"
    got = r.patch({rel: r.files[rel].blob}, {rel: 9_000})
    mtimes[rel] = 9_000
    assert got is not None and not got.sources
    assert _state(r) == _fresh(extracts, mtimes)
