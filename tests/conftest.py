"""Suite-wide options.

``--gc-each`` collects garbage after every test. A socket, file, subprocess or event loop
that a test leaves open warns (``ResourceWarning``) only when it is collected, and
``filterwarnings = error`` then fails whichever test happens to be running at that moment:
often another one, in another order, or none. Collected at the end of each test, a leak
fails the test that made it. It costs a few seconds over the suite, so it is off by
default; run it when a ResourceWarning shows up somewhere it should not.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--gc-each",
        action="store_true",
        help="collect garbage after every test: a leak fails the test that leaked",
    )


@pytest.fixture(autouse=True)
def _collect_garbage(request: pytest.FixtureRequest) -> Iterator[None]:
    """After the test and its other fixtures: collect, so a leak warns here (--gc-each)."""
    yield
    if request.config.getoption("--gc-each"):
        gc.collect()
