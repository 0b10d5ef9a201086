"""A pytest plugin that swaps the prototype in for ``SitemapParser`` everywhere, so that the
existing parser tests double as a differential test of the C path:

``.venv/bin/python -m pytest -p benchmarks.native.native_plugin tests/parse/test_parser.py``

(run from the repository root; nothing else uses this file).
"""

from __future__ import annotations

import sitemap_reader
from benchmarks.native import proto
from sitemap_reader.parse import parser

parser.SitemapParser = proto.NativeSitemapParser  # type: ignore[misc]
sitemap_reader.SitemapParser = proto.NativeSitemapParser  # type: ignore[misc]


def pytest_terminal_summary(terminalreporter: object) -> None:
    """How many bodies the C reader read, and how many it handed to the reference."""
    made, over = proto.NativeXmlReader.made, proto.NativeXmlReader.handed_over
    print(f"\nnative XML readers: {made} made, {over} handed over to the reference")
