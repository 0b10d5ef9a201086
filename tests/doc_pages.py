"""The pages whose examples the tests run: README.md and every page of the docs site.

A block is a fenced block of one language (```` ```sh ````, ```` ```python ````, ...); the
tests that run them pick their kinds (tests/cli/test_examples.py, the distributed and the
engines examples).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """README.md, then the docs site's pages in path order."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def page_blocks(page: Path, language: str) -> list[str]:
    """The fenced blocks of one page in ``language``, in page order."""
    return re.findall(rf"^```{language}\n(.*?)^```$", page.read_text(), re.S | re.M)


def doc_blocks(language: str) -> list[str]:
    """The fenced blocks of every page in ``language``."""
    return [block for page in pages() for block in page_blocks(page, language)]


def name(page: Path) -> str:
    """A page's path from the checkout's root (a test's id)."""
    return page.relative_to(ROOT).as_posix()
