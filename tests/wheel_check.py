"""A built wheel's check (cibuildwheel's test command): the installed package, not the
checkout, runs on the compiled path and gives what the pure-Python path gives on the hostile
and odd cases of ``tests/parse/native_cases.py``, whole and in 7-byte and 997-byte pieces.

Run as a script from outside the checkout (``python {project}/tests/wheel_check.py``), so
that ``sitemap_reader`` is the installed one; exit status 1 on any difference.
"""

from __future__ import annotations

import importlib.util
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sitemap_reader.parse import native
from sitemap_reader.parse.parser import SitemapParser

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def outcome(path: str, body: bytes, size: int, limits: Any) -> tuple[Any, ...]:
    with native.using("native" if path == "native" else "pure"):
        parser = SitemapParser("https://example.com/sitemap.xml", limits=limits, now=NOW)
    items = []
    for i in range(0, len(body), size):
        items += parser.feed(body[i : i + size])
    items += parser.close()
    return items, parser.problems, parser.format, parser.complete, parser.url_count


def main() -> int:
    print(f"{native.__file__}: {native.describe()}")
    if not native.active():
        return 1
    spec = importlib.util.spec_from_file_location(
        "native_cases", Path(__file__).resolve().parent / "parse" / "native_cases.py"
    )
    assert spec is not None and spec.loader is not None
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    different = 0
    for name, body, limits in cases.hostile():
        for size in (len(body) or 1, 997, 7):
            if outcome("native", body, size, limits) != outcome("pure", body, size, limits):
                different += 1
                print(f"different: {name} in {size}-byte pieces")
    print(f"{different} different")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
