"""Suite-wide options, the Hypothesis profile and the CLI zygote.

Each pytest process starts one CLI zygote (:mod:`tests.cli_zygote`) for the session: the
``sitemap-reader`` runs of the tests are forks of it, each a process of its own that does
not import the package again. ``--real-cli`` starts none: every run is the console script.

``--gc-each`` collects garbage after every test. A socket, file, subprocess or event loop
that a test leaves open warns (``ResourceWarning``) only when it is collected, and
``filterwarnings = error`` then fails whichever test happens to be running at that moment:
often another one, in another order, or none. Collected at the end of each test, a leak
fails the test that made it. It costs a few seconds over the suite, so it is off by
default; run it when a ResourceWarning shows up somewhere it should not.
"""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.cli_zygote import SOCKET_VAR
from tests.crawl.crawl_kit import CLIENTS, KIT

# Hypothesis on the clock: no per-example deadline and no "too slow" health check, both
# wall-time limits that a machine busy with other work trips (a property fails on its
# examples, never on how long they took). A test's own @settings keeps its other fields.
settings.register_profile(
    "suite", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("suite")


def pytest_report_header() -> str:
    """Which parser path this pass runs (make test runs the parser's tests on both)."""
    from sitemap_reader.parse import native

    return f"sitemap-reader parser path: {native.describe()}"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--gc-each",
        action="store_true",
        help="collect garbage after every test: a leak fails the test that leaked",
    )
    parser.addoption(
        "--real-cli",
        action="store_true",
        help="run the console script for every CLI run, not forks of the CLI zygote",
    )


@pytest.fixture(scope="session", autouse=True)
def _cli_zygote(request: pytest.FixtureRequest) -> Iterator[None]:
    """The zygote of this pytest process, its socket in the environment the CLI runs get."""
    if request.config.getoption("--real-cli"):
        yield
        return
    folder = tempfile.mkdtemp(prefix="sitemap-reader-zygote-")  # a short path: a socket's
    path = os.path.join(folder, "socket")
    with open(os.path.join(folder, "log"), "wb") as log:
        zygote = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("cli_zygote.py")), path],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
        )  # fmt: skip
    assert zygote.stdout is not None
    with zygote.stdout:
        ready = zygote.stdout.readline()  # once it imported the CLI and listens
    if ready != b"ready\n":
        zygote.wait()
        text = Path(folder, "log").read_text(errors="replace")
        shutil.rmtree(folder)
        pytest.fail(f"the CLI zygote did not start: {text[-2000:]}")
    os.environ[SOCKET_VAR] = path
    try:
        yield
    finally:
        del os.environ[SOCKET_VAR]
        zygote.terminate()
        zygote.wait()
        shutil.rmtree(folder)


@pytest.fixture(autouse=True)
def _collect_garbage(request: pytest.FixtureRequest) -> Iterator[None]:
    """After the test and its other fixtures: collect, so a leak warns here (--gc-each)."""
    yield
    if request.config.getoption("--gc-each"):
        gc.collect()


def browser_extra() -> bool:
    """Whether the browser client's library (curl_cffi, the ``browser`` extra) is here."""
    try:
        import curl_cffi  # noqa: F401
    except ImportError:
        return False
    return True


#: Why a test of the browser client is skipped where its extra is missing.
NO_BROWSER = "the browser client needs the browser extra: pip install -e '.[browser]'"


@pytest.fixture(params=CLIENTS)
def client(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test once per HTTP client: the crawl kit's readers (``collect``, ``tree``)
    send with it. A fetcher's promise holds with both."""
    if request.param == "browser" and not browser_extra():
        pytest.skip(NO_BROWSER)
    KIT.client = request.param
    try:
        yield request.param
    finally:
        KIT.client = "aiohttp"
