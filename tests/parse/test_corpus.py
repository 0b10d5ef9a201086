"""Corpus tests: real sitemaps, feeds and robots.txt files from other projects' test data.

Every file in ``../shared/corpus`` (see its README for provenance and licences) and every
file of ``../shared/realdata`` (its MANIFEST.tsv gives each file's format and count) must
parse without any exception, and no emitted URL may be corrupted. The files are read in
place, never copied into the repository; without ``../shared`` the module is skipped.
The specific tests check what the source projects assert about the same files
(protocol-notes §3, tags CC, TF, AT, SC). Every parse is run twice more through
``SitemapParser``: the whole body in one ``feed`` and one byte at a time (realdata files
over 32 KiB in odd-sized chunks); all must give identical results.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.parser import ParseResult, SitemapParser, parse
from sitemap_reader.parse.robots import sitemaps_from_robots
from sitemap_reader.records import Problem, SitemapRef, UrlRecord
from tests.shared_data import CORPUS, REALDATA, manifest, missing_reason

if not CORPUS.is_dir():
    pytest.skip(missing_reason(CORPUS), allow_module_level=True)
NOW = datetime(2026, 1, 1, tzinfo=UTC)
FORMATS = {"urlset", "sitemapindex", "text", "rss", "atom", "unknown"}


def is_robots(path: Path) -> bool:
    """robots.txt files live in a ``robots`` folder or are named ``robots.txt``."""
    return path.parent.name == "robots" or path.name == "robots.txt"


ALL_FILES = sorted(
    p.relative_to(CORPUS).as_posix()
    for p in CORPUS.rglob("*")
    if p.is_file() and p.name != "README.md"
)
ROBOTS_FILES = [name for name in ALL_FILES if is_robots(CORPUS / name)]
SITEMAP_FILES = [name for name in ALL_FILES if not is_robots(CORPUS / name)]


def body_of(name: str) -> bytes:
    """Raw bytes of a corpus file."""
    return (CORPUS / name).read_bytes()


def url_for(name: str) -> str:
    """A plausible URL the file was fetched from."""
    return f"https://corpus.example/{name}"


# --------------------------------------------------------------------------- helpers


@dataclass(frozen=True)
class Outcome:
    """Everything a parse produced, in a comparable form."""

    format: str
    urls: list[UrlRecord]
    sitemaps: list[SitemapRef]
    codes: list[str]
    complete: bool


def feed_in_chunks(body: bytes, url: str | None, size: int) -> Outcome:
    """Feed ``body`` to a SitemapParser in ``size``-byte chunks, then close it."""
    parser = SitemapParser(url, now=NOW)
    items: list[UrlRecord | SitemapRef] = []
    for start in range(0, len(body), size):
        items += parser.feed(body[start : start + size])
    items += parser.close()
    return Outcome(
        format=parser.format,
        urls=[i for i in items if isinstance(i, UrlRecord)],
        sitemaps=[i for i in items if isinstance(i, SitemapRef)],
        codes=[p.code for p in parser.problems],
        complete=parser.complete,
    )


def unscored(records: list[UrlRecord]) -> list[UrlRecord]:
    """Records with the time-dependent score zeroed (parse() scores against now())."""
    return [dataclasses.replace(r, score=0.0) for r in records]


def parse_both(body: bytes, url: str | None) -> ParseResult:
    """parse() the body, and check that whole and byte-at-a-time feeding agree with it."""
    result = parse(body, url=url)
    whole = feed_in_chunks(body, url, max(1, len(body)))
    bytewise = feed_in_chunks(body, url, 1)
    assert bytewise == whole
    assert result.format == whole.format
    assert unscored(result.urls) == unscored(whole.urls)
    assert all(
        math.isclose(a.score, b.score, abs_tol=1e-3)
        for a, b in zip(result.urls, whole.urls, strict=True)
    )
    assert result.sitemaps == whole.sitemaps
    assert [p.code for p in result.problems] == whole.codes
    assert result.complete == whole.complete
    return result


def assert_clean_url(url: str) -> None:
    """An emitted URL is absolute http(s) and already in normalized form."""
    assert url.startswith(("http://", "https://")), url
    assert normalize_url(url) == url, url


def assert_invariants(result: ParseResult, url: str | None) -> None:
    """What must hold for any parse of any body."""
    assert result.format in FORMATS
    for record in result.urls:
        assert_clean_url(record.url)
        assert record.sitemap == url
        assert 0.0 <= record.score <= 1.0
        assert record.priority is None or 0.0 <= record.priority <= 1.0
        assert record.lastmod is None or record.lastmod.utcoffset() is not None
        for alternate in record.alternates:
            assert_clean_url(alternate.url)
        for image in record.images:
            assert_clean_url(image.loc)
    for ref in result.sitemaps:
        assert_clean_url(ref.url)
    for problem in result.problems:
        assert isinstance(problem, Problem)
        assert problem.code and problem.count >= 1
    if not result.complete:
        assert result.problems, "an incomplete parse must say why"


def run(name: str) -> ParseResult:
    """Parse a corpus file every way and check the invariants."""
    result = parse_both(body_of(name), url_for(name))
    assert_invariants(result, url_for(name))
    return result


def urls(result: ParseResult) -> list[str]:
    """The page URLs, in order."""
    return [r.url for r in result.urls]


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0, sec: int = 0) -> datetime:
    """An aware UTC datetime."""
    return datetime(year, month, day, hour, minute, sec, tzinfo=UTC)


# --------------------------------------------------------------------------- every file


@pytest.mark.parametrize("name", ALL_FILES)
def test_every_file_parses_cleanly(name: str) -> None:
    """Any corpus file (robots.txt included) parses to records and problems, all URLs clean."""
    result = run(name)
    assert result.urls or result.sitemaps or result.problems or result.format == "text"


@pytest.mark.parametrize("name", ROBOTS_FILES)
def test_every_robots_file_gives_clean_sitemap_urls(name: str) -> None:
    """sitemaps_from_robots on every robots file: no exception, normalized, no duplicates."""
    found = sitemaps_from_robots(body_of(name), "https://www.example.com/robots.txt")
    for url in found:
        assert_clean_url(url)
    assert len(found) == len(set(found))


EXPECTED_COUNTS = {
    # name: (format, page URLs, child sitemaps)
    "advertools/image_sitemap.xml": ("urlset", 2, 0),
    "advertools/news_sitemap.xml": ("urlset", 6, 0),
    "advertools/regular_sitemap.xml": ("urlset", 5, 0),
    "advertools/regular_sitemap.xml.gz": ("urlset", 5, 0),
    "advertools/sitemap_index.xml": ("sitemapindex", 0, 4),
    "advertools/video_sitemap.xml": ("urlset", 6, 0),
    "advertools/zipped_sitemap.xml.gz": ("urlset", 5, 0),
    "crawler-commons/rss/feed.rss": ("rss", 4, 0),
    "crawler-commons/rss/xmlRss_pubDate.xml": ("rss", 7, 0),
    "crawler-commons/sitemaps/atom.xml": ("atom", 1, 0),
    "crawler-commons/sitemaps/do-not-visit.txt": ("text", 1, 0),
    "crawler-commons/sitemaps/sitemap-with-bom.txt": ("text", 2, 0),
    "crawler-commons/sitemaps/sitemap.badns.xml": ("urlset", 2, 0),
    "crawler-commons/sitemaps/sitemap.index.xml": ("sitemapindex", 0, 15),
    "crawler-commons/sitemaps/sitemap.ns.xml": ("urlset", 2, 0),
    "crawler-commons/sitemaps/sitemap.txt": ("text", 2, 0),
    "crawler-commons/sitemaps/sitemap.txt.gz": ("text", 5, 0),
    "crawler-commons/sitemaps/xmlSitemap.gz": ("urlset", 5, 0),
    "crawler-commons/sitemaps/extension/hebdenbridgetimes-articles-sitemap.xml": ("urlset", 74, 0),
    "crawler-commons/sitemaps/extension/pagemaps-sitemap.xml": ("urlset", 2, 0),
    "crawler-commons/sitemaps/extension/shinpaideshou-news-sitemap.xml": ("urlset", 3, 0),
    "crawler-commons/sitemaps/extension/sitemap-images.xml": ("urlset", 1, 0),
    "crawler-commons/sitemaps/extension/sitemap-links.xml": ("urlset", 3, 0),
    "crawler-commons/sitemaps/extension/sitemap-mobile.xml": ("urlset", 3, 0),
    "crawler-commons/sitemaps/extension/sitemap-news.xml": ("urlset", 2, 0),
    "crawler-commons/sitemaps/extension/sitemap-videos-tvshow.xml": ("urlset", 1, 0),
    "crawler-commons/sitemaps/extension/sitemap-videos.xml": ("urlset", 3, 0),
    "trafilatura/feed2.rss": ("rss", 1, 0),
    "trafilatura/sitemap.xml": ("urlset", 84, 0),
    "trafilatura/sitemap.xml.gz": ("urlset", 84, 0),
    "trafilatura/sitemap2.xml": ("sitemapindex", 0, 2),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_COUNTS))
def test_format_and_counts(name: str) -> None:
    """Each well-formed file gives the format and entry counts its source project asserts."""
    fmt, n_urls, n_sitemaps = EXPECTED_COUNTS[name]
    result = run(name)
    assert (result.format, len(result.urls), len(result.sitemaps)) == (fmt, n_urls, n_sitemaps)
    assert result.complete, result.problems
    assert not any(p.fatal for p in result.problems)


# --------------------------------------------------------------------------- advertools (AT)


def test_advertools_error_sitemap_is_broken_and_incomplete() -> None:
    """[AT] error_sitemap.xml (``<url does not close``): no URL, incomplete, a fatal problem."""
    result = run("advertools/error_sitemap.xml")
    assert result.urls == [] and result.sitemaps == []
    assert result.complete is False
    assert any(p.fatal for p in result.problems)


def test_advertools_regular_sitemap_fields() -> None:
    """[AT] regular_sitemap.xml: 5 URLs, &amp; decoded, lastmod UTC, priority float or None."""
    result = run("advertools/regular_sitemap.xml")
    first, second, *_, fourth, _fifth = result.urls
    assert first.url == "http://www.example.com/"
    assert (first.lastmod, first.changefreq, first.priority) == (utc(2005, 1, 1), "monthly", 0.8)
    assert second.url == "http://www.example.com/catalog?item=12&desc=vacation_hawaii"
    assert (second.lastmod, second.changefreq, second.priority) == (None, "weekly", None)
    assert fourth.lastmod == utc(2004, 12, 23, 18, 0, 15)
    assert fourth.priority == 0.3


def test_advertools_gz_name_without_gzip_is_plain_xml() -> None:
    """[AT #87] regular_sitemap.xml.gz is not gzip: parsed as plain XML, same URLs."""
    assert urls(run("advertools/regular_sitemap.xml.gz")) == urls(
        run("advertools/regular_sitemap.xml")
    )


def test_advertools_zipped_sitemap() -> None:
    """[AT] zipped_sitemap.xml.gz (real gzip): the gzipped.com URLs."""
    result = run("advertools/zipped_sitemap.xml.gz")
    assert all(u.startswith("http://www.gzipped.com/") for u in urls(result))
    assert "http://www.gzipped.com/catalog?item=12&desc=vacation_hawaii" in urls(result)


def test_advertools_sitemap_index() -> None:
    """[AT] sitemap_index.xml: 4 children in order with their lastmods (one absent)."""
    refs = run("advertools/sitemap_index.xml").sitemaps
    assert [r.url for r in refs] == [
        "https://advertools.readthedocs.io/sitemap.xml",
        "http://www.example.com/sitemap.xml",
        "https://raw.githubusercontent.com/eliasdabbas/advertools/master/tests/data/"
        "sitemap_testing/sitemap_index.xml",
        "https://www.google.com/adwords/sitemap_us.xml",
    ]
    assert [r.lastmod for r in refs] == [
        utc(2020, 5, 20, 18, 23, 17),
        utc(2020, 5, 20),
        None,
        utc(2020, 5, 20),
    ]


def test_advertools_image_sitemap() -> None:
    """[AT/CC #71] every image of a URL is kept, optional fields too; image locs never leak."""
    result = run("advertools/image_sitemap.xml")
    assert urls(result) == ["http://example.com/sample.html", "http://example.com/sample_2.html"]
    first, second = result.urls
    assert [i.loc for i in first.images] == [
        "http://example.com/image.jpg",
        "http://example.com/photo.jpg",
    ]
    photo = second.images[1]
    assert photo.loc == "http://example.com/photo2.jpg"
    assert photo.caption == "This is the Caption!"
    assert photo.title == "Image Title"
    assert photo.geo_location == "The Youniverse..."
    # Free text in the wild: never turned into a URL on the sitemap's own host.
    assert photo.license in ("Free License", None)


def test_advertools_news_sitemap() -> None:
    """[AT] news_sitemap.xml: trailing space in loc trimmed, news fields parsed, images kept."""
    result = run("advertools/news_sitemap.xml")
    first = result.urls[0]
    assert first.url == (
        "https://www.nytimes.com/interactive/2020/05/11/magazine/quarantine-insanity.html"
    )
    assert first.lastmod == utc(2020, 5, 19, 21, 57, 45)
    assert first.news is not None
    assert first.news.publication_name == "The New York Times"
    assert (first.news.language or "").lower() == "en-us"
    assert first.news.publication_date == utc(2020, 5, 11, 9, 0, 1)
    assert (first.news.title or "").strip().startswith("Quarantine Was Driving Me Crazy")
    assert all(r.news is not None for r in result.urls)
    assert result.urls[1].images[0].loc.startswith("https://static01.nyt.com/images/2020/05/26/")


def test_advertools_video_sitemap() -> None:
    """[AT] video_sitemap.xml: one video per URL, CDATA title, duration, tags; lastmod after."""
    result = run("advertools/video_sitemap.xml")
    first = result.urls[0]
    assert first.lastmod == utc(2020, 5, 5, 16, 1)
    (video,) = first.videos
    assert (video.title or "").strip() == "Trump Indonesia trees"
    assert video.duration == 18
    assert video.publication_date == utc(2020, 5, 5, 16, 3, 31)
    assert video.tags == ("excludevideoelement", "exclude-bio")
    assert all(len(r.videos) == 1 for r in result.urls)


def test_advertools_robots() -> None:
    """[AT] robots.txt: the one Sitemap line."""
    found = sitemaps_from_robots(
        body_of("advertools/robots.txt"), "https://advertools.readthedocs.io/robots.txt"
    )
    assert found == ["https://advertools.readthedocs.io/sitemap.xml"]


# --------------------------------------------------------------------------- crawler-commons (CC)


def test_cc_text_sitemaps() -> None:
    """[CC #7] sitemap.txt and sitemap-with-bom.txt: text, 2 URLs, no BOM glued to the first."""
    expected = ["http://www.domain.com/page1.html", "http://www.domain.com/page2.html"]
    assert urls(run("crawler-commons/sitemaps/sitemap.txt")) == expected
    assert urls(run("crawler-commons/sitemaps/sitemap-with-bom.txt")) == expected


def test_cc_gzipped_text_sitemap() -> None:
    """[CC #84] sitemap.txt.gz: the inner content sniffed as text, 5 URLs, & kept."""
    result = run("crawler-commons/sitemaps/sitemap.txt.gz")
    assert result.format == "text"
    assert urls(result)[1] == "http://www.example.com/catalog?item=12&desc=vacation_hawaii"


def test_cc_gzipped_xml_sitemap() -> None:
    """[CC] xmlSitemap.gz (gzip without .xml in the name): urlset after gunzip, 5 URLs."""
    result = run("crawler-commons/sitemaps/xmlSitemap.gz")
    assert urls(result)[0] == "http://www.example.com/"
    assert result.urls[3].lastmod == utc(2004, 12, 23, 18, 0, 15)


def test_cc_atom_feed() -> None:
    """[CC #66] atom.xml: the entry link without rel is chosen; feed links not emitted."""
    result = run("crawler-commons/sitemaps/atom.xml")
    assert urls(result) == ["http://example.org/2003/12/13/atom03"]
    assert result.urls[0].lastmod == utc(2003, 12, 13, 18, 30, 2)


def test_cc_wrong_namespace_is_lenient() -> None:
    """[CC #31] sitemap.badns.xml (Google's old namespace): 2 URLs, whitespace trimmed, daily."""
    result = run("crawler-commons/sitemaps/sitemap.badns.xml")
    assert urls(result) == ["http://www.example.com/1", "http://www.example.com/2"]
    assert [r.changefreq for r in result.urls] == ["daily", "daily"]


def test_cc_prefixed_namespace() -> None:
    """[CC #30] sitemap.ns.xml (``sit:`` prefix): 2 URLs, changefreq daily."""
    result = run("crawler-commons/sitemaps/sitemap.ns.xml")
    assert urls(result) == ["http://www.example.com/1", "http://www.example.com/2"]
    assert [r.changefreq for r in result.urls] == ["daily", "daily"]


def test_cc_index_with_bare_text_children() -> None:
    """[CC #18] sitemap.index.xml: 15 <sitemap> with bare text URLs, &amp; decoded."""
    refs = run("crawler-commons/sitemaps/sitemap.index.xml").sitemaps
    assert refs[0].url == "https://example.com/sitemap.jss?portalCode=10260&lang=en"
    assert refs[-1].url == "https://example.com/sitemap.jss?portalCode=10570&lang=en"
    assert len({r.url for r in refs}) == 15


def test_cc_rss_feed() -> None:
    """[CC #8 #67 #68] feed.rss: leading comment, guid-only item, &amp; and CDATA tail joined."""
    assert urls(run("crawler-commons/rss/feed.rss")) == [
        "https://www.example.com/blog/post/1",
        "https://www.example.com/guid.html",
        "https://www.example.com/foo?q=a&l=en",
        "https://www.example.com/foo?q=a&l=fr",
    ]


def test_cc_rss_pubdates() -> None:
    """[CC #54] xmlRss_pubDate.xml: RFC 822 dates with offsets, 2-digit years, no weekday."""
    result = run("crawler-commons/rss/xmlRss_pubDate.xml")
    assert urls(result) == [f"http://www.example.com/article_{n}" for n in range(1, 8)]
    dates = [r.lastmod for r in result.urls]
    assert dates[:4] == [utc(2017, 1, 5, 12, 34, s) for s in (51, 52, 53, 54)]
    assert dates[5:] == [None, None]


def test_cc_news_sitemap() -> None:
    """[CC #70] sitemap-news.xml: genres split, date-only → midnight UTC, empty name → invalid."""
    first, second = run("crawler-commons/sitemaps/extension/sitemap-news.xml").urls
    assert first.news is not None and second.news is not None
    assert first.news.publication_name == "The Example Times"
    assert first.news.language == "en"
    assert first.news.genres == ("PressRelease", "Blog")
    assert first.news.publication_date == utc(2008, 12, 23)
    assert first.news.title == "Companies A, B in Merger Talks"
    assert first.news.valid
    assert second.url == "http://www.example.org/empty_news_name.html"
    assert not second.news.valid


def test_cc_wordpress_news_sitemap() -> None:
    """[CC #74] shinpaideshou news sitemap: 3 URLs, all with a news name and a 2017 date."""
    result = run("crawler-commons/sitemaps/extension/shinpaideshou-news-sitemap.xml")
    for record in result.urls:
        assert record.news is not None
        assert record.news.publication_name == "What can I do with a B.A. in Japanese Studies?"
        assert record.news.publication_date is not None
        assert record.news.publication_date.year == 2017


def test_cc_real_article_sitemap() -> None:
    """[CC #74] hebdenbridgetimes: 74 article URLs; image and video locs never leak as pages."""
    result = run("crawler-commons/sitemaps/extension/hebdenbridgetimes-articles-sitemap.xml")
    assert all(u.startswith("http://www.hebdenbridgetimes.co.uk/") for u in urls(result))
    assert not any("/webimage/" in u or "brightcove" in u for u in urls(result))
    assert result.urls[0].images and result.urls[0].videos
    assert result.urls[0].lastmod == utc(2015, 5, 3, 17, 51, 50)


def test_cc_hreflang_alternates() -> None:
    """[CC/SC #69] sitemap-links.xml: 3 alternates per URL, the self-reference included."""
    result = run("crawler-commons/sitemaps/extension/sitemap-links.xml")
    for record in result.urls:
        assert [(a.hreflang, a.url) for a in record.alternates] == [
            ("de", "http://www.example.com/deutsch/"),
            ("de-ch", "http://www.example.com/schweiz-deutsch/"),
            ("en", "http://www.example.com/english/"),
        ]


def test_cc_images() -> None:
    """[CC #71] sitemap-images.xml: 2 images on the one URL, the second with every field."""
    (record,) = run("crawler-commons/sitemaps/extension/sitemap-images.xml").urls
    assert record.url == "http://www.example.com/images/some_image_landing_page.html"
    assert [i.loc for i in record.images] == [
        "http://example.com/image.jpg",
        "http://example.com/photo.jpg",
    ]
    assert record.images[1].geo_location == "Limerick, Ireland"


def test_cc_videos() -> None:
    """[CC #72] sitemap-videos.xml: numbers, flags, tags, restriction parsed; locs trimmed."""
    result = run("crawler-commons/sitemaps/extension/sitemap-videos.xml")
    (video,) = result.urls[0].videos
    assert video.title == "Grilling steaks for summer"
    assert video.thumbnail_loc == "http://www.example.com/thumbs/123.jpg"
    assert video.content_loc == "http://www.example.com/video123.flv"
    assert video.player_loc == "http://www.example.com/videoplayer.swf?video=123"
    assert (video.duration, video.rating, video.view_count) == (600, 4.2, 12345)
    assert video.family_friendly is True
    assert video.restriction == ("IE", "GB", "US", "CA")
    assert video.restriction_relationship == "allow"
    assert video.tags == ("sample_tag1", "sample_tag2")
    assert video.expiration_date == utc(2009, 11, 5, 11, 20, 30)
    assert all(len(r.videos) == 1 for r in result.urls)


def test_cc_video_before_loc() -> None:
    """[CC #72] sitemap-videos-tvshow.xml: loc after the video; the video's locs do not leak."""
    (record,) = run("crawler-commons/sitemaps/extension/sitemap-videos-tvshow.xml").urls
    assert record.url == "https://example.org/my-tv-show/23/13/"
    (video,) = record.videos
    assert video.requires_subscription is True
    assert video.duration == 2459
    assert video.content_loc == "https://example.org/video/video/23-13.mp4"


def test_cc_mobile_and_pagemaps_ignored() -> None:
    """[CC #73] mobile and PageMap extensions do not disturb the page URLs."""
    mobile = run("crawler-commons/sitemaps/extension/sitemap-mobile.xml")
    assert urls(mobile) == [
        "http://www.example.com/mobile-friendly-1/",
        "http://www.example.com/mobile-friendly-2/",
        "http://www.example.com/no-mobile/",
    ]
    pagemaps = run("crawler-commons/sitemaps/extension/pagemaps-sitemap.xml")
    assert urls(pagemaps) == ["http://www.example.com/foo", "http://www.example.com/bar"]


@pytest.mark.parametrize(
    "name",
    [
        "crawler-commons/robots/robots-with-utf8-bom.txt",
        "crawler-commons/robots/robots-with-utf16le-bom.txt",
        "crawler-commons/robots/robots-with-utf16be-bom.txt",
    ],
)
def test_cc_robots_with_bom(name: str) -> None:
    """[CC #78] robots.txt behind a UTF-8/16 BOM: the final Sitemap line is found."""
    found = sitemaps_from_robots(body_of(name), "https://www.newsweek.com/robots.txt")
    assert found == ["http://www.newsweek.com/sitemap_index.xml"]


def test_cc_robots_dedup() -> None:
    """[CC #77] ``sitemap:`` and ``Sitemap:`` naming the same URL: one entry."""
    found = sitemaps_from_robots(
        body_of("crawler-commons/robots/sitemap-robots-dedup.txt"), "http://example.org/robots.txt"
    )
    assert found == ["http://example.org/sitemap.xml"]


def test_cc_robots_anywhere_and_mixed_case() -> None:
    """[CC #77 #80] Sitemap lines anywhere, mixed-case path preserved."""
    found = sitemaps_from_robots(
        body_of("crawler-commons/robots/sitemap-robots.txt"), "http://domain.com/robots.txt"
    )
    assert "http://domain.com/sitemap.xml" in found
    assert "http://domain.com/dir/MixedCased-sitemap.xml" in found


@pytest.mark.parametrize(
    "name",
    [
        "crawler-commons/robots/relative-sitemap-robots.txt",
        "crawler-commons/robots/extension-robots.txt",
    ],
)
def test_cc_robots_relative_sitemap(name: str) -> None:
    """[SC #75] a relative ``Sitemap: /sitemap.xml`` resolves against the robots URL."""
    found = sitemaps_from_robots(body_of(name), "https://www.example.com/robots.txt")
    assert found == ["https://www.example.com/sitemap.xml"]


def test_cc_robots_many_sitemaps() -> None:
    """[CC] amazon-style wildcards.txt: all 8 Sitemap lines, in order."""
    found = sitemaps_from_robots(
        body_of("crawler-commons/robots/wildcards.txt"), "http://www.amazon.com/robots.txt"
    )
    assert len(found) == 8
    assert found[0] == "http://www.amazon.com/sitemap-manual-index.xml"


def test_cc_robots_without_sitemaps() -> None:
    """[CC] twitter.com robots.txt has rules but no Sitemap line: nothing found."""
    found = sitemaps_from_robots(
        body_of("crawler-commons/robots/twitter.com-robots.txt"), "https://twitter.com/robots.txt"
    )
    assert found == []


# --------------------------------------------------------------------------- trafilatura (TF)


def test_tf_sitemap_crlf_and_gzip() -> None:
    """[TF] sitemap.xml (CRLF line ends) and its gzip twin: the same 84 URLs."""
    plain = run("trafilatura/sitemap.xml")
    assert urls(plain) == urls(run("trafilatura/sitemap.xml.gz"))
    assert urls(plain)[0] == "https://www.sitemaps.org/"
    assert plain.urls[0].lastmod == utc(2016, 11, 21)


def test_tf_index_with_cdata_loc() -> None:
    """[TF/CC #16] sitemap2.xml: 2 children, the second loc wrapped in CDATA."""
    refs = run("trafilatura/sitemap2.xml").sitemaps
    assert [(r.url, r.lastmod) for r in refs] == [
        ("http://www.example.com/sitemap1.xml.gz", utc(2004, 10, 1, 18, 23, 17)),
        ("http://www.example.com/sitemap2.xml.gz", utc(2005, 1, 1)),
    ]


def test_tf_hreflang() -> None:
    """[TF] sitemap-hreflang.xml: 3 pages, 3 alternates each (multi-line attributes), 1 child."""
    result = run("trafilatura/sitemap-hreflang.xml")
    pages = [
        "http://www.example.com/english/page.html",
        "http://www.example.com/deutsch/page.html",
        "http://www.example.com/schweiz-deutsch/page.html",
    ]
    assert urls(result)[:3] == pages
    assert all(len(r.alternates) == 3 for r in result.urls[:3])
    assert "http://www.example.com/sitemap-de.xml.gz" not in urls(result)
    # [TF #91] the stray <sitemap> inside the urlset is a child sitemap, not a page.
    assert [r.url for r in result.sitemaps] == ["http://www.example.com/sitemap2.xml.gz"]


def test_tf_feeds() -> None:
    """[TF] feed1.atom and feed2.rss: entry/item links, never the feed's own link."""
    atom = run("trafilatura/feed1.atom")
    assert atom.format == "atom"
    assert urls(atom)[0] == "http://example.org/2003/12/13/atom03"
    assert "http://example.org/" not in urls(atom)
    rss = run("trafilatura/feed2.rss")
    assert urls(rss) == ["http://www.example.com/blog/post/1"]


# --------------------------------------------------------------------------- scrapy (SC)


@pytest.mark.parametrize("name", ["scrapy/feed-sample1.xml", "scrapy/feed-sample1.xml.gz"])
def test_sc_product_feed_is_not_a_sitemap(name: str) -> None:
    """[SC #10] a <products> feed (valid XML, unknown root): format unknown, a problem, no URLs."""
    result = run(name)
    assert result.format == "unknown"
    assert result.urls == [] and result.sitemaps == []
    assert result.problems


def test_sc_merchant_rss_feed() -> None:
    """[SC] feed-sample2.xml (Google Merchant RSS): the item links, never the channel link."""
    result = run("scrapy/feed-sample2.xml")
    assert result.format == "rss"
    found = urls(result)
    assert "http://www.example.com/" not in found
    assert len(set(found)) == 7
    assert all(u.startswith("http://www.example.com/product.asp?P_ID=") for u in found)


# --------------------------------------------------------------------------- real sites

REAL_ROWS = manifest()
#: Files up to this size are also fed one byte at a time; larger ones in odd-sized chunks.
BYTEWISE_MAX = 32 * 1024


@pytest.mark.skipif(not REAL_ROWS, reason=missing_reason(REALDATA / "MANIFEST.tsv"))
def test_realdata_manifest_lists_every_file() -> None:
    """MANIFEST.tsv names exactly the files in realdata/files (no stale or unlisted file)."""
    listed = {row["local_name"] for row in REAL_ROWS}
    assert listed == {p.name for p in (REALDATA / "files").iterdir()}


@pytest.mark.parametrize("row", REAL_ROWS, ids=[r["local_name"] for r in REAL_ROWS])
def test_realdata_file_matches_manifest(row: dict[str, str]) -> None:
    """A real site's file gives the format and entry count its MANIFEST row states, the
    same whole, in odd-sized chunks and (small files) byte by byte, with clean URLs."""
    name = row["local_name"]
    body = (REALDATA / "files" / name).read_bytes()
    url = f"https://realdata.example/{name}"
    if row["format"] == "robots":
        found = sitemaps_from_robots(body, url)
        for sitemap in found:
            assert_clean_url(sitemap)
        assert len(found) == int(row["url_count"])
        return
    result = parse(body, url=url)
    assert_invariants(result, url)
    whole = feed_in_chunks(body, url, max(1, len(body)))
    assert feed_in_chunks(body, url, 1 if len(body) <= BYTEWISE_MAX else 4093) == whole
    assert result.format == whole.format == row["format"]
    assert len(result.urls) + len(result.sitemaps) == int(row["url_count"])
