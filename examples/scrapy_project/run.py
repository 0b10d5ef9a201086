"""Crawl sitemap-reader's demo site with Scrapy, in one command, without internet.

    python examples/scrapy_project/run.py            # the mixin spider (``demo``)
    python examples/scrapy_project/run.py plain      # a plain spider with the add-on

It serves the embedded demo site (:mod:`sitemap_reader.demo`, sitemaps and a small HTML
page for every URL they list) on 127.0.0.1 and a free port from a thread, then runs the
spider against it: one JSON line per page on stdout (best first), Scrapy's log with
sitemap-reader's problems (the demo has a broken child) on stderr. Against a demo site
that stays up (``sitemap-reader demo serve``), run ``scrapy crawl`` from this directory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the demo_crawl package, wherever this is run from
os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "demo_crawl.settings")

from scrapy.crawler import CrawlerProcess  # noqa: E402
from scrapy.utils.project import get_project_settings  # noqa: E402

from sitemap_reader import demo  # noqa: E402


def main() -> int:
    """Serve the demo site, crawl it with the chosen spider, stop the site."""
    spider = sys.argv[1] if len(sys.argv) > 1 else "demo"
    if spider not in ("demo", "plain"):
        print("usage: run.py [demo|plain]", file=sys.stderr)
        return 2
    with demo.serve_in_thread() as base:
        print(f"demo site running at {base}/", file=sys.stderr)
        settings = get_project_settings()
        target = base + "/"
        if spider == "plain":
            settings.set("SITEMAP_READER_TARGETS", [target], priority="cmdline")
        process = CrawlerProcess(settings)
        if spider == "demo":
            process.crawl(spider, sitemap_targets=target)
        else:
            process.crawl(spider)
        process.start()
    return 0


if __name__ == "__main__":
    sys.exit(main())
