"""Compatibility: the score formula moved to :mod:`sitemap_reader.scoring`."""

from __future__ import annotations

from sitemap_reader.scoring import *  # noqa: F403
from sitemap_reader.scoring import __all__ as __all__
