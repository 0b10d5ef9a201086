"""Ranked output with bounded memory: the whole run best-first, or only the best N.

:class:`RankedBuffer` keeps records in memory up to ``Limits.max_ranked_in_memory``;
past it, they spill to a private temporary SQLite file (``sqlite3.connect("")``: on
disk, deleted when closed) as rows keyed by URL, and SQLite's external sorter produces
the order, so memory stays flat however big the site is. Copies of a URL listed by
several sitemaps merge into the most informative one
(:func:`~sitemap_reader.records.more_informative`), in memory or in the file, so held
output does not depend on which sitemap was read first. ``top=N`` is the same buffer
with a limit (memory about N records, the rest on disk). :class:`TopN` keeps only the N
best of distinct records in a heap. Both give score descending, ties by URL ascending
(:func:`sitemap_reader.records.scoring.order_key`). :class:`Sample` keeps a uniform random sample
of N URLs the same way, in memory for N records up to the same bound, on disk beyond.
"""

from __future__ import annotations

import hashlib
import heapq
import pickle
import secrets
import sqlite3
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

from sitemap_reader.options.limits import Limits
from sitemap_reader.records import UrlRecord, informativeness, more_informative
from sitemap_reader.records.outcomes import Stopped
from sitemap_reader.records.scoring import order_key

if TYPE_CHECKING:
    from sitemap_reader.discovery.model import Stats
    from sitemap_reader.options import Delivery

#: Records per batch handed out when draining.
DRAIN_BATCH = 1024
#: SQLite page cache of a spill file, in KiB (negative cache_size means KiB).
SPILL_CACHE_KIB = 16 * 1024


class RankedSink(Protocol):
    """Where a ranked run collects its records until the run ends."""

    def add(self, batch: list[UrlRecord]) -> None:
        """Take a batch of records (URLs new to the run)."""

    def merge(self, repeats: list[UrlRecord]) -> None:
        """Take other copies of URLs already added; keep the most informative copy."""

    def drain(self) -> Iterator[list[UrlRecord]]:
        """The records best-first, in batches (call once, after the last add)."""

    def close(self) -> None:
        """Release memory and files."""


#: A record's informativeness in the spill table (lastmod -inf is stored as this).
_SQL_NO_LASTMOD = -1e300
#: The merge rule of :func:`~sitemap_reader.records.more_informative`, in SQL.
_BETTER = """(?2, ?3, ?4) > (lastmod, prio, freq)
    OR ((?2, ?3, ?4) = (lastmod, prio, freq) AND ?5 < sitemap)"""
_SET = "neg = ?1, lastmod = ?2, prio = ?3, freq = ?4, sitemap = ?5, rec = ?6"
_INSERT = f"""INSERT INTO spill VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
ON CONFLICT (url) DO UPDATE SET {_SET} WHERE {_BETTER}"""


#: The order of held records: ascending by ``key(record)``, ties by URL.
OrderKey = Callable[[UrlRecord], float]


def _negative_score(record: UrlRecord) -> float:
    """Ranked output's key: the best score first (:func:`order_key`)."""
    return -record.score


class RankedBuffer:
    """Every record, best-first; in memory up to ``bound`` records, on disk beyond.

    Copies of a URL (:meth:`merge`) collapse into the most informative one
    (:func:`~sitemap_reader.records.more_informative`), in memory or in the spill file.
    ``limit`` keeps only the first ``limit`` records of the order (``top=N``).

    >>> buffer = RankedBuffer(bound=2)
    >>> buffer.add([UrlRecord("https://a/", score=0.1), UrlRecord("https://b/", score=0.9)])
    >>> buffer.add([UrlRecord("https://c/", score=0.5)])
    >>> [r.url for batch in buffer.drain() for r in batch]
    ['https://b/', 'https://c/', 'https://a/']
    >>> buffer.spilled
    True
    """

    def __init__(self, bound: int, limit: int | None = None, key: OrderKey | None = None) -> None:
        self._bound = max(1, bound)
        self._limit = limit
        self._key = key or _negative_score
        self._memory: dict[str, UrlRecord] = {}
        self._db: sqlite3.Connection | None = None
        self.spilled_records = 0

    @property
    def spilled(self) -> bool:
        """True once records went to the temporary file."""
        return self._db is not None

    def add(self, batch: list[UrlRecord]) -> None:
        """Take a batch; spill everything held when the bound is passed."""
        memory = self._memory
        for record in batch:
            old = memory.get(record.url)
            if old is None or more_informative(record, old):
                memory[record.url] = record
        if len(memory) > self._bound:
            self._spill()

    def merge(self, repeats: list[UrlRecord]) -> None:
        """Other copies of URLs added (or still to be added: a sitemap's first records
        are held back a little): the more informative copy stays, in memory or, at the
        next spill, in the file."""
        self.add(repeats)

    def _spill(self) -> None:
        db = self._db
        if db is None:
            db = self._db = sqlite3.connect("")  # private temporary file, gone on close
            db.execute(f"PRAGMA cache_size=-{SPILL_CACHE_KIB}")
            db.execute("PRAGMA journal_mode=OFF")
            db.execute("PRAGMA synchronous=OFF")
            db.execute(  # ``neg``: the key as given (no affinity: a 64-bit int stays exact)
                "CREATE TABLE spill (neg NOT NULL, lastmod REAL, prio INTEGER, "
                "freq INTEGER, sitemap TEXT, rec BLOB, url TEXT PRIMARY KEY)"
            )
        with db:  # a URL spilled before and added again is merged by the same rule
            db.executemany(_INSERT, map(self._row, self._memory.values()))
        self.spilled_records += len(self._memory)
        self._memory.clear()

    def _row(self, record: UrlRecord) -> tuple[float, float, bool, bool, str, bytes, str]:
        lastmod, prio, freq = informativeness(record)
        return (
            self._key(record),
            max(lastmod, _SQL_NO_LASTMOD),
            prio,
            freq,
            record.sitemap or "\uffff",
            pickle.dumps(record, pickle.HIGHEST_PROTOCOL),
            record.url,
        )

    def drain(self) -> Iterator[list[UrlRecord]]:
        """All records best-first (the first ``limit``), :data:`DRAIN_BATCH` at a time."""
        limit = self._limit
        if self._db is None:
            key = self._key
            memory = sorted(self._memory.values(), key=lambda r: (key(r), r.url))[:limit]
            self._memory = {}
            for start in range(0, len(memory), DRAIN_BATCH):
                yield memory[start : start + DRAIN_BATCH]
            return
        if self._memory:
            self._spill()
        loads = pickle.loads
        query = "SELECT rec FROM spill ORDER BY neg, url"
        cursor = self._db.execute(query + (f" LIMIT {int(limit)}" if limit is not None else ""))
        while rows := cursor.fetchmany(DRAIN_BATCH):
            yield [loads(row[0]) for row in rows]

    def close(self) -> None:
        """Drop what is held and delete the temporary file."""
        self._memory = {}
        if self._db is not None:
            self._db.close()
            self._db = None


class _Kept:
    """A heap entry; ``a < b`` means a ranks worse (lower score, or same score and a
    later URL), so the heap's root is the first record to give up."""

    __slots__ = ("record",)

    def __init__(self, record: UrlRecord) -> None:
        self.record = record

    def __lt__(self, other: _Kept) -> bool:
        a, b = self.record, other.record
        return a.score < b.score or (a.score == b.score and a.url > b.url)


class TopN:
    """The ``n`` best of distinct records, in memory proportional to ``n`` (no merging of
    copies: the reader's ``top=N`` uses :class:`RankedBuffer` with a limit instead).

    >>> top = TopN(2)
    >>> top.add([UrlRecord(f"https://x/{i}", score=i / 10) for i in range(5)])
    >>> [r.url for batch in top.drain() for r in batch]
    ['https://x/4', 'https://x/3']
    """

    def __init__(self, n: int) -> None:
        self._n = n
        self._heap: list[_Kept] = []

    def add(self, batch: list[UrlRecord]) -> None:
        """Offer a batch; keep a record only while it is among the best ``n``."""
        heap, n = self._heap, self._n
        for record in batch:
            entry = _Kept(record)
            if len(heap) < n:
                heapq.heappush(heap, entry)
            elif heap and heap[0] < entry:
                heapq.heapreplace(heap, entry)

    def drain(self) -> Iterator[list[UrlRecord]]:
        """The kept records best-first."""
        records = sorted((e.record for e in self._heap), key=order_key)
        self._heap = []
        for start in range(0, len(records), DRAIN_BATCH):
            yield records[start : start + DRAIN_BATCH]

    def close(self) -> None:
        """Drop what is held."""
        self._heap = []


class Sample:
    """A uniform random sample of ``n`` of the distinct URLs, in memory for ``n`` records
    (at most ``bound``: a bigger sample waits in a temporary file, as ranked output does).

    Each URL gets a rank from a keyed hash (BLAKE2b keyed with ``seed``) and the ``n``
    lowest ranks are kept (bottom-n sampling): every URL is as likely to be kept as any
    other, and the sample depends on the site and the seed only, never on the order in
    which concurrent fetches deliver the records, so one seed gives one sample. Other
    copies of a kept URL merge as in ranked output (:func:`more_informative`). The sample
    comes out in rank order (itself a random order). Past ``bound`` the sample is a
    :class:`RankedBuffer` ordered by rank and cut at ``n``: memory for ``bound`` records,
    the rest on disk, the same records in the same order.

    >>> sample = Sample(2, seed=7)
    >>> sample.add([UrlRecord(f"https://x/{i}") for i in range(100)])
    >>> again = Sample(2, seed=7)
    >>> again.add([UrlRecord(f"https://x/{i}") for i in reversed(range(100))])
    >>> [r.url for b in sample.drain() for r in b] == [r.url for b in again.drain() for r in b]
    True
    """

    def __init__(self, n: int, seed: int, bound: int | None = None) -> None:
        self._n = n
        self._salt = hashlib.blake2b(str(seed).encode(), digest_size=16).digest()
        self._heap: list[tuple[int, str]] = []  # (-rank, url): the highest rank on top
        self._kept: dict[str, UrlRecord] = {}
        big = bound is not None and n > bound
        self._buffer = RankedBuffer(bound, n, self._signed_rank) if big and bound else None

    @property
    def spilled(self) -> bool:
        """True once records went to the temporary file."""
        return self._buffer is not None and self._buffer.spilled

    def _rank(self, url: str) -> int:
        digest = hashlib.blake2b(
            url.encode("utf-8", "surrogatepass"), digest_size=8, key=self._salt
        ).digest()
        return int.from_bytes(digest, "big")

    def _signed_rank(self, record: UrlRecord) -> float:
        """The rank shifted into SQLite's signed 64-bit integers (the same order)."""
        return self._rank(record.url) - 2**63

    def add(self, batch: list[UrlRecord]) -> None:
        """Offer a batch of URLs new to the run; keep those among the ``n`` lowest ranks."""
        if self._buffer is not None:
            self._buffer.add(batch)
            return
        heap, kept, n = self._heap, self._kept, self._n
        for record in batch:
            entry = (-self._rank(record.url), record.url)
            if len(heap) < n:
                heapq.heappush(heap, entry)
            elif entry > heap[0]:
                del kept[heapq.heapreplace(heap, entry)[1]]
            else:
                continue
            kept[record.url] = record

    def merge(self, repeats: list[UrlRecord]) -> None:
        """Other copies of URLs already offered: a kept one takes the more informative."""
        if self._buffer is not None:
            self._buffer.merge(repeats)
            return
        kept = self._kept
        for record in repeats:
            held = kept.get(record.url)
            if held is not None and more_informative(record, held):
                kept[record.url] = record

    def drain(self) -> Iterator[list[UrlRecord]]:
        """The sample, lowest rank first."""
        if self._buffer is not None:
            yield from self._buffer.drain()
            return
        order = [self._kept[url] for _, url in sorted(self._heap, reverse=True)]
        self.close()
        for start in range(0, len(order), DRAIN_BATCH):
            yield order[start : start + DRAIN_BATCH]

    def close(self) -> None:
        """Drop what is held (and the temporary file)."""
        self._heap, self._kept = [], {}
        if self._buffer is not None:
            self._buffer.close()


def make_sink(delivery: Delivery, limits: Limits) -> RankedSink | None:
    """The collector of a delivery whose order waits for the whole run (ranked, ``top``,
    ``sample``); None for discovery order.

    ``top`` uses the buffer too (with a limit), not :class:`TopN`: copies of a URL must
    merge whichever of them ranks higher, which needs every URL's best copy. A sample
    without a seed gets a random one."""
    if delivery.sample is not None:
        seed = secrets.randbits(64) if delivery.seed is None else delivery.seed
        return Sample(delivery.sample, seed, limits.max_ranked_in_memory)
    top = delivery.top
    if top is not None:
        return RankedBuffer(min(limits.max_ranked_in_memory, max(top, 1024)), limit=top)
    if delivery.ranked:
        return RankedBuffer(limits.max_ranked_in_memory)
    return None


def cut(
    batches: Iterator[list[UrlRecord]], cap: int | None, stats: Stats
) -> Iterator[list[UrlRecord]]:
    """The first ``cap`` records of a held order (``max_urls`` of ranked output or a
    sample); reaching it is the run's budget stop, unless the run stopped before."""
    if cap is None:
        yield from batches
        return
    left = cap
    for batch in batches:
        if len(batch) >= left:
            yield batch[:left]
            if stats.stopped is None:
                stats.stopped = Stopped("budget", "max_urls", cap)
            return
        left -= len(batch)
        yield batch
