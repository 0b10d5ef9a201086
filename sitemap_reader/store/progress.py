"""The loader's progress file (SQLite): what a :class:`~sitemap_reader.SitemapLoader`
took in, handed out and had acknowledged, so a new loader resumes where a killed one was.

Tables:

``urls``
    One row per page URL the loader took in from the reader: its record (JSON, and
    its rarer fields pickled, read back only through an allow-list of our record
    classes), its score, its state (:data:`QUEUED`: not acknowledged yet, whether handed
    out or not; :data:`DONE`: acknowledged, its record dropped; :data:`GAVE_UP`: failed
    too often) and how often it failed. ``id`` is the order of intake (a failed URL gets
    a new one, at the end): the loader hands out the lowest first.
``sitemaps``
    One row per sitemap seen: ``records`` taken in from it so far (how far the one
    being read got), ``done`` once it was read completely and every record it gave is
    in ``urls``, with its children (an index's listed sitemaps) so a new loader walks
    them without reading the index again.
``targets``
    What the file was made for: each target as given (``text``) and its ``key`` (the
    URL it is read from first: ``example.com``, ``https://example.com/`` and
    ``https://example.com/robots.txt`` are one target). A loader given other targets is
    refused unless it extends the file or restarts it (:meth:`ProgressStore.restart`). A
    file made before this table existed takes the targets of the first loader to open it.
``meta``
    The schema version and ``read``: 1 once the whole discovery ended.

Theory of operation
-------------------
One connection, one transaction after another, so the order of commits is the order
of the loader's own steps: a sitemap is marked done only after its records were
written, and an acknowledgement commits everything before it. A process killed at any
instant leaves the file at its last commit (WAL): records written but not committed
belong to a sitemap not marked done, which a new loader reads again; URLs already in
``urls`` are not taken in twice (``url`` is unique). Which URLs are handed out is kept
in memory only: what was in flight when the process died is still :data:`QUEUED` in the
file and is handed out again; an acknowledged URL never is.

The file is marked as ours like the state file (:mod:`sitemap_reader.store.schema`): ``PRAGMA
application_id`` holds :data:`APPLICATION_ID` and ``user_version`` the schema. An
existing file is checked from its header bytes before SQLite opens it for writing, so a
foreign file, a newer schema or a state file given by mistake is refused untouched.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import pickle
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

try:
    import fcntl
except ImportError:  # Windows: no flock; one loader a file is then the user's to keep
    fcntl = None  # type: ignore[assignment]

from sitemap_reader import records as _records
from sitemap_reader.errors import StateError
from sitemap_reader.options.limits import PROGRESS_BUSY_TIMEOUT
from sitemap_reader.records import UrlRecord
from sitemap_reader.store.files import claim_database, open_own
from sitemap_reader.store.schema import APPLICATION_ID as STATE_APPLICATION_ID
from sitemap_reader.store.schema import SQLITE_MAGIC

SCHEMA_VERSION: Final = 1
#: ``PRAGMA application_id`` of a progress file: "SRlp" (sitemap-reader loader progress).
APPLICATION_ID: Final = 0x53526C70
#: URL states in the file (:data:`OUT`, handed out, is the loader's, in memory only).
QUEUED, OUT, DONE, GAVE_UP = 0, 1, 2, 3

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS urls (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL UNIQUE,
    state INTEGER NOT NULL DEFAULT 0,
    tries INTEGER NOT NULL DEFAULT 0,
    score REAL NOT NULL DEFAULT 0,
    record BLOB
);
CREATE INDEX IF NOT EXISTS urls_queued ON urls (id) WHERE state = 0;
CREATE TABLE IF NOT EXISTS targets (key TEXT PRIMARY KEY, text TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sitemaps (
    url TEXT PRIMARY KEY,
    records INTEGER NOT NULL DEFAULT 0,
    done INTEGER NOT NULL DEFAULT 0,
    format TEXT,
    urls INTEGER NOT NULL DEFAULT 0,
    children TEXT
) WITHOUT ROWID;
"""

#: The classes a stored record may be made of (anything else: the file is refused).
_ALLOWED: Final = {
    ("sitemap_reader.records", name)
    for name in (
        "UrlRecord",
        "Alternate",
        "Image",
        "Video",
        "VideoPrice",
        "VideoId",
        "TvShow",
        "News",
        "DataObject",
    )
} | {("datetime", "datetime"), ("datetime", "timezone"), ("datetime", "timedelta")}

Children = list[tuple[str, datetime | None]]


@dataclass(frozen=True, slots=True)
class DoneSitemap:
    """A sitemap read completely: its format, the URLs its body held, its children."""

    format: str | None
    urls: int
    children: Children


@dataclass
class Queued:
    """What :meth:`ProgressStore.queued` found: the records read (id, record), the rows
    given up as damaged (id, URL, why), and the last id looked at."""

    rows: list[tuple[int, UrlRecord]]
    damaged: list[tuple[int, str, str]]
    last: int


class _RecordUnpickler(pickle.Unpickler):
    """Unpickles our records only: a crafted file cannot run code."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not a record class")
        if module == "sitemap_reader.records":
            return getattr(_records, name)
        return super().find_class(module, name)


#: The fields of a record stored as JSON, in this order: the layout of version 1, kept
#: whatever the record becomes, so a file is read by the versions before and after the one
#: that wrote it.
_FLAT: Final = (
    "url",
    "lastmod",
    "changefreq",
    "priority",
    "score",
    "sitemap",
    "revisit",
    "removed",
    "title",
    "mobile",
    "robots",
)
#: Every other field of the record, with its default (read off the record: its nested
#: values and the fields added since version 1): pickled, each only when not at its
#: default.
_PICKLED: Final = tuple(
    (item.name, item.default) for item in dataclasses.fields(UrlRecord) if item.name not in _FLAT
)


def dump_record(record: UrlRecord) -> bytes:
    """A record as stored: the fields of :data:`_FLAT` as JSON, then (rarely) the others
    that have a value pickled, after a NUL byte.

    >>> load_record(dump_record(UrlRecord("https://example.com/", score=0.5))).score
    0.5
    """
    flat = [getattr(record, name) for name in _FLAT]
    if flat[1] is not None:
        flat[1] = flat[1].isoformat()
    text = json.dumps(flat, separators=(",", ":"), ensure_ascii=False).encode()
    rest = {
        name: value for name, default in _PICKLED if (value := getattr(record, name)) != default
    }
    if not rest:
        return text
    return text + b"\0" + pickle.dumps(rest, pickle.HIGHEST_PROTOCOL)


def load_record(blob: bytes) -> UrlRecord:
    """A stored record back (a StateError when the blob is not one of ours)."""
    text, _, rest = bytes(blob).partition(b"\0")
    try:
        flat = json.loads(text)
        if not isinstance(flat, list) or len(flat) != len(_FLAT):
            raise ValueError("not a stored record")
        fields: dict[str, Any] = dict(zip(_FLAT, flat, strict=True))
        if fields["lastmod"] is not None:
            fields["lastmod"] = datetime.fromisoformat(fields["lastmod"])
        if rest:
            fields.update(_RecordUnpickler(io.BytesIO(rest)).load())
        return UrlRecord(**fields)
    except Exception as exc:
        raise StateError(f"a stored record cannot be read: {exc}") from exc


def _wal_header(path: str) -> bytes | None:
    """The first 100 bytes of page 1 as the write-ahead log ``PATH-wal`` has it last (what
    SQLite reads instead of the main file's page 1 until a checkpoint); None when the log
    is absent, empty or holds no page 1 of its current generation."""
    try:
        with open(path + "-wal", "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            head = stream.read(_WAL_HEADER)
            if len(head) < _WAL_HEADER:
                return None
            page_size = int.from_bytes(head[8:12], "big") or 65536
            salts = head[16:24]
            latest = None
            at = _WAL_HEADER  # frame headers only are read; a page only when it is page 1
            while at + _WAL_FRAME + page_size <= size:
                stream.seek(at)
                frame = stream.read(_WAL_FRAME)
                if frame[8:16] != salts:
                    break  # a frame of an older generation: the log ends here
                if int.from_bytes(frame[:4], "big") == 1:
                    latest = stream.read(100)
                at += _WAL_FRAME + page_size
            return latest
    except OSError:
        return None


def _header_reason(path: str) -> str | None:
    """Why an existing file is not a progress file we may write (None: it may be)."""
    if os.path.isdir(path):
        return "it is a directory"
    if not os.path.isfile(path):
        return "it is not a regular file (a device, a FIFO or a socket)"
    try:
        with open(path, "rb") as stream:
            header = stream.read(100)
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    logged = _wal_header(path)
    if logged is not None and len(logged) == 100 and logged.startswith(SQLITE_MAGIC):
        header = logged  # its data is still in the log: judge what SQLite will read
    if not header:
        return None  # an empty file: a new progress file
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        return "not SQLite"
    version, app_id = (int.from_bytes(header[i : i + 4], "big") for i in (60, 68))
    if app_id == STATE_APPLICATION_ID:
        return "it is an incremental state file (state=), not a loader's progress file"
    if app_id != APPLICATION_ID:
        if app_id == 0 and version == 0 and header[28:32] == b"\x00\x00\x00\x01":
            return None  # a database of one empty page: nothing to lose
        return f"it belongs to another program (application_id {app_id:#010x})"
    if version != SCHEMA_VERSION:
        newer = "newer" if version > SCHEMA_VERSION else "older"
        return f"progress schema {version} is {newer}; this version reads {SCHEMA_VERSION}"
    return None


#: A write-ahead log's header and each frame's header, in bytes (sqlite.org/fileformat).
_WAL_HEADER: Final = 32
_WAL_FRAME: Final = 24
#: The lock file beside a progress file (``crawl.db-lock``): one loader at a time.
LOCK_SUFFIX: Final = "-lock"


def _hold(path: str) -> int | None:
    """Take the progress file for this loader: an exclusive ``flock`` on ``PATH-lock``,
    held until :func:`_release` (the kernel lets it go when the process dies, kill -9
    included, so a crash never leaves the file taken). Two loaders on one file used to
    hand the same URLs out twice and then break on ``UNIQUE constraint failed``; the
    second is refused now. None where ``flock`` does not exist (Windows)."""
    if fcntl is None:
        return None
    try:  # never through a link, never another user's file (store/files.py)
        fd = open_own(path + LOCK_SUFFIX, os.O_RDWR | os.O_CREAT)
    except OSError as exc:
        raise StateError(f"cannot lock progress file {path}: {exc.strerror or exc}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise StateError(
            f"progress file {path} is in use by another loader (one loader a file; "
            "give this one another progress file, or wait for that one to close)"
        ) from None
    return fd


def _release(fd: int | None) -> None:
    """Let the progress file go (closing the descriptor drops the lock)."""
    if fd is not None:
        os.close(fd)


class _Guarded:
    """The file's connection: every SQLite error is a :class:`StateError` naming the file."""

    __slots__ = ("db", "path")

    def __init__(self, db: sqlite3.Connection, path: str) -> None:
        self.db = db
        self.path = path

    @property
    def in_transaction(self) -> bool:
        return self.db.in_transaction

    def execute(self, sql: str, parameters: Any = ()) -> sqlite3.Cursor:
        try:
            return self.db.execute(sql, parameters)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def executemany(self, sql: str, rows: Iterable[Any]) -> sqlite3.Cursor:
        try:
            return self.db.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def close(self) -> None:
        self.db.close()

    def _error(self, exc: sqlite3.Error) -> StateError:
        if "locked" in str(exc):
            return StateError(f"progress file {self.path} is in use by another loader")
        return StateError(f"progress file {self.path}: {exc}")


class ProgressStore:
    """The progress file of one loader (see the module docstring). Not thread-safe.

    >>> import os, tempfile
    >>> store = ProgressStore(os.path.join(tempfile.mkdtemp(), "crawl.db"))
    >>> store.add([UrlRecord("https://example.com/a")])
    1
    >>> store.close()
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        if os.path.exists(self.path):
            reason = _header_reason(self.path)
            if reason is not None:
                raise StateError(f"{self.path} is not a sitemap-reader progress file: {reason}")
        try:
            claim_database(self.path)  # no link, no other user's file: SQLite opens ours only
        except OSError as exc:
            raise StateError(f"cannot use progress file {self.path}: {exc.strerror}") from None
        self._lock = _hold(self.path)
        try:
            db = sqlite3.connect(self.path, timeout=PROGRESS_BUSY_TIMEOUT, isolation_level=None)
        except sqlite3.Error as exc:
            _release(self._lock)
            raise StateError(f"cannot open progress file {self.path}: {exc}") from exc
        self._db = _Guarded(db, self.path)
        try:
            self._setup()
        except BaseException:
            db.close()
            _release(self._lock)
            raise

    def _setup(self) -> None:
        db = self._db
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL: a killed process loses nothing committed
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            row = db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('schema', ?), ('read', 0)", (SCHEMA_VERSION,))
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
            self._next_id: int = db.execute("SELECT coalesce(max(id), 0) FROM urls").fetchone()[0]
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    # -- transactions ------------------------------------------------------------------

    def _write(self) -> _Guarded:
        if not self._db.in_transaction:
            self._db.execute("BEGIN IMMEDIATE")
        return self._db

    def commit(self) -> None:
        """Make everything so far durable (one atomic step)."""
        if self._db.in_transaction:
            self._db.execute("COMMIT")

    def close(self) -> None:
        """Commit and close (idempotent); the file is free for another loader after it."""
        try:
            self.commit()
        finally:
            self._db.close()
            lock, self._lock = self._lock, None
            _release(lock)

    # -- intake --------------------------------------------------------------------------

    def add(self, batch: Sequence[UrlRecord]) -> int:
        """Take in a batch: the records whose URL was not known yet; how many there were."""
        db = self._write()
        known = self._known([r.url for r in batch])
        rows: list[tuple[int, str, float, bytes]] = []
        counts: dict[str, int] = {}
        for record in batch:
            sitemap = record.sitemap or ""
            counts[sitemap] = counts.get(sitemap, 0) + 1
            if record.url in known:
                continue
            known.add(record.url)
            self._next_id += 1
            rows.append((self._next_id, record.url, record.score, dump_record(record)))
        db.executemany("INSERT INTO urls (id, url, score, record) VALUES (?, ?, ?, ?)", rows)
        db.executemany(
            "INSERT INTO sitemaps (url, records) VALUES (?1, ?2)"
            " ON CONFLICT (url) DO UPDATE SET records = records + ?2",
            counts.items(),
        )
        return len(rows)

    def known(self, urls: list[str]) -> set[str]:
        """Which of ``urls`` the file holds (in any state)."""
        return self._known(urls)

    def _known(self, urls: list[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(urls), 500):
            part = urls[start : start + 500]
            marks = ",".join("?" * len(part))
            rows = self._db.execute(f"SELECT url FROM urls WHERE url IN ({marks})", part)
            found.update(row[0] for row in rows)
        return found

    def sitemap_done(self, url: str, done: DoneSitemap) -> None:
        """The sitemap was read completely (its records are all written before this)."""
        text = json.dumps([(u, m.isoformat() if m else None) for u, m in done.children])
        self._write().execute(
            "INSERT INTO sitemaps (url, done, format, urls, children) VALUES (?1, 1, ?2, ?3, ?4)"
            " ON CONFLICT (url) DO UPDATE SET done = 1, format = ?2, urls = ?3, children = ?4",
            (url, done.format, done.urls, text),
        )

    def read_done(self) -> None:
        """The whole discovery ended: a new loader reads nothing."""
        self._write().execute("UPDATE meta SET value = 1 WHERE name = 'read'")

    def restart(self) -> None:
        """Forget everything: no URL, no sitemap, no target, discovery not begun."""
        db = self._write()
        for table in ("urls", "sitemaps", "targets"):
            db.execute(f"DELETE FROM {table}")
        db.execute("UPDATE meta SET value = 0 WHERE name = 'read'")
        self._next_id = 0

    # -- what it was made for ------------------------------------------------------------

    def targets(self) -> dict[str, str]:
        """The targets the file was made for: key -> the text given, in key order."""
        rows = self._db.execute("SELECT key, text FROM targets ORDER BY key")
        return dict(rows)

    def claim(self, targets: dict[str, str], *, extend: bool, restart: bool) -> list[str]:
        """Make the file a loader's (``targets``: key -> text): a new file (or one made
        before files knew their targets) records them; a file made for other targets is
        refused (a StateError saying the ways out) unless ``extend`` adds them (the
        discovery opens again) or ``restart`` forgets everything first. Returns the
        targets the loader reads: the file's (and the new ones)."""
        if restart:
            self.restart()
        stored = self.targets()
        if stored and set(stored) != set(targets) and not extend:
            raise StateError(
                f"progress file {self.path} was made for {', '.join(stored.values())}, "
                f"not {', '.join(targets.values())}: give another file, extend=True to "
                "add these targets to it, or restart=True to start it afresh"
            )
        self.add_targets(targets, reopen=bool(stored))
        self.commit()
        return [*stored.values(), *(text for key, text in targets.items() if key not in stored)]

    def finished_note(self) -> str | None:
        """When the file is finished (discovery ended, nothing waiting), one line saying
        so, with its counts and the way to start again; None otherwise."""
        counts = self.counts()
        if not self.all_read() or counts.get(QUEUED):
            return None
        made_for = ", ".join(self.targets().values())
        return (
            f"progress file {self.path} is finished (made for {made_for}): "
            f"{counts.get(DONE, 0)} URLs handled, {counts.get(GAVE_UP, 0)} given up, nothing "
            "left to hand out; to crawl again, restart=True or delete the file"
        )

    def add_targets(self, targets: dict[str, str], *, reopen: bool) -> None:
        """The file is for these targets too (key -> text); with ``reopen``, new ones open
        the discovery again (a file that had no targets yet only records them)."""
        new = {k: t for k, t in targets.items() if k not in self.targets()}
        if not new:
            return
        db = self._write()
        db.executemany("INSERT INTO targets (key, text) VALUES (?, ?)", new.items())
        if reopen:
            db.execute("UPDATE meta SET value = 0 WHERE name = 'read'")

    # -- what was read ---------------------------------------------------------------------

    def all_read(self) -> bool:
        """True once a loader on this file saw the discovery end."""
        row = self._db.execute("SELECT value FROM meta WHERE name = 'read'").fetchone()
        return bool(row and row[0])

    def done_sitemaps(self) -> dict[str, DoneSitemap]:
        """Every sitemap read completely, with the children it listed."""
        done: dict[str, DoneSitemap] = {}
        rows = self._db.execute("SELECT url, format, urls, children FROM sitemaps WHERE done = 1")
        for url, kind, urls, text in rows:
            try:
                pairs = json.loads(text or "[]")
                children = [(str(u), datetime.fromisoformat(m) if m else None) for u, m in pairs]
            except (ValueError, TypeError) as exc:
                raise StateError(f"progress file {self.path}: bad children of {url}") from exc
            done[url] = DoneSitemap(kind, int(urls), children)
        return done

    def sitemap_records(self) -> dict[str, tuple[int, bool]]:
        """Records taken in from each sitemap, and whether it was read completely."""
        rows = self._db.execute("SELECT url, records, done FROM sitemaps")
        return {url: (records, bool(done)) for url, records, done in rows}

    # -- handing out -----------------------------------------------------------------------

    def queued(self, after: int, limit: int) -> Queued:
        """Up to ``limit`` queued records with an id above ``after``, in intake order.

        A row whose record cannot be read (a damaged page) is given up in the file and
        named in :attr:`Queued.damaged`, so one bad row costs its URL, never the loader."""
        found = Queued([], [], after)
        rows = self._db.execute(
            "SELECT id, url, record FROM urls WHERE state = 0 AND id > ? ORDER BY id LIMIT ?",
            (after, limit),
        ).fetchall()
        for row_id, url, blob in rows:
            try:
                found.rows.append((row_id, load_record(blob)))
            except StateError as exc:
                found.damaged.append((row_id, url if isinstance(url, str) else "?", str(exc)))
            found.last = row_id
        if found.damaged:
            self._write().executemany(
                "UPDATE urls SET state = ?, record = NULL WHERE id = ?",
                [(GAVE_UP, row_id) for row_id, _, _ in found.damaged],
            )
        return found

    def ack(self, row_id: int) -> None:
        """The URL was handled: done for good (durable with the next commit)."""
        self._write().execute(
            "UPDATE urls SET state = ?, record = NULL WHERE id = ?", (DONE, row_id)
        )

    def fail(self, row_id: int, max_tries: int) -> tuple[int, int]:
        """Handling the URL failed: queued again at the end (its new id), or given up
        after ``max_tries``; returns (new state, new id)."""
        db = self._write()
        (tries,) = db.execute("SELECT tries FROM urls WHERE id = ?", (row_id,)).fetchone()
        if tries + 1 >= max_tries:
            db.execute(
                "UPDATE urls SET state = ?, tries = ?, record = NULL WHERE id = ?",
                (GAVE_UP, tries + 1, row_id),
            )
            return GAVE_UP, row_id
        self._next_id += 1
        db.execute(
            "UPDATE urls SET id = ?, tries = ? WHERE id = ?", (self._next_id, tries + 1, row_id)
        )
        return QUEUED, self._next_id

    def counts(self) -> dict[int, int]:
        """URLs per state."""
        return dict(self._db.execute("SELECT state, count(*) FROM urls GROUP BY state").fetchall())

    def urls_in(self, states: Iterable[int]) -> list[str]:
        """The URLs in these states (tests and reports)."""
        wanted = tuple(states)
        marks = ",".join("?" * len(wanted))
        rows = self._db.execute(f"SELECT url FROM urls WHERE state IN ({marks})", wanted)
        return [row[0] for row in rows]
