"""Compatibility: the Scrapy traversal became a driver over the discovery core.

The rules live in :mod:`sitemap_reader.discovery`; the Scrapy side is
:mod:`sitemap_reader.scrapy.driver`. These names stay importable from here.
"""

from __future__ import annotations

from sitemap_reader.scrapy.driver import (
    META_KEY,
    PRIORITY_SCALE,
    SITEMAP_META_KEY,
    SITEMAP_PRIORITY,
    Options,
    RecordFilter,
    Rule,
    ScrapyDriver,
    compile_patterns,
    priority_of,
    split_targets,
)

#: The driver's first name.
Discovery = ScrapyDriver

__all__ = [
    "META_KEY",
    "PRIORITY_SCALE",
    "SITEMAP_META_KEY",
    "SITEMAP_PRIORITY",
    "Discovery",
    "Options",
    "RecordFilter",
    "Rule",
    "ScrapyDriver",
    "compile_patterns",
    "priority_of",
    "split_targets",
]
