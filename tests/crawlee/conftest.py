"""Crawlee tests: its storage in a temporary folder, never the working directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("crawlee", reason="the crawlee extra is not installed")

from tests.loader.conftest import make_site  # noqa: F401  (the generated-site fixture)


@pytest.fixture(autouse=True)
def crawlee_storage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """CRAWLEE_STORAGE_DIR in the test's folder (Crawlee writes ./storage otherwise)."""
    storage = tmp_path / "crawlee-storage"
    monkeypatch.setenv("CRAWLEE_STORAGE_DIR", str(storage))
    yield storage
