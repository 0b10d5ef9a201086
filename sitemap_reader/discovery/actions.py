"""What the discovery core tells a driver to do: frozen, slotted action values.

A driver feeds :class:`~sitemap_reader.discovery.core.Discovery` events (a job may
start, a response's status and headers, a body chunk, the end of a body, a failure)
and gets back a list of these actions, which it carries out in order:

* :class:`Schedule`: a new job exists; run it when a slot is free (``host`` is the
  server it will talk to, for per-host fairness). Running it means calling
  :meth:`Discovery.begin` with its ticket.
* :class:`Fetch`: GET this URL (or read this file) now, for this job, and report back.
* :class:`Emit`: hand these records to the consumer (in this order, after the ones
  emitted before).
* :class:`Checkpoint`: run this state write once the consumer has taken every record
  emitted before it (an incremental run's save point); it may yield more records.
* :class:`Done`: this node is finished (fetched, failed or skipped): its tree entry is
  final, a driver may log it.

* :class:`Stop`: the run stopped (its deadline, its records budget): what is queued is
  skipped and every body being read is not wanted any more. A driver ends the reads it
  has in flight now (a stalled one would otherwise wait for its own timeout); each then
  settles as not finished.

A *ticket* is a small JSON-able dict that names a job. It travels with a driver's
request (Scrapy keeps it in ``meta``, a queue worker could keep it in a message) and
comes back with every event, so a driver never holds core objects, and a job whose
ticket comes from an earlier process (a resumed Scrapy ``JOBDIR``) is rebuilt from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sitemap_reader.discovery.model import SitemapNode, Stopped
from sitemap_reader.records import UrlRecord

Ticket = dict[str, Any]
Batch = list[UrlRecord]


@dataclass(frozen=True, slots=True)
class Schedule:
    """A job is ready: call :meth:`Discovery.begin` with ``ticket`` when ``host`` has a slot."""

    ticket: Ticket
    host: str


@dataclass(frozen=True, slots=True)
class Fetch:
    """Fetch ``url`` for the job of ``ticket`` and report what happened.

    ``kind`` is ``http`` (a GET), ``file`` (a local path) or ``stdin``. ``request_headers`` are
    conditional request headers (an incremental run); ``max_redirects`` bounds the
    redirects to follow; ``retry_connect`` says whether connection failures are worth
    retrying (False for an https attempt that has an http fallback); ``body`` is False
    when only the status matters (the response body is not read). ``target`` is the
    index of the run's target this job belongs to (a driver may pick a guarded or an
    open client per target). ``spacing`` is the least time in seconds between the start of
    two requests to the host of ``url`` (``--delay``, or the host's robots.txt
    ``Crawl-delay``): the driver waits until that much time passed since its previous
    request there. ``client`` is the HTTP client to send it with (``aiohttp``, or
    ``browser``: a browser's TLS and HTTP/2 fingerprint, for the option ``client=browser``
    and the ladder's second attempt at a blocked target).
    """

    ticket: Ticket
    url: str
    kind: str = "http"
    request_headers: Mapping[str, str] | None = None
    max_redirects: int = 10
    retry_connect: bool = True
    body: bool = True
    target: int = 0
    spacing: float = 0.0
    client: str = "aiohttp"


@dataclass(frozen=True, slots=True)
class Emit:
    """Records for the consumer, in order (URLs new to the run).

    ``repeats`` are other copies of URLs emitted before (only with
    ``Discovery(merge=True)``): a holder of the output merges them by
    :func:`~sitemap_reader.records.more_informative`; a stream ignores them.
    """

    records: Batch
    repeats: Batch = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A state write to run once the consumer has every record emitted before it."""

    write: Callable[[], Iterator[Batch]]

    def run(self) -> Iterator[Batch]:
        """Do the write; yields records the write produced (removed URLs)."""
        return self.write()


@dataclass(frozen=True, slots=True)
class Done:
    """``node`` is final (fetched, failed or skipped); ``ticket`` is None for a skip."""

    node: SitemapNode
    ticket: Ticket | None = None


@dataclass(frozen=True, slots=True)
class Stop:
    """The run stopped: ``stopped`` says why (once per run, the first stop)."""

    stopped: Stopped


Action = Schedule | Fetch | Emit | Checkpoint | Done | Stop
