"""The sans-I/O discovery core: the rules of walking a site, written once for every driver.

Layers: ``parse`` (bytes to records) <- ``discovery`` (this package: which URL to fetch
next and what a response means) <- ``store`` (SQLite state) <- drivers (``crawl``:
aiohttp; ``scrapy``) <- ``cli``. Nothing here imports asyncio, aiohttp, Scrapy or
Twisted (ruff's banned-api rule, ``discovery/ruff.toml``). See
:mod:`sitemap_reader.discovery.core` for the theory of operation.
"""

from __future__ import annotations

from sitemap_reader.discovery.actions import (
    Action,
    Checkpoint,
    Done,
    Emit,
    Fetch,
    Schedule,
    Stop,
    Ticket,
)
from sitemap_reader.discovery.config import Config
from sitemap_reader.discovery.core import Discovery
from sitemap_reader.discovery.model import Run, SitemapNode, Stats
from sitemap_reader.discovery.observer import NULL_OBSERVER, Observer, Watch
from sitemap_reader.discovery.targets import WELL_KNOWN_PATHS, Target, classify

__all__ = [
    "NULL_OBSERVER",
    "WELL_KNOWN_PATHS",
    "Action",
    "Checkpoint",
    "Config",
    "Discovery",
    "Done",
    "Emit",
    "Fetch",
    "Observer",
    "Run",
    "Schedule",
    "SitemapNode",
    "Stats",
    "Stop",
    "Target",
    "Ticket",
    "Watch",
    "classify",
]
