"""Settings of the example project (see README.md next to scrapy.cfg)."""

BOT_NAME = "demo_crawl"
SPIDER_MODULES = ["demo_crawl.spiders"]
NEWSPIDER_MODULE = "demo_crawl.spiders"

ROBOTSTXT_OBEY = True
# One request at a time, and no new download while a callback's output is being scheduled:
# the pages then leave the scheduler strictly best first, which is what the demo shows.
# A real crawl raises concurrency and keeps an approximately best-first order.
CONCURRENT_REQUESTS = 1
SCRAPER_SLOT_MAX_ACTIVE_SIZE = 1
TELNETCONSOLE_ENABLED = False
LOG_LEVEL = "INFO"

# The items (one per page) as JSON Lines on standard output.
FEEDS = {"stdout:": {"format": "jsonlines"}}
