"""The sans-I/O discovery core: the rules of walking a site, written once for every driver.

Layers: ``parse`` (bytes to records) <- ``discovery`` (this package: which URL to fetch
next and what a response means) <- ``store`` (SQLite state) <- drivers (``crawl``:
aiohttp; ``scrapy``) <- ``cli``. Nothing here imports asyncio, aiohttp, Scrapy or
Twisted (ruff's banned-api rule, ``discovery/ruff.toml``). See
:mod:`sitemap_reader.discovery.core` for the theory of operation.

Writing a driver
----------------
A driver is a loop that performs actions and reports events; the whole of one, without
any I/O of its own, is the harness in ``tests/discovery/test_core.py``::

    core = Discovery([classify("example.com")], Options())
    queue = [a.ticket for a in core.start() if isinstance(a, Schedule)]
    while queue:
        actions = core.begin(queue.pop(0))
        # for each Fetch: core.response(...), core.body(...) per chunk while
        # core.reading(ticket), then core.end(...) -- or core.failure(...) --
        # and perform what comes back: Schedule -> queue, Emit -> output,
        # Checkpoint -> run it behind the records emitted before it.
    core.finish()

Tickets are plain JSON-able dicts, so a worker that takes jobs from a shared queue can
put a ticket in a message and report on it from another process (a ticket of another
run is rebuilt into a job). Parsing happens inside :meth:`Discovery.body` by default;
a driver may hand it elsewhere with a parser factory (``Discovery(parsers=...)``, see
:mod:`sitemap_reader.discovery.parsing`): the core still owns every policy, and collects
what the remote parser has ready on :meth:`Discovery.parsed`. The aiohttp driver does so
for large bodies (``SitemapReader(processes=N)``). To spread whole jobs over processes
instead, give each process its own targets (and, for a run-wide dedupe across them, a
shared seen-set in front of the output).
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
from sitemap_reader.discovery.core import Discovery
from sitemap_reader.discovery.model import Run, SitemapNode, Stats
from sitemap_reader.discovery.observer import NULL_OBSERVER, Observer, Watch
from sitemap_reader.discovery.targets import WELL_KNOWN_PATHS, Target, classify

__all__ = [
    "NULL_OBSERVER",
    "WELL_KNOWN_PATHS",
    "Action",
    "Checkpoint",
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
