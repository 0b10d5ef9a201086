"""Corpus test over ``../shared/realdata``: real sitemaps of real sites (issue 12).

Every file listed in its ``MANIFEST.tsv`` must parse with no foreign exception, give the
format and the URL count the manifest records (and its image, hreflang, news and video
counts), and no emitted URL may differ from its raw location by more than normalization:
the raw locations are read here independently (regular expressions, no expat), and each
emitted URL must be exactly ``normalize_url`` of its raw location, and equal to it after
undoing percent-encoding, case of scheme and host, and default ports. Files are read in
place and never copied; everything skips when ``../shared/realdata`` is absent.
"""

from __future__ import annotations

import csv
import html
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.parser import ParseResult, SitemapParser, parse
from sitemap_reader.parse.robots import sitemaps_from_robots
from sitemap_reader.records import SitemapRef, UrlRecord

REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata"
MANIFEST = REALDATA / "MANIFEST.tsv"
SMALL = 16 * 1024  # files up to this size are also fed one byte at a time


def manifest() -> list[dict[str, str]]:
    """The manifest's rows, or none when the corpus is absent."""
    if not MANIFEST.is_file():
        return []
    with MANIFEST.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


ROWS = manifest()
PARAMS = [pytest.param(row, id=row["local_name"]) for row in ROWS] or [
    pytest.param(None, marks=pytest.mark.skip(reason="../shared/realdata is absent"))
]


def url_of(row: dict[str, str]) -> str:
    """A plausible URL the file was fetched from."""
    return f"https://realdata.example/{row['local_name']}"


def body_of(row: dict[str, str]) -> bytes:
    """The file's bytes, read in place."""
    return (REALDATA / "files" / row["local_name"]).read_bytes()


def feed(body: bytes, url: str, size: int) -> tuple[Any, ...]:
    """Everything a SitemapParser gives for ``body`` fed in ``size``-byte pieces."""
    parser = SitemapParser(url)
    items: list[UrlRecord | SitemapRef] = []
    for start in range(0, len(body), size):
        items += parser.feed(body[start : start + size])
    items += parser.close()
    unscored = [(i.url, i.lastmod, i.alternates, i.images, i.videos, i.news, i.title)
                if isinstance(i, UrlRecord) else i for i in items]  # fmt: skip
    problems = [(p.code, p.count, p.fatal) for p in parser.problems]
    return parser.format, unscored, problems, parser.complete, parser.lastmod


def notes(row: dict[str, str]) -> dict[str, int]:
    """The manifest's feature counts: ``images=24; alternates=96`` -> dict."""
    return {
        key.strip(): int(value)
        for key, value in re.findall(r"(\w+)=(\d+)", row["notes"])
    }  # fmt: skip


@pytest.mark.parametrize("row", PARAMS)
def test_realdata_file_parses_to_the_manifest_counts(row: dict[str, str]) -> None:
    """Each real file: no foreign exception, its format, URL and extension counts as the
    manifest says (a dropped extension counted), the same however it is chunked."""
    body, url = body_of(row), url_of(row)
    if row["format"] == "robots":
        assert len(sitemaps_from_robots(body, url)) == int(row["url_count"])
        return
    result = parse(body, url)
    assert result.format == row["format"]
    assert len(result.urls) + len(result.sitemaps) == int(row["url_count"])
    if "not-well-formed" not in row["notes"]:
        assert result.complete, result.problems
    else:
        assert result.complete or any(p.fatal for p in result.problems)
    sizes = [65536, 1000] + ([1] if len(body) <= SMALL else [])
    reference = feed(body, url, max(len(body), 1))
    for size in sizes:
        assert feed(body, url, size) == reference, f"{size}-byte pieces differ"
    counts = notes(row)
    found = {
        "images": sum(len(r.images) for r in result.urls),
        "alternates": sum(len(r.alternates) for r in result.urls),
        "news": sum(r.news is not None for r in result.urls),
        "videos": sum(len(r.videos) for r in result.urls),
    }
    # An extension the file has but we drop (a relative image:loc: extension URLs must be
    # absolute) must be a counted drop: never more than the file has, never fewer unseen.
    problems = {p.code: p.count for p in result.problems}
    drops = sum(problems.get(code, 0) for code in EXTENSION_DROPS)
    for key, value in counts.items():
        assert found[key] <= value <= found[key] + drops, key


EXTENSION_DROPS = (
    "bad-extension-url",
    "extension-dropped",
    "extension-cut",
    "limit-extensions",
    "link-not-alternate",
    "link-incomplete",
)


# --- the raw locations, read without expat -------------------------------------------------

_LOC = re.compile(r"<loc>\s*(.*?)\s*</loc>", re.S)
_CDATA = re.compile(r"\s*<!\[CDATA\[(.*?)\]\]>\s*", re.S)
_ITEM = re.compile(r"<item\b.*?</item>", re.S)
_ENTRY = re.compile(r"<entry\b.*?</entry>", re.S)
_LINK_TEXT = re.compile(r"<link>\s*(.*?)\s*</link>", re.S)
_GUID = re.compile(r"<guid\b[^>]*>\s*(.*?)\s*</guid>", re.S)
_LINK_TAG = re.compile(r"<link\b([^>]*)/?>", re.S)
_ATTR = re.compile(r"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_DIRECTIVE = re.compile(r"^\s*site-?maps?\s*:\s*(\S+)", re.I | re.M)
_BARE = re.compile(r"^[ \t]*(https?://[^\s#]+)[ \t]*(?:#.*)?$", re.I | re.M)


def text_of(raw: str) -> str:
    """Element text as XML gives it: CDATA unwrapped, references resolved."""
    match = _CDATA.fullmatch(raw)
    return match.group(1) if match else html.unescape(raw)


def atom_link(entry: str) -> str | None:
    """An Atom entry's rel=alternate (or rel-less) link."""
    for match in _LINK_TAG.finditer(entry):
        attrs = {k: html.unescape(a or b) for k, a, b in _ATTR.findall(match.group(1))}
        if attrs.get("rel", "alternate") == "alternate" and "href" in attrs:
            return attrs["href"]
    return None


def raw_locations(row: dict[str, str], text: str) -> list[str]:
    """The locations as written in the file, in document order."""
    fmt = row["format"]
    if fmt in ("urlset", "sitemapindex"):
        return [text_of(loc) for loc in _LOC.findall(text)]
    if fmt == "rss":
        found = []
        for item in _ITEM.findall(text):
            link = _LINK_TEXT.search(item) or _GUID.search(item)
            if link is not None:
                found.append(text_of(link.group(1)))
        return found
    if fmt == "atom":
        return [link for link in map(atom_link, _ENTRY.findall(text)) if link is not None]
    if fmt == "text":
        return [line.strip() for line in text.splitlines() if line.strip()]
    positions = sorted(
        [(m.start(), m.group(1)) for m in _DIRECTIVE.finditer(text)]
        + [(m.start(), m.group(1)) for m in _BARE.finditer(text)]
    )
    return [value for _, value in positions]


def loose(url: str) -> tuple[str, ...]:
    """A URL with what normalization may change undone: percent-encoding, scheme and host
    case, a default port, the fragment, an empty path."""
    parts = urlsplit(url.strip())
    port = parts.port if parts.port not in (80, 443) else None
    host = (parts.hostname or "") + (f":{port}" if port else "")
    return parts.scheme.lower(), host.lower(), unquote(parts.path or "/"), unquote(parts.query)


def emitted(row: dict[str, str], result: ParseResult | None, body: bytes) -> list[str]:
    """The URLs sitemap-reader gives for the file, in order."""
    if result is None:
        return sitemaps_from_robots(body, url_of(row))
    return [r.url for r in result.urls] + [s.url for s in result.sitemaps]


@pytest.mark.parametrize("row", PARAMS)
def test_realdata_urls_differ_from_raw_locations_only_by_normalization(
    row: dict[str, str],
) -> None:
    """Each emitted URL is its raw location normalized, nothing more: none lost, none
    reordered, none corrupted (the raw ones read without expat)."""
    body, url = body_of(row), url_of(row)
    result = None if row["format"] == "robots" else parse(body, url)
    raws = raw_locations(row, body.decode("utf-8", "replace"))
    urls = emitted(row, result, body)
    if result is not None and not result.complete:  # a broken file: what precedes the
        raws = raws[: len(urls)]  # break is all there is, and it must be exact
    expected = [normalize_url(raw, url) for raw in raws]
    assert urls == [u for u in expected if u is not None]
    assert len(urls) == len(raws), "a location was dropped"
    for raw, out in zip(raws, urls, strict=True):
        assert loose(urljoin(url, raw.strip())) == loose(out), (raw, out)
