"""Where the test data shared by the project's worktrees lives, read in place.

Corpus files come from other projects and real sites, so they are never committed here:
the tests read them from ``../shared`` (beside the repository root, found from this file,
not from the working directory) and skip, saying why, when that folder is absent, as it is
in a user's clone.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
#: Other projects' test files (crawler-commons, trafilatura, advertools, scrapy).
CORPUS = SHARED / "corpus"
#: Real sites' sitemaps, listed with their expected format and count in MANIFEST.tsv.
REALDATA = SHARED / "realdata"


def missing_reason(path: Path) -> str:
    """The skip reason for a test whose data folder is absent."""
    return f"shared test data not found at {path} (a checkout without ../shared)"


def require(path: Path) -> Path:
    """``path``, or skip the calling test when it does not exist."""
    if not path.exists():
        pytest.skip(missing_reason(path))
    return path


def manifest() -> list[dict[str, str]]:
    """The rows of ``realdata/MANIFEST.tsv`` (empty when the folder is absent)."""
    path = REALDATA / "MANIFEST.tsv"
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream, delimiter="\t"))
