"""Incremental state in SQLite: what earlier runs saw, so a later run does only new work.

One state file can serve any number of targets: sitemaps are keyed by their normalized
URL, page URLs by an 8-byte key. Tables:

``sitemaps``
    One row per sitemap read completely at least once: its ``ETag`` and
    ``Last-Modified`` (sent back as ``If-None-Match`` / ``If-Modified-Since``), the
    lastmod its parent index gave it (``index_lastmod``), a BLAKE2b hash of the body
    as received, its format and record count, the run that last read it
    (``read_run``), and two zlib blobs: the children of an index (URL and lastmod, to
    walk them again when the index itself answers 304) and the URL text of a urlset
    (only read back to name the URLs that disappeared from it).
``urls``
    One row per page URL: ``key`` (the first 8 bytes of BLAKE2b of the URL, a signed
    64-bit integer and the table's rowid, so the URL text is not stored per row), the
    sitemap that last listed it, its lastmod (Unix seconds), the run that last saw it,
    and ``shared`` (listed by more than one sitemap).
``pending`` / ``gone``
    Removal candidates: URLs a re-read sitemap no longer lists, and children an index
    no longer lists. They are resolved at the end of a run (a URL may have moved to a
    sitemap read later in the same run); a run killed before that leaves them for the
    next one, so no removal is ever lost.

Theory of operation
-------------------
The file is marked as ours in its SQLite header: ``PRAGMA application_id`` holds
:data:`APPLICATION_ID` and ``PRAGMA user_version`` the schema version. An existing file is
checked through a read-only connection *before* anything is written (not even the switch
to WAL), so a file of another program, or of a newer version of this one, is refused and
left byte for byte as it was. An unmarked file is taken only when it is empty, or when it
has exactly this schema's tables and columns (a state written before the mark existed);
it is marked on first use.

Every change is written by :meth:`StateStore.save_read` (one complete sitemap) or
:meth:`StateStore.save_unchanged`, inside a transaction the caller commits with
:meth:`StateStore.commit`. Nothing is written for a sitemap that failed, so its URLs
are neither marked seen nor reported removed. SQLite's journal (WAL) makes each commit
atomic: a process killed at any instant leaves the file at the last commit.

A URL is reported removed only when the sitemap that last listed it was read again
completely and no longer lists it (or its index dropped that sitemap), no sitemap
listed it again in the same run, and it was never seen in two sitemaps at once (for a
URL listed by several sitemaps, keys alone cannot show that every one of them dropped
it, so it is never reported rather than reported wrongly).

Size: about 30 bytes per URL in ``urls`` plus the compressed URL text (measured by
``benchmarks/incremental.py``); for 10 million URLs, well under a gigabyte.
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
import queue
import sqlite3
import threading
import urllib.parse
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import repeat
from typing import Any

from sitemap_reader.errors import StateError
from sitemap_reader.records import UrlRecord

SCHEMA_VERSION = 1
#: ``PRAGMA application_id`` of a state file: "SRst" in ASCII (sitemap-reader state).
APPLICATION_ID = 0x53527374
#: Keys per ``IN (...)`` lookup (SQLite allows 32,766 parameters; smaller is faster).
LOOKUP_CHUNK = 512
#: URL rows per ``executemany`` of a save (the lock is released between two parts).
WRITE_CHUNK = 4096
#: Removal candidates resolved per round trip at the end of a run.
RESOLVE_CHUNK = 1024
#: SQLite page cache of the state file, in KiB: the URL table's upper B-tree levels stay
#: in memory (10 million URLs make about 300 MB of leaves, and 2% of that in inner pages).
CACHE_KIB = 32 * 1024
#: Seconds a second process waits for the state file's write lock.
BUSY_TIMEOUT = 30.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sitemaps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    url TEXT NOT NULL UNIQUE,
    format TEXT,
    etag TEXT,
    last_modified TEXT,
    index_lastmod INTEGER,
    hash BLOB,
    records INTEGER NOT NULL DEFAULT 0,
    read_run INTEGER NOT NULL DEFAULT 0,
    children BLOB,
    urls BLOB
);
CREATE TABLE IF NOT EXISTS urls (
    key INTEGER PRIMARY KEY,
    sitemap INTEGER NOT NULL,
    lastmod INTEGER,
    seen INTEGER NOT NULL,
    shared INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS pending (
    key INTEGER NOT NULL,
    sitemap INTEGER NOT NULL,
    url TEXT NOT NULL,
    PRIMARY KEY (key, sitemap)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS gone (sitemap INTEGER PRIMARY KEY);
"""

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

_RESOLVE = """
SELECT p.key, p.sitemap, p.url, u.sitemap, u.shared, u.lastmod, s.url
FROM pending AS p
LEFT JOIN urls AS u ON u.key = p.key
LEFT JOIN sitemaps AS s ON s.id = p.sitemap
WHERE (p.key, p.sitemap) > (?, ?)
ORDER BY p.key, p.sitemap
LIMIT ?
"""


def _schema_columns() -> dict[str, list[str]]:
    """Column names of each table of :data:`_SCHEMA`, read from a scratch database."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(_SCHEMA)
        return _columns(db)
    finally:
        db.close()


def _columns(db: sqlite3.Connection) -> dict[str, list[str]]:
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {
        t: [c[1] for c in db.execute(f'PRAGMA table_info("{t}")')]
        for t in tables
        if not t.startswith("sqlite_")  # AUTOINCREMENT's bookkeeping
    }


_OUR_COLUMNS = _schema_columns()


def _foreign_reason(db: sqlite3.Connection) -> str | None:
    """Why the database is not a state file this version may write (None: it may).

    Marked files are judged by their mark; unmarked ones by their tables (empty, or
    exactly ours: a state written before the mark existed).
    """
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    reason = _mark_reason(app_id, version)
    if reason is not None or app_id == APPLICATION_ID:
        return reason
    return _tables_reason(db)


def _mark_reason(app_id: int, version: int) -> str | None:
    """Why the header's application_id and user_version are not ours (None: they may be)."""
    if app_id == APPLICATION_ID:
        if version > SCHEMA_VERSION:
            return f"state schema {version} is newer; this version reads {SCHEMA_VERSION}"
        if version < SCHEMA_VERSION:
            return f"state schema {version} is older; this version reads {SCHEMA_VERSION}"
        return None
    if app_id != 0:
        return f"it belongs to another program (application_id {app_id:#010x})"
    if version != 0:
        return f"user_version {version} is set by another program"
    return None


def _tables_reason(db: sqlite3.Connection) -> str | None:
    """Why an unmarked database is not ours: tables other than this schema's."""
    columns = _columns(db)
    if columns and columns != _OUR_COLUMNS:
        shown = ", ".join(sorted(columns)[:5])
        return f"it holds other tables ({shown})"
    return None


#: The first bytes of every SQLite 3 database file.
_MAGIC = b"SQLite format 3\x00"


def _header(path: str) -> bytes:
    """The 100-byte database header (fewer bytes for a short file), read as plain bytes."""
    with open(path, "rb") as stream:
        return stream.read(100)


def _unwritable(path: str) -> str | None:
    """Why the state at ``path`` cannot be written (None: it may be, as far as we can
    tell before trying): its file system is mounted read-only, or it is not writable.

    Asked before SQLite opens the file, whose own error ("attempt to write a readonly
    database", "unable to open database file") would not say which."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "read-only file system"
    except OSError:
        return None  # no such folder: SQLite says so
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return "permission denied"
    if not os.path.exists(path) and not os.access(folder, os.W_OK):
        return f"permission denied in {folder}"
    return None


def url_key(url: str) -> int:
    """The 8-byte key of a URL: BLAKE2b-64 as a signed integer (SQLite's INTEGER).

    Stable across processes (unlike ``hash()``). Two URLs collide with probability
    about n²/2⁶⁵: 3·10⁻⁶ among 10 million URLs; a collision makes one URL look
    unchanged when it is new, never the reverse.

    >>> url_key("https://example.com/") == url_key("https://example.com/")
    True
    """
    digest = hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def url_keys(urls: Iterable[str]) -> list[int]:
    """:func:`url_key` of each URL, in order (inlined: no Python call per URL).

    >>> url_keys(["https://example.com/"]) == [url_key("https://example.com/")]
    True
    """
    blake2b, from_bytes = hashlib.blake2b, int.from_bytes
    return [
        from_bytes(
            blake2b(u.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big", signed=True
        )
        for u in urls
    ]


def to_seconds(value: datetime | None) -> int | None:
    """A lastmod as whole Unix seconds (None stays None)."""
    return None if value is None else int(value.timestamp())


#: Unix seconds of 0001-01-01 and 9999-12-31 23:59:59: what a datetime can hold.
_SECONDS_RANGE = (-62135596800, 253402300799)


def _in_range(value: object) -> bool:
    """A stored lastmod that :func:`from_seconds` can read: an integer a datetime holds."""
    return type(value) is int and _SECONDS_RANGE[0] <= value <= _SECONDS_RANGE[1]


def from_seconds(value: int | None) -> datetime | None:
    """Unix seconds back to an aware UTC datetime."""
    return None if value is None else datetime.fromtimestamp(value, UTC)


def pack_urls(urls: Iterable[str]) -> bytes:
    """URL text, one a line, zlib-compressed (what the ``urls`` blob holds)."""
    text = "\n".join(urls)
    return zlib.compress((text + "\n" if text else "").encode("utf-8", "surrogatepass"), 6)


#: What decoding a damaged blob may raise (zlib, UTF-8, JSON, the wrong shape or type).
BLOB_ERRORS = (zlib.error, UnicodeError, ValueError, TypeError, MemoryError)


def unpack_urls(blob: bytes | None) -> list[str]:
    """The URLs of a :func:`pack_urls` blob (one of :data:`BLOB_ERRORS` if damaged)."""
    if not blob:
        return []
    if not isinstance(blob, bytes):
        raise TypeError(f"a URL blob is bytes, not {type(blob).__name__}")
    return zlib.decompress(blob).decode("utf-8", "surrogatepass").splitlines()


def _urls_or_none(blob: bytes | None) -> list[str] | None:
    """:func:`unpack_urls`, or None when the blob is damaged (nothing can be compared)."""
    try:
        return unpack_urls(blob)
    except BLOB_ERRORS:
        return None


def pack_children(children: Sequence[tuple[str, int | None]]) -> bytes:
    """An index's children (URL, lastmod seconds) as compressed JSON."""
    return zlib.compress(json.dumps(list(children), separators=(",", ":")).encode(), 6)


def unpack_children(blob: bytes | None) -> list[tuple[str, int | None]]:
    """The children of a :func:`pack_children` blob (one of :data:`BLOB_ERRORS` if
    damaged: each child must be a URL string and a lastmod that is an integer or null)."""
    if not blob:
        return []
    if not isinstance(blob, bytes):
        raise TypeError(f"a children blob is bytes, not {type(blob).__name__}")
    children = []
    for url, lastmod in json.loads(zlib.decompress(blob)):
        if not isinstance(url, str) or not (lastmod is None or _in_range(lastmod)):
            raise ValueError(f"not a child entry: {url!r}, {lastmod!r}")
        children.append((url, lastmod))
    return children


@dataclass(frozen=True, slots=True)
class StoredSitemap:
    """What the state knows about one sitemap from its last complete read."""

    id: int
    url: str
    format: str | None
    etag: str | None
    last_modified: str | None
    index_lastmod: int | None
    hash: bytes | None
    records: int
    children: bytes | None

    def child_refs(self) -> list[tuple[str, datetime | None]]:
        """The children of an index as (URL, lastmod)."""
        return [(url, from_seconds(lastmod)) for url, lastmod in unpack_children(self.children)]

    def damage(self) -> str | None:
        """What makes this row unusable (None: it is sound): a column of the wrong type,
        or a children blob that does not decode. A damaged row is read as unknown."""
        for name, kinds in _ROW_TYPES:
            value = getattr(self, name)
            if not isinstance(value, kinds) or type(value) is bool:
                return f"column {name} holds {type(value).__name__}"
        if self.index_lastmod is not None and not _in_range(self.index_lastmod):
            return "column index_lastmod is out of range"
        try:
            unpack_children(self.children)
        except BLOB_ERRORS as exc:
            return f"its stored children do not decode ({str(exc)[:100] or type(exc).__name__})"
        return None


#: The type each column of a sound ``sitemaps`` row has (SQLite would store anything).
_ROW_TYPES: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("id", int),
    ("url", str),
    ("format", (str, type(None))),
    ("etag", (str, type(None))),
    ("last_modified", (str, type(None))),
    ("index_lastmod", (int, type(None))),
    ("hash", (bytes, type(None))),
    ("records", int),
    ("children", (bytes, type(None))),
)


@dataclass(slots=True)
class SitemapRead:
    """One complete read of a sitemap, ready to be saved.

    ``keys`` and ``lastmods`` are parallel: every in-scope URL it listed (duplicates
    included) and its lastmod in seconds or None.
    """

    url: str
    format: str
    hash: bytes
    records: int
    etag: str | None = None
    last_modified: str | None = None
    index_lastmod: int | None = None
    keys: list[int] = field(default_factory=list)
    lastmods: list[int | None] = field(default_factory=list)
    urls_blob: bytes | None = None
    children: list[tuple[str, int | None]] = field(default_factory=list)


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
        if os.path.exists(self.path):
            self._check_foreign()  # read-only: a refused file is never touched
        unwritable = _unwritable(self.path)
        if unwritable is not None:
            raise StateError(f"cannot write state {self.path}: {unwritable}")
        #: Serializes every use of the connection (the writer thread's and the caller's).
        self._lock = threading.RLock()
        self._writer: _Writer | None = None
        self._background = background
        #: True when the state held no URL as the current run began (see begin_run).
        self.empty_at_start = False
        #: URL rows found damaged by lookups so far (read as new, rewritten on save).
        self.damaged_rows = 0
        try:
            self._db = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT,
                isolation_level=None,
                check_same_thread=not background,
            )
        except sqlite3.Error as exc:
            raise StateError(f"cannot open state file {self.path}: {exc}") from exc
        try:
            self._setup()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if "locked" in str(exc):
                raise StateError(f"state file {self.path} is in use by another run") from exc
            raise StateError(f"{self.path} is not a sitemap-reader state file: {exc}") from exc
        except BaseException:
            self._db.close()
            raise
        self.run = 0

    def _check_foreign(self) -> None:
        """Refuse an existing file that is not a state file of this schema, unchanged.

        The mark is read from the header bytes with a plain ``open``; only an unmarked
        database is opened by SQLite, read-only, to list its tables (``immutable`` for a
        WAL file, whose read-only opening would leave ``-wal`` and ``-shm`` files beside
        it). What this misses (changes still in a WAL) is checked again, inside the first
        write transaction, before anything is written.
        """
        if os.path.isdir(self.path):
            raise StateError(f"{self.path} is a directory, not a sitemap-reader state file")
        try:
            header = _header(self.path)
        except OSError as exc:
            raise StateError(f"cannot read state file {self.path}: {exc.strerror}") from exc
        if not header:
            return  # an empty file: a new state
        if len(header) < 100 or not header.startswith(_MAGIC):
            raise StateError(f"{self.path} is not a sitemap-reader state file: not SQLite")
        version, app_id = (int.from_bytes(header[i : i + 4], "big") for i in (60, 68))
        reason = _mark_reason(app_id, version)
        if reason is None and app_id != APPLICATION_ID:
            reason = self._read_tables(wal=header[18] == 2)
        if reason is not None:
            raise StateError(f"{self.path} is not a sitemap-reader state file: {reason}")

    def _read_tables(self, *, wal: bool) -> str | None:
        """:func:`_tables_reason` of the unmarked file, through a read-only connection."""
        mode = "immutable=1" if wal else "mode=ro"
        uri = "file:" + urllib.parse.quote(os.path.abspath(self.path)) + "?" + mode
        try:
            db = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT)
        except sqlite3.Error as exc:
            raise StateError(f"cannot open state file {self.path}: {exc}") from exc
        try:
            return _tables_reason(db)
        except sqlite3.DatabaseError as exc:
            if "locked" in str(exc):
                raise StateError(f"state file {self.path} is in use by another run") from exc
            return str(exc)
        finally:
            db.close()

    def _setup(self) -> None:
        db = self._db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        db.execute("BEGIN IMMEDIATE")
        try:
            if _foreign_reason(db) is not None:  # it changed since the check: leave it
                raise StateError(f"{self.path} changed while it was opened; not touched")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            row = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('schema', ?), ('run', 0)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise StateError(
                    f"{self.path} has state schema {row[0]}; this version reads {SCHEMA_VERSION}"
                )
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

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
            self._writer = _Writer()
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
        damaged = [k for k, v in found.items() if v is not None and not _in_range(v)]
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
        old_urls = self.urls_blob(read.url) if old is not None else None
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
            self._gone_children(db, old, read)
            self._missing_urls(db, sitemap_id, old_urls, read.keys)
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

    def _gone_children(self, db: sqlite3.Connection, old: StoredSitemap, read: SitemapRead) -> None:
        """Children the index listed last time and not now: candidates for ``gone``."""
        listed = {u for u, _ in read.children}
        for url, _ in unpack_children(old.children):
            if url not in listed:
                db.execute(
                    "INSERT OR IGNORE INTO gone SELECT id FROM sitemaps WHERE url = ?", (url,)
                )

    def _missing_urls(
        self, db: sqlite3.Connection, sitemap_id: int, old_urls: bytes | None, keys: list[int]
    ) -> None:
        """URLs the previous read listed and this one does not: removal candidates.

        A damaged blob gives none: which URLs left cannot be known (the new read
        replaces it)."""
        texts = _urls_or_none(old_urls)
        if not texts:
            return
        now = set(keys)
        missing = [
            (key, sitemap_id, text)
            for key, text in zip(url_keys(texts), texts, strict=True)
            if key not in now
        ]
        db.executemany("INSERT OR IGNORE INTO pending VALUES (?, ?, ?)", missing)

    def urls_damage(self, url: str) -> str | None:
        """Why the stored URL text of ``url`` does not decode (None: it does, or none)."""
        blob = self.urls_blob(url)
        if blob is None or _urls_or_none(blob) is not None:
            return None
        return "its stored URL list does not decode"

    def urls_blob(self, url: str) -> bytes | None:
        """The stored URL text of a sitemap (compressed), or None."""
        query = "SELECT urls FROM sitemaps WHERE url = ?"
        row = self._guard(_one, self._db, query, (url,))
        return None if row is None else row[0]

    # -- the end of a run --------------------------------------------------------------

    def finish_run(self, listed: set[str]) -> Iterator[list[UrlRecord]]:
        """Resolve removal candidates; yield the removed URLs as records, in batches.

        ``listed`` holds every sitemap URL some robots.txt or index listed this run: a
        child an index dropped but that is listed elsewhere is not gone. Consume the
        iterator to the end, then :meth:`commit`.
        """
        db = self._write()
        self._guard(self._expand_gone, db, listed)
        after: tuple[int, int] = (-(1 << 63), -1)
        while True:
            rows = self._guard(
                lambda a: db.execute(_RESOLVE, (a[0], a[1], RESOLVE_CHUNK)).fetchall(), after
            )
            if not rows:
                break
            after = (rows[-1][0], rows[-1][1])
            removed = self._guard(self._resolve, db, rows)
            if removed:
                yield removed
        self._guard(db.execute, "DELETE FROM pending")
        self._guard(
            db.execute,
            "DELETE FROM sitemaps WHERE id IN (SELECT sitemap FROM gone)",
        )
        self._guard(db.execute, "DELETE FROM gone")

    def _expand_gone(self, db: sqlite3.Connection, listed: set[str]) -> None:
        """Every URL of a child no index lists any more becomes a candidate."""
        rows = db.execute(
            "SELECT s.id, s.url, s.urls FROM gone AS g JOIN sitemaps AS s ON s.id = g.sitemap"
        ).fetchall()
        for sitemap_id, url, blob in rows:
            if url in listed:
                db.execute("DELETE FROM gone WHERE sitemap = ?", (sitemap_id,))
                continue
            texts = _urls_or_none(blob) or []  # damaged: its URLs cannot be named
            db.executemany(
                "INSERT OR IGNORE INTO pending VALUES (?, ?, ?)",
                zip(url_keys(texts), repeat(sitemap_id), texts),
            )

    def _resolve(self, db: sqlite3.Connection, rows: list[Any]) -> list[UrlRecord]:
        removed: list[UrlRecord] = []
        keys: list[tuple[int]] = []
        for key, sitemap_id, text, owner, shared, lastmod, sitemap_url in rows:
            if owner != sitemap_id or shared:
                continue  # moved to another sitemap, listed elsewhere too, or already gone
            if not isinstance(text, str) or not isinstance(sitemap_url, str | None):
                continue  # a damaged candidate: it cannot be named
            if lastmod is not None and not _in_range(lastmod):
                lastmod = None
            keys.append((key,))
            removed.append(
                UrlRecord(text, from_seconds(lastmod), sitemap=sitemap_url, removed=True)
            )
        db.executemany("DELETE FROM urls WHERE key = ?", keys)
        return removed


_first = operator.itemgetter(0)


def _one(db: sqlite3.Connection, query: str, args: tuple[Any, ...]) -> Any:
    """The first row of a query (under the caller's lock: execute and fetch together)."""
    return db.execute(query, args).fetchone()


class _Writer:
    """The writer thread of a store: runs deferred writes in order, keeps the first error."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], object] | None] = queue.SimpleQueue()
        self._done = threading.Condition()
        self._queued = 0
        self._finished = 0
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="sitemap-state", daemon=True)
        self._thread.start()

    def put(self, call: Callable[[], object]) -> None:
        self._raise()
        with self._done:
            self._queued += 1
        self._jobs.put(call)

    def wait(self) -> None:
        with self._done:
            target = self._queued
            self._done.wait_for(lambda: self._finished >= target)
        self._raise()

    def stop(self) -> None:
        """Finish what is queued, then end the thread (its error, if any, is dropped:
        the caller is closing, and an uncommitted write is rolled back anyway)."""
        self._jobs.put(None)
        self._thread.join()

    def _raise(self) -> None:
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _run(self) -> None:
        while (call := self._jobs.get()) is not None:
            try:
                if self._error is None:  # after a failure, later writes are skipped
                    call()
            except BaseException as exc:
                self._error = exc
            with self._done:
                self._finished += 1
                self._done.notify_all()
