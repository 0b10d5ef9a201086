"""Compatibility: target classification moved to :mod:`sitemap_reader.discovery.targets`."""

from __future__ import annotations

from sitemap_reader.discovery.targets import WELL_KNOWN_PATHS, Target, classify, well_known_urls

__all__ = ["WELL_KNOWN_PATHS", "Target", "classify", "well_known_urls"]
