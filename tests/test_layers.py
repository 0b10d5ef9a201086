"""The layer order parse <- discovery <- store <- drivers <- cli, and no import circles.

Two checks: a static one over every module's imports (a lower layer never imports a
higher one; module-level imports form no cycle), and a live one that imports each
sans-I/O layer in a fresh interpreter and looks at ``sys.modules``.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sitemap_reader"
#: Layer of each module prefix (longest prefix wins); a module not listed is a driver.
LAYERS = {
    "sitemap_reader.errors": 0,
    "sitemap_reader.limits": 0,
    "sitemap_reader.records": 0,
    "sitemap_reader.scoring": 0,
    "sitemap_reader.safe_text": 0,
    "sitemap_reader.parse": 0,
    "sitemap_reader.discovery": 1,
    "sitemap_reader.store": 2,
    "sitemap_reader.cli": 4,
    "sitemap_reader.__main__": 4,
}
DRIVER = 3
NAMES = {0: "parse", 1: "discovery", 2: "store", 3: "drivers", 4: "cli"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(module: str) -> int:
    best = max(
        (p for p in LAYERS if module == p or module.startswith(p + ".")), key=len, default=None
    )
    return DRIVER if best is None else LAYERS[best]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module, modules: set[str]) -> tuple[set[str], set[str]]:
    """(imports at import time, every import including lazy and type-checking ones)."""
    eager: set[str] = set()
    every: set[str] = set()

    def targets(node: ast.Import | ast.ImportFrom) -> set[str]:
        if isinstance(node, ast.Import):
            return {a.name for a in node.names}
        base = node.module or ""
        found = {base}
        for alias in node.names:  # ``from pkg import module``
            if f"{base}.{alias.name}" in modules:
                found.add(f"{base}.{alias.name}")
        return found

    def visit(nodes: list[ast.stmt], lazy: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = {n for n in targets(node) if n.startswith("sitemap_reader")}
                every.update(names)
                if not lazy:
                    eager.update(names)
            elif isinstance(node, ast.If):
                visit(node.body, lazy or _is_type_checking(node))
                visit(node.orelse, lazy)
            elif isinstance(node, ast.Try):
                visit(node.body + node.orelse + node.finalbody, lazy)
                for handler in node.handlers:
                    visit(handler.body, lazy)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, lazy)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(node.body, True)

    visit(tree.body, False)
    return eager, every


def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    eager: dict[str, set[str]] = {}
    every: dict[str, set[str]] = {}
    for path in paths:
        name = _module_name(path)
        tree = ast.parse(path.read_text("utf-8"))
        found_eager, found_every = _imports(tree, modules)
        eager[name] = {m for m in found_eager if m in modules and m != name}
        every[name] = {m for m in found_every if m in modules and m != name}
    return eager, every


def test_no_layer_imports_a_higher_one() -> None:
    """parse <- discovery <- store <- drivers <- cli: every import points down or sideways."""
    _, every = _graph()
    wrong = [
        f"{module} ({NAMES[_layer(module)]}) imports {target} ({NAMES[_layer(target)]})"
        for module, targets in every.items()
        if module != "sitemap_reader"  # the facade resolves the driver names lazily
        for target in sorted(targets)
        if _layer(target) > _layer(module) and target != "sitemap_reader"
    ]
    assert wrong == []


def test_no_import_circles() -> None:
    """Module-level imports between our modules form no cycle (packages' own __init__ aside)."""
    eager, _ = _graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(eager.get(module, ())):
            if module.startswith(target + ".") or target == "sitemap_reader":
                continue  # a submodule importing its own package: how packages load
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(eager):
        if module not in state:
            visit(module, [module])
    # Reported, not hidden: the guard (owned elsewhere) reaches crawl/__init__ through the
    # crawl.targets shim; everything else must be acyclic.
    known = {
        ("sitemap_reader.crawl", "sitemap_reader.crawl.discover", "sitemap_reader.crawl.guard")
    }
    assert [c for c in cycles if tuple(sorted(set(c))) not in known] == []


@pytest.mark.parametrize(
    "module",
    ["sitemap_reader", "sitemap_reader.parse", "sitemap_reader.discovery", "sitemap_reader.store"],
)
def test_sans_io_layers_import_no_event_loop(module: str) -> None:
    """Importing a lower layer in a fresh interpreter loads no asyncio, aiohttp, Scrapy, Twisted."""
    code = (
        f"import sys, json, {module}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('asyncio', 'aiohttp', 'scrapy', 'twisted') or m.startswith('sitemap_reader.crawl') "
        "or m.startswith('sitemap_reader.scrapy') or m.startswith('sitemap_reader.cli'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
