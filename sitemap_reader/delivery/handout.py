"""Which waiting record a :class:`~sitemap_reader.SitemapLoader` hands out next.

The loader keeps the records read and not handed out yet in a *window* (at most its
``buffer``, and in a fresh crawl every record read so far: reading pauses while the
buffer is full). A :class:`HandOut` policy holds that window and picks from it:

* :class:`ByHost` (``order="hosts"``, the default): round-robin across hosts, so a
  crawler that waits between two requests to one host always has another host's record
  to fetch meanwhile (asked of Crawlee's loader: crawlee-python #1263). Within a host,
  oldest first, or best-scored first with ``best_first``.
* :class:`InOrder` (``order="intake"``): over all hosts together, oldest first, or
  best-scored first with ``best_first``.

"Best first" is best among the window: a record read later may score higher than one
already handed out. A policy of your own is a function ``best_first -> HandOut``
(``order=my_policy``). Nothing here does I/O.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from typing import Protocol, TypeAlias

from sitemap_reader.records import UrlRecord

#: A waiting record and its row id in the progress file (lower ids were read earlier).
Row: TypeAlias = tuple[int, UrlRecord]


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


class ByHost:
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
        self._hosts: dict[str, _Queue] = {}
        #: Hosts with waiting records, the next to serve first.
        self._turn: deque[str] = deque()
        self._size = 0

    def put(self, row: Row) -> None:
        url = row[1].url  # host[:port], as the reader's scheduler keys hosts
        host = url.split("/", 3)[2] if "://" in url else ""
        queue = self._hosts.get(host)
        if queue is None:
            queue = self._hosts[host] = _Queue(self.best_first)
        if not queue:
            self._turn.append(host)
        queue.put(row)
        self._size += 1

    def take(self) -> Row | None:
        if not self._turn:
            return None
        host = self._turn.popleft()
        queue = self._hosts[host]
        row = queue.take()
        if queue:
            self._turn.append(host)
        else:
            del self._hosts[host]  # no memory kept for hosts done with
        self._size -= 1
        return row

    def __len__(self) -> int:
        return self._size


#: The named policies of ``order=``.
POLICIES: dict[str, Callable[[bool], HandOut]] = {"hosts": ByHost, "intake": InOrder}


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
