"""``python -m sitemap_reader``: the same command as ``sitemap-reader``."""

from __future__ import annotations

from sitemap_reader.cli import main

raise SystemExit(main())
