"""The values of the state file: URL keys, lastmod seconds, the compressed URL text and
children blobs, and the rows as the store reads and writes them.

SQLite stores whatever it is given, and a state file can be damaged (a disk error, an
edit by hand, another program): every stored value is checked when it is read back. A
blob that does not decode raises one of :data:`BLOB_ERRORS`; a ``sitemaps`` row says
what is wrong with it through :meth:`StoredSitemap.damage`; a lastmod no datetime can
hold fails :func:`in_range`. The store then reads the row as unknown (the sitemap, or
the URL, as new), and the next complete read rewrites it.

Size: about 30 bytes per URL in ``urls`` plus the compressed URL text (measured by
``benchmarks/incremental.py``); for 10 million URLs, well under a gigabyte.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime


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


def in_range(value: object) -> bool:
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


def urls_or_none(blob: bytes | None) -> list[str] | None:
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
        if not isinstance(url, str) or not (lastmod is None or in_range(lastmod)):
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
        if self.index_lastmod is not None and not in_range(self.index_lastmod):
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
    """One read of a sitemap, ready to be saved: complete, or broken off (``hash`` None).

    ``keys`` and ``lastmods`` are parallel: every in-scope URL it listed (duplicates
    included) and its lastmod in seconds or None.
    """

    url: str
    format: str
    hash: bytes | None
    records: int
    etag: str | None = None
    last_modified: str | None = None
    index_lastmod: int | None = None
    keys: list[int] = field(default_factory=list)
    lastmods: list[int | None] = field(default_factory=list)
    urls_blob: bytes | None = None
    children: list[tuple[str, int | None]] = field(default_factory=list)
