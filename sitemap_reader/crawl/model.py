"""Compatibility: the run description moved to :mod:`sitemap_reader.discovery.model`."""

from __future__ import annotations

from sitemap_reader.discovery.model import NODE_KINDS, JsonDict, Run, SitemapNode, Stats

__all__ = ["NODE_KINDS", "JsonDict", "Run", "SitemapNode", "Stats"]
