"""A small Python repository written to disk for integration tests (a helper module, not a conftest, so that
test files can import it by a name no other test directory uses)."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

from m1nd.workspace import Workspace
from testkit import open_workspace

FILES = {
    "src/shop/__init__.py": "from .cart import Cart\n",
    "src/shop/cart.py": '''
        """Shopping cart."""
        from .pricing import price_of, apply_discount
        from .store import Inventory


        class Cart:
            """A customer's cart of items."""

            def __init__(self, inventory: Inventory):
                self.items = []
                self.inventory = inventory

            def add_item(self, sku: str, qty: int = 1) -> None:
                self.inventory.reserve(sku, qty)
                self.items.append((sku, qty))

            def total(self) -> float:
                return apply_discount(sum(price_of(s) * q for s, q in self.items))
        ''',
    "src/shop/pricing.py": '''
        PRICES = {"apple": 1.0}


        def price_of(sku: str) -> float:
            """Unit price of a SKU."""
            return PRICES[sku]


        def apply_discount(amount: float) -> float:
            return amount * 0.9 if amount > 100 else amount
        ''',
    "src/shop/store.py": '''
        class Inventory:
            """Stock levels per SKU."""

            def __init__(self):
                self.stock = {}

            def reserve(self, sku: str, qty: int) -> None:
                if self.stock.get(sku, 0) < qty:
                    raise ValueError("out of stock")
                self.stock[sku] -= qty
        ''',
    "tests/test_cart.py": """
        from shop.cart import Cart
        from shop.store import Inventory


        def test_add_item():
            inv = Inventory()
            inv.stock["apple"] = 3
            c = Cart(inv)
            c.add_item("apple", 2)
            assert c.items == [("apple", 2)]
        """,
    "README.md": ("# Shop\n\nThe `Cart` uses `Inventory.reserve` to hold stock.\n\n"
                  "## Pricing\n\nSee src/shop/pricing.py.\n"),
    "config/settings.toml": "[shop]\ncurrency = 'EUR'\n",
}


def write_repo(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def git(root: Path, *args: str, date: str = "2026-01-01T12:00:00Z") -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e", "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def make_ws(home: Path, key: Path) -> Workspace:
    return open_workspace(home, key)
