"""Fidelity (issue 12): every field the protocol and its extensions define, read the way
the peers' test suites expect, each case re-fed whole, in 7-byte pieces and byte by byte.

The bodies are written here, shaped like the peers' test data (ultimate-sitemap-parser,
crawler-commons, Scrapy); where ``../shared/peer-data`` is present, a few tests also read
the peers' own inputs in place (skipped when it is absent).
"""

from __future__ import annotations

import dataclasses
import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sitemap_reader.cli.output import CSV_COLUMNS, CsvWriter
from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.parser import ParseResult, SitemapParser, parse
from sitemap_reader.parse.text import schemeless_host
from sitemap_reader.records import (
    DataObject,
    SitemapRef,
    TvShow,
    UrlRecord,
    VideoId,
    VideoPrice,
)

SM = "https://example.com/sitemap.xml"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XMLNS = (
    f'xmlns="{NS}" xmlns:xhtml="http://www.w3.org/1999/xhtml"'
    ' xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"'
    ' xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"'
    ' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"'
    ' xmlns:mobile="http://www.google.com/schemas/sitemap-mobile/1.0"'
)
NOW = datetime(2026, 1, 1, tzinfo=UTC)
PEERS = Path(__file__).resolve().parents[3] / "shared" / "peer-data"
needs_peers = pytest.mark.skipif(not PEERS.is_dir(), reason="../shared/peer-data is absent")


def urlset(*entries: str) -> bytes:
    """A urlset declaring every extension namespace, around raw entry strings."""
    body = "".join(entries)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {XMLNS}>{body}</urlset>'.encode()


def feed(body: bytes, size: int, url: str | None, **options: Any) -> ParseResult:
    """Feed ``body`` in ``size``-byte pieces; everything the parser said, as a result."""
    parser = SitemapParser(url, now=NOW, **options)
    items: list[UrlRecord | SitemapRef] = []
    for start in range(0, len(body), size):
        items += parser.feed(body[start : start + size])
    items += parser.close()
    result = ParseResult(parser.format, problems=parser.problems, complete=parser.complete)
    result.lastmod = parser.lastmod
    result.urls = [i for i in items if isinstance(i, UrlRecord)]
    result.sitemaps = [i for i in items if isinstance(i, SitemapRef)]
    return result


def read(body: bytes, url: str | None = SM, **options: Any) -> ParseResult:
    """Parse whole, in 7-byte pieces and byte by byte: every field of every record, the
    problems and the feed date must be the same each way."""
    whole = feed(body, max(len(body), 1), url, **options)
    for size in (7, 1):
        other = feed(body, size, url, **options)
        assert other == whole, f"{size}-byte pieces differ"
    return whole


def codes(result: ParseResult) -> dict[str, int]:
    """Problem code -> count."""
    return {p.code: p.count for p in result.problems}


def peer_case(peer: str, name: str, **values: str) -> bytes:
    """A peer's inline test body from ../shared/peer-data, placeholders filled in."""
    text = (PEERS / peer / "cases" / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text.encode()


# --- 1. hreflang links need rel="alternate" ---------------------------------------------


def test_hreflang_link_without_rel_alternate_is_ignored_and_counted() -> None:
    """Point 1: links lacking rel="alternate", hreflang or href are ignored and counted."""
    body = urlset(
        "<url><loc>https://example.com/en/page</loc>"
        '<xhtml:link rel="alternate" href="https://example.com/fr/page"/></url>',
        "<url><loc>https://example.com/en/page2</loc>"
        '<xhtml:link hreflang="fr-FR" href="https://example.com/fr/page2"/></url>',
        "<url><loc>https://example.com/fr/page</loc>"
        '<xhtml:link rel="alternate" hreflang="en-GB"/></url>',
        "<url><loc>https://example.com/fr/page2</loc>"
        '<xhtml:link rel="nofollow" hreflang="en-GB" href="https://example.com/en/page2"/>'
        '<xhtml:link rel=" Alternate " hreflang="en-GB" href="https://example.com/en/page2"/>'
        "</url>",
    )
    result = read(body)
    assert [len(r.alternates) for r in result.urls] == [0, 0, 0, 1]
    assert result.urls[3].alternates[0].url == "https://example.com/en/page2"
    assert codes(result) == {"link-not-alternate": 2, "link-incomplete": 2}


@needs_peers
def test_hreflang_peer_case_missing_attributes() -> None:
    """Point 1 on usp's test_hreflang_missing_attrs body: no alternate survives."""
    body = peer_case(
        "usp", "test_hreflang_missing_attrs.xml", B="https://example.org",
        TEST_DATE_STR_ISO8601="2009-12-17T12:04:56+02:00",
    )  # fmt: skip
    result = read(body, "https://example.org/sitemap.xml")
    assert len(result.urls) == 4 and all(r.alternates == () for r in result.urls)
    assert codes(result) == {"link-not-alternate": 2, "link-incomplete": 2}


@needs_peers
def test_hreflang_peer_case_scrapy_link_without_href() -> None:
    """Point 1 on Scrapy's test_alternate body: three alternates, the href-less one counted."""
    result = read(peer_case("scrapy", "test_alternate.xml"))
    (record,) = result.urls
    assert [a.hreflang for a in record.alternates] == ["de", "de-ch", "en"]
    assert codes(result) == {"link-incomplete": 1}


# --- 2. white space in human-text fields -------------------------------------------------


def test_text_fields_collapse_white_space() -> None:
    """Point 2: multi-line titles, descriptions, captions, names collapse to one line."""
    body = urlset(
        "<url><loc>https://example.com/v</loc><video:video>"
        "<video:thumbnail_loc>\n  https://example.com/t.jpg\n</video:thumbnail_loc>"
        "<video:title>\n   Grilling\n\tsteaks  </video:title>"
        "<video:description>Alkis shows you how to get perfectly done steaks every\n"
        "        time</video:description>"
        "<video:uploader info='https://example.com/u'>Grilly\r\n  McGrillerson\n</video:uploader>"
        "<video:category> Cooking \n shows</video:category>"
        "<video:tag>  summer\n grill </video:tag>"
        "</video:video>"
        "<image:image><image:loc>https://example.com/i.jpg</image:loc>"
        "<image:caption>A\n  caption</image:caption><image:title>An\n\n  image</image:title>"
        "<image:geo_location>Limerick,\n   Ireland</image:geo_location></image:image>"
        "<news:news><news:publication><news:name>The\n  Example Times</news:name>"
        "<news:language>en</news:language></news:publication>"
        "<news:title>Companies A, B\n     in Merger Talks</news:title>"
        "<news:publication_date>2008-12-23</news:publication_date></news:news></url>"
    )
    (record,) = read(body).urls
    (video,) = record.videos
    assert video.title == "Grilling steaks"
    assert video.description == "Alkis shows you how to get perfectly done steaks every time"
    assert (video.uploader, video.category, video.tags) == (
        "Grilly McGrillerson", "Cooking shows", ("summer grill",),
    )  # fmt: skip
    assert video.thumbnail_loc == "https://example.com/t.jpg"  # URLs: their own rules
    (image,) = record.images
    assert (image.caption, image.title, image.geo_location) == (
        "A caption", "An image", "Limerick, Ireland",
    )  # fmt: skip
    assert record.news is not None
    assert (record.news.title, record.news.publication_name) == (
        "Companies A, B in Merger Talks", "The Example Times",
    )  # fmt: skip


def test_text_fields_keep_non_xml_spaces() -> None:
    """Point 2: only XML white space collapses; a no-break space is content."""
    body = urlset(
        "<url><loc>https://example.com/v</loc><video:video><video:title>10\u00a0km \n run"
        "</video:title></video:video></url>"
    )
    (record,) = read(body).urls
    assert record.videos[0].title == "10\u00a0km run"


@needs_peers
def test_text_fields_peer_video_description() -> None:
    """Point 2 on crawler-commons' sitemap-videos.xml: the description on one line."""
    data = PEERS / "crawler_commons" / "sitemaps" / "extension" / "sitemap-videos.xml"
    result = read(data.read_bytes(), "http://www.example.com/sitemap-video.xml")
    for record in result.urls:
        assert record.videos[0].description == (
            "Alkis shows you how to get perfectly done steaks every time"
        )
    assert result.urls[0].videos[0].uploader == "GrillyMcGrillerson"


# --- 4. half-read extension objects ---------------------------------------------------------

CUT_BODY = urlset(
    "<url><loc>https://example.com/a</loc>"
    "<news:news><news:publication><news:name>X</news:name><news:language>en</news:language>"
    "</news:publication><news:title>T</news:title>"
    "<news:publication_date>2020-01-01</news:publication_date></news:news>"
    "<image:image><image:loc>https://example.com/i.jpg</image:loc>"
    "<image:title>Title</image:title></image:image>"
    "<video:video><video:title>V</video:title>"
    "<video:thumbnail_loc>https://example.com/t.jpg</video:thumbnail_loc>"
    "<video:price currency='EUR'>1.99</video:price><video:duration>5</video:duration>"
    "<video:tvshow><video:show_title>S</video:show_title>"
    "<video:season_number>2</video:season_number></video:tvshow></video:video>"
    '<xhtml:link rel="alternate" hreflang="de" href="https://example.com/de"/>'
    "<mobile:mobile/></url>"
)


def test_cut_extension_objects_are_never_emitted() -> None:
    """Point 4: cut anywhere, a kept URL carries only whole extension objects; a cut one
    is dropped with an extension-cut problem."""
    full = read(CUT_BODY).urls[0]
    loc_end = CUT_BODY.index(b"</loc>") + len(b"</loc>")
    for cut in range(loc_end, len(CUT_BODY) - len(b"</url></urlset>")):
        result = read(CUT_BODY[:cut])
        (record,) = result.urls
        assert record.url == full.url and not result.complete
        assert record.news in (None, full.news)
        assert set(record.images) <= set(full.images)
        assert set(record.videos) <= set(full.videos)
        assert set(record.alternates) <= set(full.alternates)
        inside = any(
            CUT_BODY.rfind(open_, 0, cut) > CUT_BODY.rfind(close, 0, cut)
            for open_, close in (
                (b"<news:news>", b"</news:news>"),
                (b"<image:image>", b"</image:image>"),
                (b"<video:video>", b"</video:video>"),
            )
        )
        assert ("extension-cut" in codes(result)) == inside, cut


def test_cut_before_loc_completes_drops_the_entry() -> None:
    """Point 4: a URL whose location was not complete is not kept at all."""
    result = read(CUT_BODY[: CUT_BODY.index(b"</loc>") - 3])
    assert result.urls == [] and not result.complete


# --- 5. scheme-less locations --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("www.example.com/page", True),
        ("example.com/page", True),
        ("example.co.uk", True),
        ("shop.example.de:8080/a?b=1", True),
        ("bücher.de/x", True),
        ("page.html", False),
        ("dir/file.xml", False),
        ("index.php?id=3", False),
        ("login.do?x=1", False),
        ("README.md", False),
        ("Mr.Smith", False),
        ("/a/b", False),
        ("../a", False),
        ("192.0.2.1/x", False),
        ("mailto:someone@example.com", False),
    ],
)
def test_schemeless_host_rule(text: str, host: bool) -> None:
    """Point 5: the rule tells a leading host name from a relative reference."""
    assert schemeless_host(text) is host


def test_schemeless_location_in_xml() -> None:
    """Point 5: www.example.com/page in a <loc> is that host's page, with the sitemap's
    scheme, counted; a relative path still resolves against the sitemap."""
    body = urlset(
        "<url><loc>www.example.com/page</loc></url>",
        "<url><loc>page.html</loc></url>",
        "<url><loc> example.org:8080/x </loc></url>",
    )
    result = read(body, "http://example.com/dir/sitemap.xml")
    assert [r.url for r in result.urls] == [
        "http://www.example.com/page",
        "http://example.com/dir/page.html",
        "http://example.org:8080/x",
    ]
    assert codes(result) == {"schemeless-url": 2, "relative-url": 1}


def test_schemeless_location_in_text() -> None:
    """Point 5: the same rule in a text sitemap: the host line kept and counted, the
    relative line a junk line."""
    body = b"www.example.com/page\npage.html\nhttps://example.com/a\n"
    result = read(body, "http://example.com/dir/sitemap.txt")
    assert result.format == "text"
    assert [r.url for r in result.urls] == ["http://www.example.com/page", "https://example.com/a"]
    assert codes(result) == {"schemeless-url": 1, "junk-line": 1}


def test_schemeless_location_without_base_and_in_index() -> None:
    """Point 5: with no sitemap URL the scheme is https; child sitemaps follow the rule."""
    assert [r.url for r in read(b"example.com/a\n", None).urls] == ["https://example.com/a"]
    index = (
        f'<sitemapindex xmlns="{NS}"><sitemap><loc>www.example.com/s.xml</loc></sitemap>'
        "</sitemapindex>"
    ).encode()
    result = read(index)
    assert [s.url for s in result.sitemaps] == ["https://www.example.com/s.xml"]
    assert codes(result) == {"schemeless-url": 1}


def test_schemeless_location_strict_is_dropped() -> None:
    """Point 5: strict mode applies the protocol: no scheme, no URL (counted)."""
    text = read(b"www.example.com/page\nhttps://example.com/a\n", SM, strict=True)
    xml = read(urlset("<url><loc>www.example.com/page</loc></url>"), SM, strict=True)
    assert [r.url for r in text.urls] == ["https://example.com/a"]
    assert xml.urls == []
    assert codes(text) == codes(xml) == {"bad-url": 1}


# --- 6. every drop counted ------------------------------------------------------------------


def test_extension_url_drops_are_counted() -> None:
    """Point 6: a relative image:loc, bad video and alternate URLs are dropped and counted."""
    body = urlset(
        "<url><loc>https://example.com/p</loc>"
        "<image:image><image:loc>/wp-content/a.jpg</image:loc></image:image>"
        "<image:image><image:caption>no loc</image:caption></image:image>"
        "<image:image><image:loc>https://example.com/ok.jpg</image:loc></image:image>"
        "<video:video><video:title>T</video:title><video:content_loc>None</video:content_loc>"
        "<video:player_loc>https://example.com/p</video:player_loc></video:video>"
        "<video:video><video:content_loc>javascript:void(0)</video:content_loc></video:video>"
        '<xhtml:link rel="alternate" hreflang="de" href="/de/p"/></url>'
    )
    result = read(body)
    (record,) = result.urls
    assert [i.loc for i in record.images] == ["https://example.com/ok.jpg"]
    (video,) = record.videos
    assert video.content_loc is None and video.player_loc == "https://example.com/p"
    assert record.alternates == ()
    assert codes(result) == {"bad-extension-url": 4, "extension-dropped": 2}


def test_extension_url_without_scheme_follows_the_location_rule() -> None:
    """Points 5 and 6: an extension URL starting with a host name is read like a loc."""
    body = urlset(
        "<url><loc>https://example.com/p</loc>"
        "<image:image><image:loc>cdn.example.com/a.jpg</image:loc></image:image></url>"
    )
    result = read(body)
    assert [i.loc for i in result.urls[0].images] == ["https://cdn.example.com/a.jpg"]
    assert codes(result) == {"schemeless-url": 1}


def test_extension_cap_and_ticker_drops_are_counted() -> None:
    """Point 6: objects past the per-URL cap and news tickers past 5 are counted."""
    images = "".join(
        f"<image:image><image:loc>https://example.com/{i}.jpg</image:loc></image:image>"
        for i in range(4)
    )
    links = "".join(
        f'<xhtml:link rel="alternate" hreflang="l{i}" href="https://example.com/{i}"/>'
        for i in range(3)
    )
    body = urlset(
        f"<url><loc>https://example.com/p</loc>{images}{links}<news:news>"
        "<news:title>T</news:title><news:stock_tickers>A, B, C, D, E, F, G</news:stock_tickers>"
        "</news:news></url>"
    )
    result = read(body, limits=Limits(max_extensions_per_url=2))
    (record,) = result.urls
    assert len(record.images) == 2 and len(record.alternates) == 2
    assert record.news is not None and record.news.stock_tickers == ("A", "B", "C", "D", "E")
    assert codes(result) == {"limit-extensions": 4}


# --- 7. the missing fields ------------------------------------------------------------------

RSS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Test RSS 2.0 feed</title>
<link>https://example.com/</link>
<pubDate>Tue, 10 Jun 2025 08:00:00 +0000</pubDate>
<lastBuildDate>Wed, 11 Jun 2025 09:30:00 +0200</lastBuildDate>
<image><url>https://example.com/logo.png</url><title>Logo</title></image>
<item><title>Test RSS 2.0
    story #1</title><link>https://example.com/rss_story_1.html</link>
<pubDate>Mon, 09 Jun 2025 12:00:00 +0000</pubDate></item>
<item><title><![CDATA[Story & #2]]></title><guid>https://example.com/rss_story_2.html</guid></item>
<item><link>https://example.com/untitled.html</link></item>
</channel></rss>"""

ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Test Atom 1.0 feed</title>
<link href="https://example.com/feed.atom" rel="self"/><updated>2025-06-12T10:00:00Z</updated>
<entry><title type="html">Test Atom 1.0 story #1</title>
<link href="https://example.com/atom_1.html"/><id>urn:1</id>
<updated>2025-06-11T10:00:00Z</updated><author><name>John Doe</name></author></entry>
</feed>"""

ATOM_03 = b"""<feed version="0.3" xmlns="http://purl.org/atom/ns#"><title>Old feed</title>
<modified>2025-06-01T00:00:00Z</modified>
<entry><title>Test Atom 0.3 story #1</title>
<link rel="alternate" type="text/html" href="https://example.com/a03.html"/>
<issued>2025-05-30T00:00:00Z</issued></entry></feed>"""


def test_feed_item_titles_and_feed_date() -> None:
    """Point 7: RSS and Atom items keep their titles; the feed's own (newest) date is the
    sitemap's lastmod; a channel image's title is no item's."""
    rss = read(RSS, "https://example.com/feed.xml")
    assert [(r.url, r.title) for r in rss.urls] == [
        ("https://example.com/rss_story_1.html", "Test RSS 2.0 story #1"),
        ("https://example.com/rss_story_2.html", "Story & #2"),
        ("https://example.com/untitled.html", None),
    ]
    assert rss.lastmod == datetime(2025, 6, 11, 7, 30, tzinfo=UTC)
    atom = read(ATOM, "https://example.com/feed.atom")
    assert [(r.url, r.title) for r in atom.urls] == [
        ("https://example.com/atom_1.html", "Test Atom 1.0 story #1")
    ]
    assert atom.lastmod == datetime(2025, 6, 12, 10, tzinfo=UTC)
    assert atom.urls[0].lastmod == datetime(2025, 6, 11, 10, tzinfo=UTC)
    old = read(ATOM_03, "https://example.com/feed03.xml")
    assert old.urls[0].title == "Test Atom 0.3 story #1"
    assert old.lastmod == datetime(2025, 6, 1, tzinfo=UTC)


def test_sitemap_lastmod_is_none_for_urlsets_and_bad_feed_dates_counted() -> None:
    """Point 7: a urlset has no own date; an unreadable feed date is counted."""
    assert read(urlset("<url><loc>https://example.com/a</loc></url>")).lastmod is None
    body = b"<rss><channel><pubDate>yesterday</pubDate><item><link>https://example.com/a</link>"
    body += b"</item></channel></rss>"
    result = read(body)
    assert result.lastmod is None and codes(result) == {"bad-date": 1}
    assert parse(RSS, "https://example.com/feed.xml").lastmod == rss_date()


def rss_date() -> datetime:
    """The lastBuildDate of RSS, in UTC."""
    return datetime(2025, 6, 11, 7, 30, tzinfo=UTC)


@needs_peers
def test_feed_titles_peer_case_usp() -> None:
    """Point 7 on usp's RSS 2.0 / Atom bodies: each story's title, like its news_story."""
    values = {
        "B": "https://example.org",
        "TEST_DATE_STR_ISO8601": "2009-12-17T12:04:56+02:00",
        "TEST_DATE_STR_RFC2822": "Thu, 17 Dec 2009 12:04:56 +0200",
    }
    expected = {
        "test_rss_atom_2.rss": "Test RSS 2.0 story #",
        "test_rss_atom_3.atom": "Test Atom 0.3 story #",
        "test_rss_atom_4.atom": "Test Atom 1.0 story #",
    }
    for name, title in expected.items():
        result = read(peer_case("usp", name, **values), f"https://example.org/{name}")
        assert [r.title for r in result.urls] == [f"{title}1", f"{title}2"]
        assert result.lastmod == datetime(2009, 12, 17, 10, 4, 56, tzinfo=UTC)


VIDEO = urlset(
    "<url><loc>https://example.com/videos/page.html</loc><video:video>"
    "<video:thumbnail_loc>https://example.com/thumbs/123.jpg</video:thumbnail_loc>"
    "<video:title>Grilling steaks for summer</video:title>"
    "<video:content_loc>https://example.com/video123.mp4</video:content_loc>"
    "<video:gallery_loc title='Cooking\n Videos'>https://cooking.example.com</video:gallery_loc>"
    "<video:category>Cooking</video:category>"
    "<video:price currency='eur'>1.99</video:price>"
    "<video:price currency='USD' type='RENT' resolution='hd'>2.50</video:price>"
    "<video:price currency='EUR'>1,99</video:price>"
    "<video:price type='rent'></video:price>"
    "<video:price type='lease'>3</video:price>"
    "<video:id type='tms:program'>MV000123</video:id><video:id>plain-id</video:id>"
    "<video:uploader info='https://example.com/users/grilly'>Grilly</video:uploader>"
    "<video:tvshow><video:show_title>My TV Show!</video:show_title>"
    "<video:video_type>Full</video:video_type>"
    "<video:episode_title>Thu, Jun 05, 2025</video:episode_title>"
    "<video:season_number>23</video:season_number>"
    "<video:episode_number>13</video:episode_number>"
    "<video:premier_date>2025-06-05T21:00Z</video:premier_date></video:tvshow>"
    "</video:video></url>"
)


def test_video_price_gallery_category_tvshow_and_ids() -> None:
    """Point 7: every video field: prices with currency, type and resolution (a locale
    number and a bad type to None, counted), gallery, category, uploader info, TV show, ids."""
    result = read(VIDEO)
    (video,) = result.urls[0].videos
    assert video.prices == (
        VideoPrice(1.99, "EUR"),
        VideoPrice(2.5, "USD", "rent", "hd"),
        VideoPrice(None, "EUR"),
        VideoPrice(type="rent"),
        VideoPrice(3.0),
    )
    assert (video.gallery_loc, video.gallery_title) == (
        "https://cooking.example.com/", "Cooking Videos",
    )  # fmt: skip
    assert video.category == "Cooking"
    assert video.uploader_info == "https://example.com/users/grilly"
    assert video.tvshow == TvShow(
        show_title="My TV Show!", video_type="full", episode_title="Thu, Jun 05, 2025",
        season_number=23, episode_number=13, premier_date=datetime(2025, 6, 5, 21, tzinfo=UTC),
    )  # fmt: skip
    assert video.ids == (VideoId("MV000123", "tms:program"), VideoId("plain-id"))
    assert codes(result) == {"bad-extension-field": 2}


def test_news_access_and_lists() -> None:
    """Point 7: news access, genres, keywords and stock tickers, like crawler-commons'."""
    body = urlset(
        "<url><loc>https://example.org/business/article55.html</loc><news:news>"
        "<news:publication><news:name>The Example Times</news:name>"
        "<news:language>en</news:language></news:publication>"
        "<news:genres>PressRelease, Blog</news:genres>"
        "<news:publication_date>2008-12-23</news:publication_date>"
        "<news:title>Companies A, B in Merger Talks</news:title>"
        "<news:keywords>business, merger, acquisition, A, B</news:keywords>"
        "<news:stock_tickers>NASDAQ:A, NASDAQ:B</news:stock_tickers>"
        "<news:access>Subscription</news:access></news:news></url>"
    )
    news = read(body).urls[0].news
    assert news is not None and news.valid
    assert news.access == "Subscription"
    assert news.genres == ("PressRelease", "Blog")
    assert news.keywords == ("business", "merger", "acquisition", "A", "B")
    assert news.stock_tickers == ("NASDAQ:A", "NASDAQ:B")


def test_mobile_annotation_is_a_flag() -> None:
    """Point 7: <mobile:mobile/> (empty or not) sets mobile; other URLs stay False."""
    body = urlset(
        "<url><loc>https://example.com/mobile-friendly-1/</loc><mobile:mobile/></url>",
        "<url><loc>https://example.com/mobile-friendly-2/</loc><mobile:mobile></mobile:mobile>"
        "</url>",
        "<url><loc>https://example.com/no-mobile/</loc></url>",
    )
    result = read(body)
    assert [r.mobile for r in result.urls] == [True, True, False]
    assert [r.to_dict().get("mobile") for r in result.urls] == [True, True, None]


PAGEMAP = urlset(
    "<url><loc>https://example.com/foo</loc>"
    '<PageMap xmlns="http://www.google.com/schemas/sitemap-pagemap/1.0">'
    '<DataObject type="document" id="one"><Attribute name="name">Doc\n  One</Attribute>'
    '<Attribute name="review">3.5</Attribute></DataObject>'
    '<DataObject type="image"><Attribute name="image_src" value="https://example.com/foo.gif"/>'
    "</DataObject><DataObject><Attribute name='lost'>x</Attribute></DataObject>"
    "</PageMap></url>",
    "<url><loc>https://example.com/bar</loc>"
    '<PageMap xmlns="http://www.google.com/schemas/sitemap-pagemap/1.0">'
    '<DataObject type="document" id="two"><Attribute name="name">Doc Two</Attribute>'
    "</DataObject></PageMap><loc>https://example.com/not-in-pagemap</loc></url>",
)


def test_pagemaps_only_when_asked() -> None:
    """Point 7: PageMap DataObjects as type/attribute maps with pagemaps=True, none by
    default; a PageMap never disturbs the page URLs."""
    plain = read(PAGEMAP)
    asked = read(PAGEMAP, pagemaps=True)
    expected_urls = [
        "https://example.com/foo",
        "https://example.com/bar",
        "https://example.com/not-in-pagemap",
    ]
    assert [r.url for r in plain.urls] == [r.url for r in asked.urls] == expected_urls
    assert all(r.pagemaps == () for r in plain.urls) and codes(plain) == {}
    foo, bar, _ = asked.urls
    assert foo.pagemaps == (
        DataObject("document", "one", (("name", "Doc\n  One"), ("review", "3.5"))),
        DataObject("image", None, (("image_src", "https://example.com/foo.gif"),)),
    )
    assert foo.pagemaps[0].get("review") == "3.5"
    assert bar.to_dict()["pagemaps"] == [
        {"type": "document", "id": "two", "attributes": {"name": "Doc Two"}}
    ]
    assert codes(asked) == {"pagemap-incomplete": 1}
    assert parse(PAGEMAP, SM, pagemaps=True).urls[0].pagemaps == foo.pagemaps


def test_new_fields_in_dict_and_csv_only_when_present() -> None:
    """Point 7: the new keys appear in to_dict and CSV cells only when they have values."""
    rss = read(RSS, "https://example.com/feed.xml").urls
    assert list(rss[0].to_dict()) == [
        "url", "lastmod", "changefreq", "priority", "score", "sitemap", "title",
    ]  # fmt: skip
    assert "title" not in rss[2].to_dict()
    (video_record,) = read(VIDEO).urls
    video = video_record.to_dict()["videos"][0]
    assert video["prices"][1] == {"amount": 2.5, "currency": "USD", "type": "rent",
                                  "resolution": "hd"}  # fmt: skip
    assert video["tvshow"]["premier_date"] == "2025-06-05T21:00:00Z"
    assert video["ids"] == [{"value": "MV000123", "type": "tms:program"}, {"value": "plain-id"}]
    out = io.StringIO()
    writer = CsvWriter(out)
    writer.write(rss[0])
    writer.write(dataclasses.replace(rss[2], mobile=True))
    header, first, second = out.getvalue().splitlines()
    assert header.split(",") == list(CSV_COLUMNS)
    assert {"title", "mobile", "pagemaps"} <= set(CSV_COLUMNS)
    assert first.endswith(",Test RSS 2.0 story #1,,,,") and second.endswith(",,True,,,")


@needs_peers
def test_peer_extension_files_read_in_place() -> None:
    """Point 7 on crawler-commons' own extension files: videos, news, mobile."""
    folder = PEERS / "crawler_commons" / "sitemaps" / "extension"
    videos = read((folder / "sitemap-videos.xml").read_bytes(), "http://www.example.com/s.xml")
    first = videos.urls[0].videos[0]
    assert first.prices == (VideoPrice(1.99, "EUR"),)
    assert (first.gallery_loc, first.gallery_title) == (
        "http://cooking.example.com/", "Cooking Videos",
    )  # fmt: skip
    assert first.uploader_info == "http://www.example.com/users/grillymcgrillerson"
    assert [v.prices for r in videos.urls[1:] for v in r.videos] == [
        (VideoPrice(None, "EUR"),),
        (VideoPrice(type="rent"),),
    ]
    news = read((folder / "sitemap-news.xml").read_bytes(), "http://www.example.org/s.xml")
    assert news.urls[0].news is not None and news.urls[0].news.access == "Subscription"
    mobile = read((folder / "sitemap-mobile.xml").read_bytes(), "http://www.example.org/s.xml")
    assert [r.mobile for r in mobile.urls] == [True, True, False]


def test_repeated_video_fields_are_capped_and_counted() -> None:
    """Point 6: tags and prices past the per-URL cap are dropped and counted (memory stays
    bounded however many a hostile video repeats)."""
    tags = "".join(f"<video:tag>t{i}</video:tag>" for i in range(5))
    prices = "".join(f"<video:price currency='EUR'>{i}</video:price>" for i in range(5))
    body = urlset(
        f"<url><loc>https://example.com/v</loc><video:video><video:title>T</video:title>"
        f"{tags}{prices}</video:video></url>"
    )
    result = read(body, limits=Limits(max_extensions_per_url=3))
    (video,) = result.urls[0].videos
    assert video.tags == ("t0", "t1", "t2")
    assert [p.amount for p in video.prices] == [0.0, 1.0, 2.0]
    assert codes(result) == {"limit-extensions": 4}
