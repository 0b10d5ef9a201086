"""The layer order parse <- discovery <- store <- drivers <- cli, and no import circles.

Two checks: a static one over every module's imports (a lower layer never imports a
higher one; module-level imports form no cycle), and live ones that import each sans-I/O
layer, and each driver that must not need another, in a fresh interpreter and look at
``sys.modules``.
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
    "sitemap_reader.options": 0,
    "sitemap_reader._version": 0,
    "sitemap_reader.records": 0,
    "sitemap_reader._safe_text": 0,
    "sitemap_reader._words": 0,
    "sitemap_reader.parse": 0,
    "sitemap_reader.discovery": 1,
    "sitemap_reader.store": 2,
    "sitemap_reader.delivery": 2,  # what happens to records on their way out: no event loop
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


def _imports(tree: ast.Module, modules: set[str]) -> tuple[set[str], set[str], set[str]]:
    """(imports at import time, imports that run at some time (module level or in a
    function), every import including type-checking ones)."""
    eager: set[str] = set()
    runtime: set[str] = set()
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

    def visit(nodes: list[ast.stmt], lazy: bool, typing: bool) -> None:
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = {n for n in targets(node) if n.startswith("sitemap_reader")}
                every.update(names)
                if not typing:
                    runtime.update(names)
                if not lazy:
                    eager.update(names)
            elif isinstance(node, ast.If):
                checking = _is_type_checking(node)
                visit(node.body, lazy or checking, typing or checking)
                visit(node.orelse, lazy, typing)
            elif isinstance(node, ast.Try):
                visit(node.body + node.orelse + node.finalbody, lazy, typing)
                for handler in node.handlers:
                    visit(handler.body, lazy, typing)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, lazy, typing)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(node.body, True, typing)

    visit(tree.body, False, False)
    return eager, runtime, every


Graph = dict[str, set[str]]


def _graph() -> tuple[Graph, Graph, Graph]:
    """Our modules' imports: (at import time, at any run time, including type checking)."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    graphs: tuple[Graph, Graph, Graph] = ({}, {}, {})
    for path in paths:
        name = _module_name(path)
        tree = ast.parse(path.read_text("utf-8"))
        for graph, found in zip(graphs, _imports(tree, modules), strict=True):
            graph[name] = {m for m in found if m in modules and m != name}
    return graphs


def test_no_layer_imports_a_higher_one() -> None:
    """parse <- discovery <- store <- drivers <- cli: every import points down or sideways."""
    _, _, every = _graph()
    wrong = [
        f"{module} ({NAMES[_layer(module)]}) imports {target} ({NAMES[_layer(target)]})"
        for module, targets in every.items()
        if module != "sitemap_reader"  # the facade resolves the driver names lazily
        for target in sorted(targets)
        if _layer(target) > _layer(module) and target != "sitemap_reader"
    ]
    assert wrong == []


@pytest.mark.parametrize("when", ["import time", "run time"])
def test_no_import_circles(when: str) -> None:
    """Imports between our modules form no cycle, neither those at module level nor those
    inside functions (packages' own __init__ aside; type-checking imports do not run)."""
    eager, runtime, _ = _graph()
    graph = eager if when == "import time" else runtime
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if module.startswith(target + ".") or target == "sitemap_reader":
                continue  # a submodule importing its own package: how packages load
            if state.get(target) == 1:
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def _loaded_after(imports: str, wanted: str) -> list[str]:
    """The modules matching the expression ``wanted`` (of ``m``, a module name) in
    ``sys.modules`` after running ``imports`` in a fresh interpreter."""
    code = (
        f"import sys, json\n{imports}\n"
        f"print(json.dumps(sorted(m for m in list(sys.modules) if {wanted})))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    found: list[str] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize(
    "module",
    [
        "sitemap_reader",
        "sitemap_reader.parse",
        "sitemap_reader.discovery",
        "sitemap_reader.discovery.addresses",
        "sitemap_reader.store",
        "sitemap_reader.store.progress",
    ],
)
def test_sans_io_layers_import_no_event_loop(module: str) -> None:
    """Importing a lower layer in a fresh interpreter loads no asyncio, aiohttp, Scrapy, Twisted."""
    wanted = (
        "m.split('.')[0] in ('asyncio', 'aiohttp', 'scrapy', 'twisted') "
        "or m.startswith(('sitemap_reader.crawl', 'sitemap_reader.scrapy', 'sitemap_reader.cli'))"
    )
    assert _loaded_after(f"import {module}", wanted) == []


def test_the_scrapy_integration_loads_no_aiohttp() -> None:
    """Importing sitemap_reader.scrapy and every submodule but the Redis one (scrapy-redis
    brings its own dependencies) loads neither aiohttp nor another driver of ours."""
    modules = sorted(
        f"sitemap_reader.scrapy.{p.stem}"
        for p in (PACKAGE / "scrapy").glob("*.py")
        if p.stem not in ("__init__", "redis")
    )
    assert "sitemap_reader.scrapy.addresses" in modules
    imports = "\n".join(f"import {m}" for m in ["sitemap_reader.scrapy", *modules])
    wanted = (
        "m.split('.')[0] == 'aiohttp' or m.startswith(("
        "'sitemap_reader.crawl', 'sitemap_reader.crawlee', 'sitemap_reader.distributed', "
        "'sitemap_reader.cli'))"
    )
    assert _loaded_after(imports, wanted) == []


#: Every driver's I/O library (an engine's too): a module loads only its own.
_IO_LIBRARIES = ("aiohttp", "pyspark", "py4j", "ray", "redis", "scrapy", "twisted", "crawlee")


def _others(*own: str) -> str:
    """The ``wanted`` expression for the I/O libraries and drivers not in ``own``."""
    libraries = tuple(name for name in _IO_LIBRARIES if name not in own)
    return (
        f"m.split('.')[0] in {libraries!r} or m.startswith(("
        "'sitemap_reader.distributed', 'sitemap_reader.scrapy', 'sitemap_reader.crawlee', "
        "'sitemap_reader.cli'))"
    )


def test_the_engine_core_loads_no_driver_library() -> None:
    """Importing sitemap_reader.engines.batch loads pyarrow and our sans-I/O layers only: no
    engine, no other driver (the aiohttp reader is imported when a call starts)."""
    assert _loaded_after("import sitemap_reader.engines.batch", _others()) == []


def test_spelling_a_target_loads_no_queue_library() -> None:
    """Spelling a target the canonical way loads neither redis nor the distributed driver."""
    imports = "import sitemap_reader.engines.batch as b\nb.canonical_target('example.com')"
    wanted = "m.split('.')[0] == 'redis' or m.startswith('sitemap_reader.distributed')"
    assert _loaded_after(imports, wanted) == []


@pytest.mark.parametrize(
    ("module", "own"),
    [
        ("sitemap_reader.engines.spark", ("pyspark", "py4j", "aiohttp")),
        ("sitemap_reader.engines.ray", ("ray",)),
    ],
)
def test_an_engine_door_loads_no_other_engine(module: str, own: tuple[str, ...]) -> None:
    """Each engine's module loads its engine and the engine core, never the other engine
    or another driver's library (make test-engines runs it with both installed)."""
    import importlib.util

    if importlib.util.find_spec(own[0]) is None:
        if os.environ.get("SITEMAP_READER_ENGINES") == "1":
            pytest.fail(f"{own[0]} is not installed")
        pytest.skip(f"{own[0]} is not installed (make test-engines installs it)")
    assert _loaded_after(f"import {module}", _others(*own, "aiohttp")) == []
