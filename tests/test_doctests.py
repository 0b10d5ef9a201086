"""The package's docstring examples run: an example that lies fails here.

Every module of the package is imported and its doctests run (``# doctest: +SKIP``
marks an example that needs the network or a cluster). The engines' modules need their
engines (make test-engines installs them): without one, its module is skipped by name.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil

import pytest

import sitemap_reader

#: Modules that need a package the test extra does not install, with that package.
NEEDS = {"sitemap_reader.engines.spark": "pyspark", "sitemap_reader.engines.ray": "ray"}
#: Run by path in a worker process, never imported (see crawl/pool.py).
NOT_IMPORTED = {"sitemap_reader.crawl.parse_worker", "sitemap_reader.options.__main__"}


def _modules() -> list[str]:
    found = [
        info.name
        for info in pkgutil.walk_packages(sitemap_reader.__path__, "sitemap_reader.")
        if info.name not in NOT_IMPORTED and not info.name.endswith("__main__")
    ]
    return sorted([sitemap_reader.__name__, *found])


@pytest.mark.parametrize("name", _modules())
def test_the_examples_of_a_module_hold(name: str) -> None:
    """Each example in the module's docstrings gives what it says it gives."""
    needed = NEEDS.get(name)
    if needed is not None and importlib.util.find_spec(needed) is None:
        pytest.skip(f"{name} needs {needed} (make test-engines installs it)")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
