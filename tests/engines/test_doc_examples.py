"""The docs' Spark and Ray examples (docs/tutorials/data-engineer.md) run as written against
``sitemap-reader demo serve``.

The examples name ``http://127.0.0.1:8080/``; the demo site here gets a free port instead.
Each runs in a process of its own (under the network guard, as every process here): the
Spark one with Spark held to loopback by ``PYSPARK_SUBMIT_ARGS``, the Ray one with the
same ``HOME`` as the tests' cluster (its bootstrap config stops Ray's metadata probe).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.doc_pages import doc_blocks
from tests.engines.conftest import RAY_BOOTSTRAP

#: Spark's settings for a session made by a script: loopback only, no UI.
SPARK_ARGS = (
    "--conf spark.driver.host=127.0.0.1 --conf spark.driver.bindAddress=127.0.0.1 "
    "--conf spark.ui.enabled=false pyspark-shell"
)


def engine_blocks() -> dict[str, str]:
    """The docs' ``py`` blocks of the two engines, by engine."""
    blocks = doc_blocks("py")
    found = {}
    for engine in ("spark", "ray"):
        (block,) = [b for b in blocks if f"from sitemap_reader.engines.{engine} import" in b]
        found[engine] = block
    return found


@pytest.fixture(scope="module")
def demo() -> Iterator[str]:
    """``sitemap-reader demo serve`` on a free port: its URL."""
    command = [sys.executable, "-m", "sitemap_reader", "demo", "serve", "-q"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as server:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        try:
            yield url
        finally:
            server.terminate()
            server.wait(60)


@pytest.mark.parametrize("engine", ["spark", "ray"])
def test_doc_example_runs(engine: str, demo: str, tmp_path: Path) -> None:
    """The example reads the demo site and prints its summary row."""
    block = engine_blocks()[engine]
    assert len(block.strip().splitlines()) <= 12
    script = tmp_path / f"{engine}_example.py"
    script.write_text(block.replace("http://127.0.0.1:8080/", demo))
    home = tmp_path / "home"
    home.mkdir()
    (home / "ray_bootstrap_config.yaml").write_text(RAY_BOOTSTRAP)
    env = {**os.environ, "PYSPARK_SUBMIT_ARGS": SPARK_ARGS, "HOME": str(home)}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert demo in done.stdout and "partial" in done.stdout, done.stdout
