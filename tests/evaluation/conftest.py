"""Fixtures of the evaluation tests: a small shop repository with a real git history whose commit subjects make a
known change-localization set, and workspaces on a temporary home.

``tests/evaluation`` is a package so this conftest never shadows another directory's ``conftest`` module.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

FILES = {
    "src/shop/__init__.py": '"""A tiny shop."""\n',
    "src/shop/pricing.py": (
        '"""Prices and discounts."""\n\n\n'
        "def apply_discount(price: float, percent: float) -> float:\n"
        '    """Price after a percentage discount."""\n'
        "    return round_cents(price * (1 - percent / 100))\n\n\n"
        "def round_cents(value: float) -> float:\n"
        "    return round(value, 2)\n"
    ),
    "src/shop/cart.py": (
        '"""The shopping cart."""\n\n'
        "from shop.pricing import apply_discount\n\n\n"
        "class Cart:\n"
        "    def __init__(self) -> None:\n"
        "        self.items: list[tuple[str, float]] = []\n\n"
        "    def add_item(self, name: str, price: float) -> None:\n"
        "        self.items.append((name, price))\n\n"
        "    def total(self, discount_percent: float = 0) -> float:\n"
        "        return apply_discount(sum(p for _, p in self.items), discount_percent)\n"
    ),
    "src/shop/shipping.py": (
        '"""Shipping rates."""\n\n'
        "RATES = {'fr': 4.0, 'de': 5.0}\n\n\n"
        "def shipping_cost(weight_kg: float, country: str) -> float:\n"
        "    return RATES.get(country, 9.0) * max(1.0, weight_kg)\n"
    ),
    "src/shop/payment.py": (
        '"""Card payments."""\n\n\n'
        "def charge_card(card_number: str, amount: float) -> str:\n"
        "    return f'charged {amount} to {card_number[-4:]}'\n\n\n"
        "def refund_payment(card_number: str, amount: float) -> str:\n"
        "    return charge_card(card_number, -amount)\n"
    ),
    "tests/test_cart.py": (
        "from shop.cart import Cart\n\n\n"
        "def test_cart_total_applies_discount():\n"
        "    c = Cart()\n    c.add_item('a', 10.0)\n    assert c.total(10) == 9.0\n"
    ),
    "README.md": "# shop\n\nA tiny shop: cart, pricing, shipping, payment.\n",
    "docs/index.md": "# Docs\n",
    "pyproject.toml": '[project]\nname = "shop"\nversion = "1.0.0"\n',
}

#: the usable commits of :func:`make_shop_history`, newest first: (query, gold files)
EXPECTED = [
    ("Refund card payments with refund_payment", ("src/shop/payment.py",)),
    ("Cart total applies discounts through apply_discount", ("src/shop/cart.py", "src/shop/pricing.py")),
    ("Compute shipping_cost from weight and destination country", ("src/shop/shipping.py",)),
    ("Add apply_discount helper for percentage discounts", ("src/shop/pricing.py",)),
]
EXPECTED_SKIPPED = {
    "duplicate subject": 1,
    "files gone or not ingested": 2,
    "more than 3 source files": 1,
    "no source files (docs, config or tests only)": 2,
    "release": 1,
    "typo": 1,
    "wip": 1,
}


def git(root: Path, *args: str, day: int = 1) -> str:
    date = f"2026-01-{day:02d}T12:00:00Z"
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(k, None)
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env,
                          text=True).stdout


def _edit(root: Path, rel: str, extra: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text((p.read_text() if p.exists() else "") + extra)


def make_shop_history(root: Path) -> Path:
    """Write the shop and commit a history whose usable part is :data:`EXPECTED` (see the comments)."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    for rel, text in FILES.items():
        _edit(root, rel, text)
    steps: list[tuple[str, dict[str, str], list[str]]] = [
        # 5 source files: more than 3
        ("Initial import of the shop package", {}, ["-A"]),
        ("Add apply_discount helper for percentage discounts", {"src/shop/pricing.py": "\n# discounts\n"}, []),
        # a file that is deleted later: both commits name a file that is gone
        ("Add legacy exporter writing orders as csv", {"src/shop/legacy.py": "def export_csv():\n    pass\n"},
         ["src/shop/legacy.py"]),
        ("Compute shipping_cost from weight and destination country", {"src/shop/shipping.py": "\n# per kg\n"}, []),
        ("Fix typo in the README", {"README.md": "\nTypo fixed.\n"}, []),
        ("Document the checkout flow for users", {"docs/index.md": "\n## Checkout\n"}, []),
        ("Refund card payments with refund_payment (#12)", {"src/shop/payment.py": "\n# refunds\n"}, []),
        ("Bump version to 1.2.0", {"pyproject.toml": "# 1.2.0\n", "src/shop/__init__.py": "__version__ = '1.2'\n"},
         []),
        ("Add tests for cart totals with discounts", {"tests/test_cart.py": "\n# more\n"}, []),
        ("wip", {"src/shop/cart.py": "\n# wip\n"}, []),
        ("Remove the legacy exporter module", {}, ["rm:src/shop/legacy.py"]),
        ("Cart total applies discounts through apply_discount",
         {"src/shop/cart.py": "\n# discount\n", "src/shop/pricing.py": "\n# used by cart\n", "README.md": "\n"}, []),
        # the same subject again: this newest one is kept, the older one (its "(#12)" cleaned off) is a duplicate
        ("Refund card payments with refund_payment", {"src/shop/payment.py": "\n# again\n"}, []),
    ]
    for day, (subject, edits, extra) in enumerate(steps, start=1):
        for rel, text in edits.items():
            _edit(root, rel, text)
        for item in extra:
            if item.startswith("rm:"):
                git(root, "rm", "-q", item[3:])
            else:
                git(root, "add", item)
        git(root, "add", "-u")
        git(root, "commit", "-q", "-m", subject, day=day)
    return root


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("M1ND_EMBEDDER", "hashing")  # deterministic and model-free
    monkeypatch.delenv("M1ND_WORKSPACE", raising=False)
    monkeypatch.delenv("M1ND_HOME", raising=False)


@pytest.fixture(scope="session")
def shop_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop repository with its history (read-only: tests that commit use ``fresh_shop``)."""
    return make_shop_history(tmp_path_factory.mktemp("shop") / "shop")


@pytest.fixture
def fresh_shop(tmp_path: Path) -> Path:
    return make_shop_history(tmp_path / "shop")
