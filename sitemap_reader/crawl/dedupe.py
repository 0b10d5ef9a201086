"""Compatibility: the URL dedupe set moved to :mod:`sitemap_reader.discovery.dedupe`."""

from __future__ import annotations

from sitemap_reader.discovery.dedupe import UrlSet

__all__ = ["UrlSet"]
