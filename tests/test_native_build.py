"""The compiled parser is optional by construction: an install without a compiler succeeds.

The checkout is built into a wheel as ``pip install .`` builds it (``hatch_build.py``), with
``CC`` naming no compiler: the build says the compiled parser could not be built, the wheel
is the pure-Python one (no extension inside, tagged for any platform), and the installed
copy runs and says ``pure Python`` with the reason. Then with the compiler: a platform
wheel holding the extension, whose copy says ``native``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXTENSION = "sitemap_reader/parse/_native/_expatcore"


def build_wheel(out: Path, **env: str) -> tuple[Path, str]:
    """The checkout's wheel (pip, no build isolation: offline) and the build's log."""
    environ = {k: v for k, v in os.environ.items() if k != "SITEMAP_READER_NO_EXTENSIONS"}
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v",
         "--wheel-dir", str(out), str(ROOT)],
        capture_output=True, text=True, env={**environ, **env}, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (wheel,) = out.glob("sitemap_reader-*.whl")
    return wheel, result.stdout + result.stderr


def installed_path(wheel: Path, target: Path) -> str:
    """``--version``'s parser line of the wheel installed into ``target`` (first on the
    path, the test interpreter's site-packages giving the dependencies)."""
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    env = {k: v for k, v in os.environ.items() if k != "SITEMAP_READER_NO_EXTENSIONS"}
    env["PYTHONPATH"] = str(target)
    result = subprocess.run(
        [sys.executable, "-m", "sitemap_reader", "--version"],
        capture_output=True, text=True, env=env, cwd=target, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    origin = subprocess.run(
        [sys.executable, "-c", "import sitemap_reader; print(sitemap_reader.__file__)"],
        capture_output=True, text=True, env=env, cwd=target, timeout=120, check=True,
    ).stdout  # fmt: skip
    assert origin.startswith(str(target)), origin  # the installed copy, not the checkout
    return result.stdout.splitlines()[1]


@pytest.mark.skipif(
    shutil.which("gcc") is None and shutil.which("cc") is None, reason="no C compiler here"
)
def test_an_install_without_a_compiler_falls_back_to_pure_python(tmp_path: Path) -> None:
    """CC=/nonexistent: the install succeeds, says why the compiled parser is missing,
    ships no extension, and the copy runs on the pure-Python path, saying so; with the
    compiler the same checkout gives a platform wheel whose copy runs natively."""
    wheel, log = build_wheel(tmp_path / "pure", CC="/nonexistent/cc")
    assert "the compiled parser could not be built" in log
    assert "installing the pure-Python path" in log
    with zipfile.ZipFile(wheel) as archive:
        assert not [n for n in archive.namelist() if n.startswith(EXTENSION) and n[-2:] != ".c"]
    assert wheel.name.endswith("-py3-none-any.whl")
    line = installed_path(wheel, tmp_path / "pure-site")
    assert line.startswith("parser: pure Python (no compiled extension: ")

    wheel, log = build_wheel(tmp_path / "native")
    assert "compiled parser built" in log
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    with zipfile.ZipFile(wheel) as archive:
        assert f"{EXTENSION}{suffix}" in archive.namelist()
    assert not wheel.name.endswith("-none-any.whl")
    assert installed_path(wheel, tmp_path / "native-site").startswith("parser: native (")
