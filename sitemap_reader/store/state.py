"""The state store: one SQLite state file, read and written through one connection.

Every change is written by :meth:`StateStore.save_read` (one complete sitemap),
:meth:`StateStore.save_seen` (the URLs of one that broke off) or
:meth:`StateStore.save_unchanged`, inside a transaction the caller commits with
:meth:`StateStore.commit`. A sitemap that broke off has its URLs marked seen and nothing
else, so none of its URLs is reported removed. SQLite's journal (WAL) makes each commit
atomic: a process killed at any instant leaves the file at the last commit.

The connection is shared by the caller's thread and, with ``background=True``, the
writer thread (:mod:`~sitemap_reader.store.writer`): every use of it holds one lock,
and every SQLite error becomes a :class:`~sitemap_reader.errors.StateError` naming the
file. The file's tables and checks are in :mod:`~sitemap_reader.store.schema`, the stored
values in :mod:`~sitemap_reader.store.codec`, the removal candidates in
:mod:`~sitemap_reader.store.removals`.
"""

from __future__ import annotations

import operator
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from itertools import repeat
from typing import Any

from sitemap_reader.errors import StateError
from sitemap_reader.records import UrlRecord
from sitemap_reader.store import removals
from sitemap_reader.store.codec import (
    SitemapRead,
    StoredSitemap,
    in_range,
    pack_children,
    urls_or_none,
)
from sitemap_reader.store.schema import open_state
from sitemap_reader.store.writer import Writer

#: Keys per ``IN (...)`` lookup (SQLite allows 32,766 parameters; smaller is faster).
LOOKUP_CHUNK = 512
#: URL rows per ``executemany`` of a save (the lock is released between two parts).
WRITE_CHUNK = 4096

# The owner of a URL is the sitemap that listed it last. Its lastmod is the newest any
# sitemap of the run gave it (the merge rule of records.more_informative, for the one
# field the state keeps), so the state does not depend on which sitemap was read last.
# ``shared`` is set when another sitemap still claims it: it listed it earlier in this
# same run (seen = this run), or it was not re-read this run (so it may well still list it).
_UPSERT_URL = """
INSERT INTO urls (key, sitemap, lastmod, seen) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (key) DO UPDATE SET
    shared = urls.shared OR (
        urls.sitemap != excluded.sitemap AND (
            urls.seen = excluded.seen
            OR (SELECT read_run FROM sitemaps WHERE id = urls.sitemap) IS NOT excluded.seen
        )
    ),
    sitemap = excluded.sitemap,
    lastmod = CASE WHEN urls.seen = excluded.seen  -- two sitemaps of one run: the newest
        THEN max(coalesce(urls.lastmod, excluded.lastmod), coalesce(excluded.lastmod, urls.lastmod))
        ELSE excluded.lastmod END,
    seen = excluded.seen
"""


class StateStore:
    """The SQLite state file (created when missing). Use as a context manager or close().

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "state.db")
    >>> with StateStore(path) as store:
    ...     store.begin_run()
    1
    """

    def __init__(self, path: str | os.PathLike[str], *, background: bool = False) -> None:
        self.path = os.fspath(path)
        #: Serializes every use of the connection (the writer thread's and the caller's).
        self._lock = threading.RLock()
        self._writer: Writer | None = None
        self._background = background
        #: True when the state held no URL as the current run began (see begin_run).
        self.empty_at_start = False
        #: URL rows found damaged by lookups so far (read as new, rewritten on save).
        self.damaged_rows = 0
        #: Sitemaps whose removed URLs could not be named (:meth:`take_lost`).
        self.lost: removals.Lost = {}
        self._db = open_state(self.path, background=background)  # checked, then set up
        self.run = 0

    def __enter__(self) -> StateStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions ------------------------------------------------------------------

    def _write(self) -> sqlite3.Connection:
        """The connection, inside a write transaction (opened on first use)."""
        if not self._db.in_transaction:
            self._guard(self._db.execute, "BEGIN IMMEDIATE")
        return self._db

    def commit(self) -> None:
        """Make everything written so far durable (atomically)."""
        self._guard(self._end, "COMMIT")

    def rollback(self) -> None:
        """Forget everything written since the last commit."""
        self._guard(self._end, "ROLLBACK")

    def _end(self, verb: str) -> None:
        if self._db.in_transaction:
            self._db.execute(verb)

    def close(self) -> None:
        """Finish the deferred writes, roll back what is not committed, close the file."""
        writer, self._writer = self._writer, None
        try:
            if writer is not None:
                writer.stop()
            self.rollback()
        finally:
            self._db.close()

    def _guard(self, call: Any, *args: Any) -> Any:
        try:
            with self._lock:
                return call(*args)
        except sqlite3.Error as exc:
            raise StateError(f"state file {self.path}: {exc}") from exc

    # -- the writer thread -------------------------------------------------------------

    def defer(self, call: Callable[[], object]) -> None:
        """Run a write later, in order, on the writer thread (at once without
        ``background``). A write that failed raises its StateError from the next
        :meth:`defer` or :meth:`flush`."""
        if not self._background:
            call()
            return
        if self._writer is None:
            self._writer = Writer()
        self._writer.put(call)

    def flush(self) -> None:
        """Wait until every deferred write ran (raising the first one that failed)."""
        if self._writer is not None:
            self._writer.wait()

    # -- reading -----------------------------------------------------------------------

    def begin_run(self) -> int:
        """Start a run: a new run number, committed at once (so it is never reused)."""
        return int(self._guard(self._begin_run))

    def _begin_run(self) -> int:
        db = self._write()
        db.execute("UPDATE meta SET value = value + 1 WHERE name = 'run'")
        self.run = int(db.execute("SELECT value FROM meta WHERE name = 'run'").fetchone()[0])
        # A state that knew no URL when the run began (a first run) holds, during the
        # run, only URLs the run saved itself: a lookup of a URL new to the run is moot.
        self.empty_at_start = db.execute("SELECT 1 FROM urls LIMIT 1").fetchone() is None
        self.commit()
        return self.run

    def sitemap(self, url: str) -> StoredSitemap | None:
        """What the last complete read of ``url`` left, or None."""
        row = self._guard(
            _one,
            self._db,
            "SELECT id, url, format, etag, last_modified, index_lastmod, hash, records, "
            "children FROM sitemaps WHERE url = ?",
            (url,),
        )
        return None if row is None else StoredSitemap(*row)

    def lastmods(self, keys: Sequence[int]) -> dict[int, int | None]:
        """Stored lastmod (seconds or None) of each known key; unknown keys are absent."""
        found: dict[int, int | None] = self._guard(self._lastmods, keys)
        return found

    def _lastmods(self, keys: Sequence[int]) -> dict[int, int | None]:
        found: dict[int, int | None] = {}
        execute = self._db.execute
        for start in range(0, len(keys), LOOKUP_CHUNK):
            part = keys[start : start + LOOKUP_CHUNK]
            marks = ",".join("?" * len(part))
            found.update(execute(f"SELECT key, lastmod FROM urls WHERE key IN ({marks})", part))
        damaged = [k for k, v in found.items() if v is not None and not in_range(v)]
        for key in damaged:  # a damaged lastmod: the URL reads as new (its row is rewritten)
            del found[key]
        self.damaged_rows += len(damaged)
        return found

    def counts(self) -> dict[str, int]:
        """Rows per table (for tests and the benchmark)."""
        names = ("sitemaps", "urls", "pending", "gone")
        count = self._db.execute
        return {n: self._guard(count, f"SELECT count(*) FROM {n}").fetchone()[0] for n in names}

    # -- writing -----------------------------------------------------------------------

    def save_unchanged(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        index_lastmod: int | None = None,
    ) -> None:
        """A sitemap found unchanged (304, same hash, or an index lastmod not newer):
        keep its URLs, refresh the validators and the index lastmod when given."""
        self._guard(
            self._write().execute,
            "UPDATE sitemaps SET etag = coalesce(?, etag), "
            "last_modified = coalesce(?, last_modified), "
            "index_lastmod = max(coalesce(?, index_lastmod), coalesce(index_lastmod, ?)) "
            "WHERE url = ?",
            (etag, last_modified, index_lastmod, index_lastmod, url),
        )

    def save_read(self, read: SitemapRead) -> None:
        """Save one complete read: the sitemap's row, its URLs, and removal candidates.

        The URL rows go in parts of :data:`WRITE_CHUNK`, the lock released between them,
        so a lookup of the caller's thread waits for one part, not the whole sitemap
        (it is all one transaction either way)."""
        rows = self._guard(self._save_read, read)
        for start in range(0, len(rows), WRITE_CHUNK):
            self._guard(self._db.executemany, _UPSERT_URL, rows[start : start + WRITE_CHUNK])

    def _save_read(self, read: SitemapRead) -> list[tuple[int, int, int | None, int]]:
        db = self._write()
        old = self.sitemap(read.url)
        if old is not None and old.damage() is not None:
            # A damaged row is rewritten whole (the upsert keeps only index_lastmod when
            # this read has none), and there is nothing to compare the read with.
            db.execute("UPDATE sitemaps SET index_lastmod = NULL WHERE id = ?", (old.id,))
            old = None
        old_urls = self._stored_urls(read.url)[0] if old is not None else None
        (sitemap_id,) = db.execute(
            "INSERT INTO sitemaps (url, format, etag, last_modified, index_lastmod, hash, "
            "records, read_run, children, urls) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (url) DO UPDATE SET format = excluded.format, etag = excluded.etag, "
            "last_modified = excluded.last_modified, "
            "index_lastmod = coalesce(excluded.index_lastmod, index_lastmod), "
            "hash = excluded.hash, records = excluded.records, read_run = excluded.read_run, "
            "children = excluded.children, urls = excluded.urls RETURNING id",
            (
                read.url,
                read.format,
                read.etag,
                read.last_modified,
                read.index_lastmod,
                read.hash,
                read.records,
                self.run,
                pack_children(read.children) if read.children else None,
                read.urls_blob,
            ),
        ).fetchone()
        if old is not None:
            self.lost.update(removals.note_dropped_children(db, old, read))
            removals.note_missing_urls(db, sitemap_id, old_urls, read.keys)
        return self._url_rows(read, sitemap_id)

    def save_seen(self, read: SitemapRead) -> None:
        """Save the URLs of a read that broke off (``read.hash`` is None): they went out,
        so they are seen this run, and the next run does not take them for new.

        Nothing else of the read is kept: no validators, no hash, no removal inferred
        from what it did not list, so the next run reads the sitemap in full. A sitemap
        never read whole gets a row holding what it listed so far (its URL text, to name
        what a later complete read no longer lists)."""
        rows = self._guard(self._save_seen, read)
        for start in range(0, len(rows), WRITE_CHUNK):
            self._guard(self._db.executemany, _UPSERT_URL, rows[start : start + WRITE_CHUNK])

    def _save_seen(self, read: SitemapRead) -> list[tuple[int, int, int | None, int]]:
        db = self._write()
        row = db.execute("SELECT id FROM sitemaps WHERE url = ?", (read.url,)).fetchone()
        if row is None:
            row = db.execute(
                "INSERT INTO sitemaps (url, format, records, read_run, urls) "
                "VALUES (?, ?, ?, ?, ?) RETURNING id",
                (read.url, read.format, read.records, self.run, read.urls_blob),
            ).fetchone()
        return self._url_rows(read, row[0])

    def _url_rows(
        self, read: SitemapRead, sitemap_id: int
    ) -> list[tuple[int, int, int | None, int]]:
        """The URL rows of a read, in the order the upsert writes fastest."""
        run = self.run
        # B-tree order: fewer page splits. Sorted on the key alone (an int compare, about
        # 4x faster than comparing pairs); the upsert does not depend on the order of two
        # rows of one key (same sitemap, same run: the newest lastmod wins either way).
        if len(read.keys) != len(read.lastmods):
            raise ValueError("SitemapRead.keys and .lastmods differ in length")
        # Built by C-level zip and sort: no Python frame per URL.
        rows = list(zip(read.keys, repeat(sitemap_id), read.lastmods, repeat(run)))
        rows.sort(key=_first)
        return rows

    def urls_damage(self, url: str) -> str | None:
        """Why the stored URL text of ``url`` cannot be compared with a new read (None:
        it can, or there is none)."""
        return self._stored_urls(url)[1]

    def _stored_urls(self, url: str) -> tuple[list[str] | None, str | None]:
        """The stored URL text of ``url`` (None: none, or damaged) and what damages it:
        it does not decode, or holds another number of URLs than the read that wrote it
        (then it cannot be trusted to name the URLs that left)."""
        query = "SELECT urls, records FROM sitemaps WHERE url = ?"
        row = self._guard(_one, self._db, query, (url,))
        if row is None or row[0] is None:
            return None, None
        texts = urls_or_none(row[0])
        if texts is None:
            return None, removals.UNDECODABLE
        if len(texts) != row[1]:
            return (
                None,
                f"its stored URL list holds {len(texts):,} URLs, its read listed {row[1]!r}",
            )
        return texts, None

    def take_lost(self) -> removals.Lost:
        """The sitemaps (by URL) whose removed URLs the state could not name this run,
        where to say so and why (:data:`~sitemap_reader.store.removals.Lost`); forgotten
        once taken."""
        lost, self.lost = self.lost, {}
        return lost

    def urls_blob(self, url: str) -> bytes | None:
        """The stored URL text of a sitemap (compressed), or None."""
        query = "SELECT urls FROM sitemaps WHERE url = ?"
        row = self._guard(_one, self._db, query, (url,))
        return None if row is None else row[0]

    # -- the end of a run --------------------------------------------------------------

    def finish_run(self, listed: set[str]) -> Iterator[list[UrlRecord]]:
        """Resolve removal candidates (:mod:`~sitemap_reader.store.removals`); yield the
        removed URLs as records, in batches.

        ``listed`` holds every sitemap URL some robots.txt or index listed this run: a
        child an index dropped but that is listed elsewhere is not gone. Consume the
        iterator to the end, then :meth:`commit`.
        """
        db = self._write()
        for url, said in self._guard(removals.expand_gone, db, listed).items():
            self.lost.setdefault(url, said)  # the index that dropped it may have said it
        after = removals.FIRST
        while True:
            rows = self._guard(removals.candidates, db, after)
            if not rows:
                break
            after = (rows[-1][0], rows[-1][1])
            removed = self._guard(removals.resolve, db, rows, self.lost)
            if removed:
                yield removed
        self._guard(removals.clear, db)


_first = operator.itemgetter(0)


def _one(db: sqlite3.Connection, query: str, args: tuple[Any, ...]) -> Any:
    """The first row of a query (under the caller's lock: execute and fetch together)."""
    return db.execute(query, args).fetchone()
