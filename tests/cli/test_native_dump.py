"""``sitemap-reader dump FILE`` writes the same bytes on both parser paths.

Every file of ``../shared/corpus`` and ``../shared/realdata`` is dumped as JSON Lines by the
command (a subprocess) on the compiled path and with ``SITEMAP_READER_NO_EXTENSIONS=1``:
stdout byte for byte, and the summary on stderr but for its timing line. Index files are
read without their children (``--read-depth 0``: no network). Runs where the compiled path
is active (make test's first pass; the real sites' files in make test-slow).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitemap_reader.parse import native
from tests.conftest_cli import cli_env, run_cli
from tests.shared_data import CORPUS, REALDATA, missing_reason

pytestmark = pytest.mark.skipif(not native.active(), reason=native.describe())
ENV = "SITEMAP_READER_NO_EXTENSIONS"


def files() -> list[object]:
    """The corpus's files; the real sites' too, marked slow (make test-slow: ~2 minutes)."""
    found: list[object] = []
    for folder in (CORPUS, REALDATA / "files"):
        marks = [pytest.mark.slow] if folder != CORPUS else []
        if folder.is_dir():
            found += [
                pytest.param(p, marks=marks) for p in sorted(folder.rglob("*")) if p.is_file()
            ]
        else:
            found.append(pytest.param(folder, marks=pytest.mark.skip(missing_reason(folder))))
    return found


def summary(stderr: str) -> str:
    """stderr without the line that says how long the run took."""
    return re.sub(r"(?m)^read: .*\n", "", stderr)


@pytest.mark.parametrize("path", files(), ids=lambda p: Path(str(p)).name)
async def test_dump_writes_the_same_bytes_on_both_paths(path: Path) -> None:
    env = {k: v for k, v in cli_env().items() if k != ENV}
    args = ("dump", "--read-depth", "0", "--no-progress", str(path))
    compiled = await run_cli(*args, env=env)
    pure = await run_cli(*args, env={**env, ENV: "1"})
    assert compiled.code == pure.code
    assert compiled.out == pure.out
    assert summary(compiled.err) == summary(pure.err)
