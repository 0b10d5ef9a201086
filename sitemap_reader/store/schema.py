"""The state file's tables, and the checks that a file is ours before anything is written.

Tables:

``meta``
    ``schema`` (the version this file was made with) and ``run`` (the last run number).
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
    Removal candidates (:mod:`~sitemap_reader.store.removals`): URLs a re-read sitemap no
    longer lists, and children an index no longer lists.

Theory of operation
-------------------
The file is marked as ours in its SQLite header: ``PRAGMA application_id`` holds
:data:`APPLICATION_ID` and ``PRAGMA user_version`` the schema version. An existing file is
checked through a read-only connection *before* anything is written (not even the switch
to WAL), so a file of another program, or of a newer version of this one, is refused and
left byte for byte as it was. An unmarked file is taken only when it is empty, or when it
has exactly this schema's tables and columns (a state written before the mark existed);
it is marked on first use.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse

from sitemap_reader.errors import StateError
from sitemap_reader.store.files import NotOurs, claim_database

SCHEMA_VERSION = 1
#: ``PRAGMA application_id`` of a state file: "SRst" in ASCII (sitemap-reader state).
APPLICATION_ID = 0x53527374
#: SQLite page cache of the state file, in KiB: the URL table's upper B-tree levels stay
#: in memory (10 million URLs make about 300 MB of leaves, and 2% of that in inner pages).
CACHE_KIB = 32 * 1024
#: Seconds a second process waits for the state file's write lock.
BUSY_TIMEOUT = 30.0
#: The first bytes of every SQLite 3 database file.
SQLITE_MAGIC = b"SQLite format 3\x00"

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


def open_state(path: str, *, background: bool) -> sqlite3.Connection:
    """The state file at ``path``, created when missing, checked as ours, its schema set up.

    ``background`` lets another thread use the connection (the store's writer thread;
    the store serializes every use). Every failure is a :class:`StateError` naming the
    file, and a refused file is left untouched: a link at the path or at one of SQLite's
    companions (``-wal``, ``-shm``), or another user's file there, is refused before
    SQLite opens anything (:func:`~sitemap_reader.store.files.claim_database`).
    """
    existed = os.path.exists(path)
    if os.path.isdir(path):
        check_existing(path)  # a directory: refused in its own words
    unwritable = _unwritable(path)
    if unwritable is not None:
        raise StateError(f"cannot write state {path}: {unwritable}")
    try:
        claim_database(path)  # no link, no other user's file: SQLite opens ours only
    except NotOurs as exc:
        raise StateError(f"cannot use state file {path}: {exc.strerror}") from None
    except OSError as exc:
        raise StateError(f"cannot open state file {path}: {exc.strerror or exc}") from exc
    if existed:
        check_existing(path)  # read-only: a refused file is never touched
    try:
        db = sqlite3.connect(
            path,
            timeout=BUSY_TIMEOUT,
            isolation_level=None,
            check_same_thread=not background,
        )
    except sqlite3.Error as exc:
        raise StateError(f"cannot open state file {path}: {exc}") from exc
    try:
        _set_up(db, path)
    except sqlite3.DatabaseError as exc:
        db.close()
        if "locked" in str(exc):
            raise StateError(f"state file {path} is in use by another run") from exc
        raise StateError(f"{path} is not a sitemap-reader state file: {exc}") from exc
    except BaseException:
        db.close()
        raise
    return db


def check_existing(path: str) -> None:
    """Refuse an existing file that is not a state file of this schema, unchanged.

    The mark is read from the header bytes with a plain ``open``; only an unmarked
    database is opened by SQLite, read-only, to list its tables (``immutable`` for a
    WAL file, whose read-only opening would leave ``-wal`` and ``-shm`` files beside
    it). What this misses (changes still in a WAL) is checked again, inside the first
    write transaction, before anything is written.
    """
    if os.path.isdir(path):
        raise StateError(f"{path} is a directory, not a sitemap-reader state file")
    try:
        header = _header(path)
    except OSError as exc:
        raise StateError(f"cannot read state file {path}: {exc.strerror}") from exc
    if not header:
        return  # an empty file: a new state
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        raise StateError(f"{path} is not a sitemap-reader state file: not SQLite")
    version, app_id = (int.from_bytes(header[i : i + 4], "big") for i in (60, 68))
    reason = _mark_reason(app_id, version)
    if reason is None and app_id != APPLICATION_ID:
        reason = _read_tables(path, wal=header[18] == 2)
    if reason is not None:
        raise StateError(f"{path} is not a sitemap-reader state file: {reason}")


def _read_tables(path: str, *, wal: bool) -> str | None:
    """:func:`_tables_reason` of the unmarked file, through a read-only connection."""
    mode = "immutable=1" if wal else "mode=ro"
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?" + mode
    try:
        db = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT)
    except sqlite3.Error as exc:
        raise StateError(f"cannot open state file {path}: {exc}") from exc
    try:
        return _tables_reason(db)
    except sqlite3.DatabaseError as exc:
        if "locked" in str(exc):
            raise StateError(f"state file {path} is in use by another run") from exc
        return str(exc)
    finally:
        db.close()


def _set_up(db: sqlite3.Connection, path: str) -> None:
    """Switch to WAL, then create the tables and mark the file, in one transaction that
    first checks again that the file is ours."""
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    db.execute("BEGIN IMMEDIATE")
    try:
        if _foreign_reason(db) is not None:  # it changed since the check: leave it
            raise StateError(f"{path} changed while it was opened; not touched")
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        row = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
        if row is None:
            db.execute("INSERT INTO meta VALUES ('schema', ?), ('run', 0)", (SCHEMA_VERSION,))
        elif row[0] != SCHEMA_VERSION:
            raise StateError(
                f"{path} has state schema {row[0]}; this version reads {SCHEMA_VERSION}"
            )
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


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
