"""Which waiting record a :class:`~sitemap_reader.SitemapLoader` hands out next.

The loader keeps the records read and not handed out yet in a *window* (at most its
``buffer``; reading pauses while the buffer is full). A :class:`HandOut` policy holds
that window and picks from it:

* :class:`BySite` (``order="sites"``, the default): round-robin across sites, the
  registrable domains (a site spread over 300 subdomains is one site, as a crawler's
  politeness and a site owner see it), then across the hosts of each site; within a
  host, oldest first, or best-scored first with ``best_first``. A small site beside a
  huge one gets one hand-out in every S (S: the sites with records waiting), and a
  crawler that waits between two requests to one host always has another site's record
  to fetch meanwhile (asked of Crawlee's loader: crawlee-python #1263).
* :class:`ByHost` (``order="hosts"``): round-robin across hosts, each host a turn of its
  own (a site of 300 subdomains takes 300 turns for a one-host site's one).
* :class:`InOrder` (``order="intake"``): over all hosts together, oldest first, or
  best-scored first with ``best_first``.

The records read beyond the window wait in :class:`SiteQueues`, which lets them into the
window the same way, round-robin across sites, so a site whose records were read after
a big site's thousands does not wait behind them (the loader's theory of operation
gives the bound).

"Best first" is best among the window: a record read later may score higher than one
already handed out. A policy of your own is a function ``best_first -> HandOut``
(``order=my_policy``). Nothing here does I/O.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeAlias, TypeVar

from sitemap_reader.parse.domains import registrable_domain
from sitemap_reader.records import UrlRecord

#: A waiting record and its row id in the progress file (lower ids were read earlier).
Row: TypeAlias = tuple[int, UrlRecord]
Q = TypeVar("Q")


class HandOut(Protocol):
    """The window of waiting records and the rule that picks the next one."""

    def put(self, row: Row) -> None:
        """A record joins the window (rows come in growing id order)."""

    def take(self) -> Row | None:
        """The record to hand out next, out of the window (None: the window is empty)."""

    def __len__(self) -> int:
        """Records in the window."""


#: ``order=``: a policy's name, or a function building a policy from ``best_first``.
Order: TypeAlias = str | Callable[[bool], HandOut]


class _Queue:
    """One queue of rows: oldest first, or best-scored first (ties: oldest first)."""

    __slots__ = ("best", "heap", "rows")

    def __init__(self, best_first: bool) -> None:
        self.best = best_first
        self.rows: deque[Row] = deque()
        self.heap: list[tuple[float, int, UrlRecord]] = []

    def put(self, row: Row) -> None:
        if self.best:
            heapq.heappush(self.heap, (-row[1].score, row[0], row[1]))
        else:
            self.rows.append(row)

    def take(self) -> Row:
        if self.best:
            _, row_id, record = heapq.heappop(self.heap)
            return row_id, record
        return self.rows.popleft()

    def __len__(self) -> int:
        return len(self.heap) if self.best else len(self.rows)


class InOrder:
    """Every host together: oldest first, or best-scored first (``order="intake"``)."""

    def __init__(self, best_first: bool) -> None:
        self._queue = _Queue(best_first)

    def put(self, row: Row) -> None:
        self._queue.put(row)

    def take(self) -> Row | None:
        return self._queue.take() if len(self._queue) else None

    def __len__(self) -> int:
        return len(self._queue)


def authority(url: str) -> str:
    """``host[:port]`` of a URL, as the reader's scheduler keys hosts ("" without one)."""
    return url.split("/", 3)[2] if "://" in url else ""


def site_of(host: str) -> str:
    """The site a ``host[:port]`` belongs to: its registrable domain, or the host and
    port themselves when it has none (an IP address, ``localhost``, a public suffix).

    >>> site_of("blog.example.co.uk"), site_of("www.example.co.uk:8080"), site_of("127.0.0.1:80")
    ('example.co.uk', 'example.co.uk', '127.0.0.1:80')
    """
    name = host.rsplit("@", 1)[-1]
    if not name.startswith("["):
        name = name.rsplit(":", 1)[0] if name.count(":") == 1 else name
    return registrable_domain(name) or host


class _Fifo(deque[UrlRecord]):
    """A site's held records, oldest first."""

    put = deque.append
    take = deque.popleft


class _RoundRobin(Generic[Q]):
    """Queues by key, taken in turns: the key of each take goes to the back of the line
    while its queue holds more, and out (memory freed) once it is empty. ``key`` maps a
    URL's ``host[:port]`` to its queue's key (remembered per host)."""

    __slots__ = ("_key", "_keys", "_make", "queues", "size", "turn")

    def __init__(self, make: Callable[[], Q], key: Callable[[str], str]) -> None:
        self._make = make
        self._key = key
        self._keys: dict[str, str] = {}
        self.queues: dict[str, Q] = {}
        #: Keys with something waiting, the next to serve first.
        self.turn: deque[str] = deque()
        self.size = 0

    def put(self, url: str, item: object) -> str:
        """Queue ``item`` under the key of ``url``'s host; that key."""
        host = authority(url)
        key = self._keys.get(host)
        if key is None:
            key = self._keys[host] = self._key(host)
        queue = self.queues.get(key)
        if queue is None:
            queue = self.queues[key] = self._make()
            self.turn.append(key)
        queue.put(item)  # type: ignore[attr-defined]
        self.size += 1
        return key

    def take(self) -> tuple[str, Any]:
        """The next key in line and its queue's next item (call only when ``size``)."""
        key = self.turn.popleft()
        queue = self.queues[key]
        item = queue.take()  # type: ignore[attr-defined]
        if len(queue):  # type: ignore[arg-type]
            self.turn.append(key)
        else:
            del self.queues[key]
        self.size -= 1
        return key, item


class _Rotation:
    """A hand-out policy of queues taken in turns (:class:`_RoundRobin`)."""

    def __init__(self, make: Callable[[], HandOut], key: Callable[[str], str]) -> None:
        self._turns: _RoundRobin[HandOut] = _RoundRobin(make, key)

    def put(self, row: Row) -> None:
        self._turns.put(row[1].url, row)

    def take(self) -> Row | None:
        return self._turns.take()[1] if self._turns.size else None

    def __len__(self) -> int:
        return self._turns.size


class ByHost(_Rotation):
    """Round-robin across hosts (``host[:port]``), each host's own queue oldest or best
    first (``order="hosts"``).

    >>> policy = ByHost(best_first=False)
    >>> for n, url in enumerate(["http://a/1", "http://a/2", "http://b/1"]):
    ...     policy.put((n, UrlRecord(url)))
    >>> [policy.take()[1].url for _ in range(3)]
    ['http://a/1', 'http://b/1', 'http://a/2']
    """

    def __init__(self, best_first: bool) -> None:
        self.best_first = best_first
        super().__init__(lambda: _Queue(best_first), str)


class BySite(_Rotation):
    """Round-robin across sites (:func:`site_of`), then across the hosts of each site
    (:class:`ByHost`), each host oldest or best first (``order="sites"``).

    >>> policy = BySite(best_first=False)
    >>> urls = [f"http://h{n}.big.example/{n}" for n in range(3)] + ["http://small.example/1"]
    >>> for n, url in enumerate(urls):
    ...     policy.put((n, UrlRecord(url)))
    >>> [policy.take()[1].url.split("/")[2] for _ in range(4)]
    ['h0.big.example', 'small.example', 'h1.big.example', 'h2.big.example']
    """

    def __init__(self, best_first: bool) -> None:
        self.best_first = best_first
        super().__init__(lambda: ByHost(best_first), site_of)


class SiteQueues:
    """Records read and not in the window yet, by site, let out round-robin across sites
    (each site's in the order read): what the loader holds beyond its buffer.

    It counts each site's records in and out, so :meth:`passed` says whether every
    record held at some instant (:meth:`mark`) has left.

    >>> held = SiteQueues()
    >>> held.put([UrlRecord(f"http://big.example/{n}") for n in range(3)])
    >>> held.put([UrlRecord("http://small.example/1")])
    >>> [r.url for r in held.take(3)]
    ['http://big.example/0', 'http://small.example/1', 'http://big.example/1']
    """

    def __init__(self) -> None:
        self._sites: _RoundRobin[_Fifo] = _RoundRobin(_Fifo, site_of)
        self._in: dict[str, int] = {}
        self._out: dict[str, int] = {}

    def put(self, batch: list[UrlRecord]) -> None:
        """Hold a batch (in the order read)."""
        counts = self._in
        for record in batch:
            site = self._sites.put(record.url, record)
            counts[site] = counts.get(site, 0) + 1

    def take(self, count: int) -> list[UrlRecord]:
        """Up to ``count`` records, one site after the other."""
        out: list[UrlRecord] = []
        sites, counts = self._sites, self._out
        while len(out) < count and sites.size:
            site, record = sites.take()
            counts[site] = counts.get(site, 0) + 1
            out.append(record)
        return out

    def mark(self) -> dict[str, int]:
        """Where each site holding records stands now (for :meth:`passed`)."""
        return {site: self._in[site] for site in self._sites.queues}

    def passed(self, mark: dict[str, int]) -> bool:
        """Whether every record held at ``mark`` has been taken."""
        return all(self._out.get(site, 0) >= count for site, count in mark.items())

    def __len__(self) -> int:
        return self._sites.size


#: The named policies of ``order=``.
POLICIES: dict[str, Callable[[bool], HandOut]] = {
    "sites": BySite,
    "hosts": ByHost,
    "intake": InOrder,
}


#: What a hand-out policy has (:class:`HandOut`).
_POLICY_METHODS = ("put", "take", "__len__")


def make_policy(order: Order, best_first: bool) -> HandOut:
    """The policy ``order`` names (or builds), for ``best_first``. A function of the
    caller's that fails, or gives something that is no policy, is a ValueError saying so.
    """
    if isinstance(order, str):
        return POLICIES[order](best_first)
    try:
        policy = order(best_first)
    except Exception as exc:  # the caller's code: its failure is a refused value
        raise ValueError(f"{order!r}(best_first) failed: {type(exc).__name__}: {exc}") from exc
    if not all(callable(getattr(policy, name, None)) for name in _POLICY_METHODS):
        shown = repr(policy)[:80]
        raise ValueError(f"{order!r} gave {shown}, not a hand-out policy (put, take, len)")
    return policy
