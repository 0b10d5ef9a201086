"""sitemap_reader/errors.py: one exception tree, so a caller can catch everything the
library raises on purpose with one class (its shape is pinned in test_public_api.py)."""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sitemap_reader import errors
from sitemap_reader.errors import SitemapReaderError, install_line, missing_extra

ROOT = Path(__file__).resolve().parents[1]


def test_every_exception_has_the_one_root() -> None:
    """Each exception class the module defines is a SitemapReaderError."""
    classes = [
        cls
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__ == errors.__name__
    ]
    assert len(classes) >= 5
    assert all(issubclass(cls, errors.SitemapReaderError) for cls in classes)


def test_a_bad_argument_is_also_a_value_error() -> None:
    """UsageError (and StateError, a bad state file) can be caught as ValueError too."""
    with pytest.raises(ValueError, match="no such option"):
        raise errors.UsageError("no such option")
    with pytest.raises(errors.UsageError):
        raise errors.StateError("not a sitemap-reader state file")


def _line(cwd: Path, path: Path | None = None) -> str:
    """install_line('spark') as a copy of the package run from ``cwd`` says it."""
    env = {**os.environ, "PYTHONPATH": str(path)} if path else dict(os.environ)
    code = "from sitemap_reader.errors import install_line; print(install_line('spark'))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_the_install_line_says_what_works_from_where_the_user_is(tmp_path: Path) -> None:
    """From the checkout's folder: '.[spark]'; from elsewhere: the checkout's path (-e kept
    for the editable install the tests run on); a copy with no checkout and no metadata of
    its own: the published name."""
    assert _line(ROOT) == "python -m pip install -e '.[spark]'"
    assert _line(tmp_path) == f"python -m pip install -e '{ROOT}[spark]'"
    shutil.copytree(ROOT / "sitemap_reader", tmp_path / "copy" / "sitemap_reader")
    assert _line(tmp_path, tmp_path / "copy") == "python -m pip install 'sitemap-reader[spark]'"


def test_a_missing_extra_is_an_import_error_with_the_line() -> None:
    """missing_extra: a MissingExtraError (an ImportError too) saying what needs what and
    the line that installs the extra."""
    error = missing_extra("DataFrames need pandas", "pandas")
    assert isinstance(error, ImportError) and isinstance(error, SitemapReaderError)
    assert str(error) == f"DataFrames need pandas: {install_line('pandas')}"
