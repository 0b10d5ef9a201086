"""The sans-I/O core: bytes in, records out. Never imports asyncio or aiohttp."""

from __future__ import annotations

from sitemap_reader.parse.parser import ParseResult, SitemapParser, parse
from sitemap_reader.parse.robots import sitemaps_from_robots

__all__ = ["ParseResult", "SitemapParser", "parse", "sitemaps_from_robots"]
