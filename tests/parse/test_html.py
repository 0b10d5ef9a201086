"""The HTML sitemap page reader (parse/html.py): links, bounds, encodings, byte by byte."""

from __future__ import annotations

import re
import time
from urllib.parse import unquote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.html import SITEMAP_WORDS, HtmlLinks, names_sitemap, names_sitemap_path
from sitemap_reader.parse.parser import Item
from sitemap_reader.records import SitemapRef, UrlRecord, url_record_builder

PAGE = "https://e.com/plan-du-site"
BUILD = url_record_builder(lambda p, f, m: 0.0, source="html")


def read(
    body: bytes,
    *,
    step: int | None = None,
    limits: Limits | None = None,
    url: str = PAGE,
    mode: str = "page",
    navigation: set[str] | None = None,
) -> tuple[list[Item], HtmlLinks]:
    """Feed ``body`` whole (or ``step`` bytes at a time); the items and the parser."""
    parser = HtmlLinks(
        url, None, limits=limits or Limits(), build=BUILD, mode=mode, navigation=navigation
    )
    items: list[Item] = []
    size = step or len(body) or 1
    for start in range(0, len(body), size):
        items += parser.feed(body[start : start + size])
    return items + parser.close(), parser


def urls(items: list[Item]) -> list[str]:
    """The URLs of the records among ``items``."""
    return [i.url for i in items if isinstance(i, UrlRecord)]


SAMPLE = (
    b"<!doctype html><html><head><base href='/fr/'></head><body>"
    b"<header><a href='/'>Accueil</a><a href='/contact'>Contact</a></header>"
    b"<ul><li><a href='produits'>Produits</a><li><a href='/blog#haut'>Blog</a>"
    b"<li><a href='javascript:void(0)'>x</a><li><a href='data:text/html,hi'>d</a>"
    b"<li><a href='mailto:a@e.com'>m</a><li><a rel='nofollow' href='/login'>l</a>"
    b"<li><a href='#top'>top</a><li><a href='/plan-du-site#x'>moi</a>"
    b"<li><a href='/plan-du-site/archives'>Archives</a>"
    b"<li><a href='https://other.example/'>o</a><map><area href='/zone'></map></ul>"
    b"<footer><div><a href='/mentions'>Mentions</a></div></footer><a href='/fin'>Fin</a>"
)


def test_links_resolved_filtered_and_sorted_into_pages_and_sections() -> None:
    """base href, fragments, non-http, nofollow, self link, nav, section page, area."""
    items, parser = read(SAMPLE)
    assert urls(items) == [
        "https://e.com/fr/produits",
        "https://e.com/blog",
        "https://other.example/",
        "https://e.com/zone",
        "https://e.com/fin",
    ]
    refs = [i.url for i in items if isinstance(i, SitemapRef)]
    assert refs == ["https://e.com/plan-du-site/archives"]
    assert all(r.source == "html" and r.sitemap == PAGE for r in items if isinstance(r, UrlRecord))
    counts = {p.code: p.count for p in parser.problems}
    assert counts == {"html-navigation": 3, "html-not-http": 3, "html-nofollow": 1}
    assert parser.navigation == {
        "https://e.com/",
        "https://e.com/contact",
        "https://e.com/mentions",
    }
    assert parser.format == "html" and parser.complete


def test_byte_by_byte_gives_the_same_items() -> None:
    """Every case re-fed one byte at a time gives the same records and refs."""
    whole, _ = read(SAMPLE)
    bytewise, _ = read(SAMPLE, step=1)
    assert [i.url for i in bytewise] == [i.url for i in whole]


def test_home_mode_gives_only_links_naming_a_site_map() -> None:
    """A home page: links whose text or path names a site map, in any listed language."""
    body = (
        "<a href='/a'>A</a><footer><a href='/annai/'>サイトマップ</a>"
        "<a href='/plan-du-site'>x</a><a href='/sitemap.xml'>XML</a>"
        "<a href='https://other.example/sitemap'>Sitemap</a></footer>"
    ).encode()
    items, parser = read(body, mode="home", url="https://e.com/")
    assert [i.url for i in items] == ["https://e.com/annai/", "https://e.com/plan-du-site"]
    assert all(isinstance(i, SitemapRef) for i in items)
    assert "https://e.com/sitemap.xml" in parser.navigation  # a footer link: navigation


def test_shared_navigation_is_left_out_of_the_body_too() -> None:
    """A link the site's navigation showed is left out even in the page body."""
    items, _ = read(
        b"<a href='/contact'>c</a><a href='/b'>b</a>", navigation={"https://e.com/contact"}
    )
    assert urls(items) == ["https://e.com/b"]


def test_meta_charset_decodes_shift_jis() -> None:
    """A page in Shift_JIS named by <meta charset>: the link text and path decode."""
    body = "<meta charset='shift_jis'><a href='/記事/一'>記事</a>".encode("shift_jis")
    items, _ = read(body)
    assert urls(items) == ["https://e.com/%E8%A8%98%E4%BA%8B/%E4%B8%80"]


def test_links_cap_ends_the_page_keeping_what_came_before() -> None:
    """max_html_links: a fatal problem, the first links kept."""
    body = b"".join(b"<a href='/p%d'>p</a>" % i for i in range(50))
    items, parser = read(body, limits=Limits(max_html_links=10))
    assert len(urls(items)) == 10
    assert [p.code for p in parser.problems if p.fatal] == ["limit-html-links"]
    assert not parser.complete


def test_bytes_cap_parses_up_to_the_cap() -> None:
    """max_html_bytes: the links before the cap are kept, the rest ignored."""
    body = b"".join(b"<a href='/p%03d'>p</a>" % i for i in range(200))
    items, parser = read(body, step=100, limits=Limits(max_html_bytes=2000))
    assert 50 < len(urls(items)) < 200
    assert [p.code for p in parser.problems] == ["limit-html-bytes"]


def test_unfinished_tag_is_bounded() -> None:
    """An endless attribute: html.parser may not hold more than max_html_token."""
    body = b"<a href='/ok'>ok</a><a href='" + b"x" * 200_000
    items, parser = read(body, step=4096, limits=Limits(max_html_token=8192))
    assert urls(items) == ["https://e.com/ok"]
    assert [p.code for p in parser.problems] == ["limit-html-token"]


def test_a_body_that_is_not_markup_is_not_a_page() -> None:
    """Plain text or binary: format unknown, a fatal not-html problem, no items."""
    items, parser = read(b"just some text\n" * 100)
    assert items == [] and parser.format == "unknown"
    assert [p.code for p in parser.problems] == ["not-html"]


def test_deep_nesting_costs_nothing_kept() -> None:
    """20,000 nested elements inside a nav: bounded state, the later links read."""
    body = b"<nav>" + b"<div>" * 20_000 + b"</div>" * 20_000 + b"</nav><a href='/x'>x</a>"
    items, parser = read(body, step=65536)
    assert urls(items) == ["https://e.com/x"]
    assert parser.complete


def test_names_sitemap_word_list() -> None:
    """Link texts and paths in several languages; content paths that mention it do not."""
    assert all(
        names_sitemap(t)
        for t in ("Site map", "Plan du site", "Mapa del sitio", "Карта сайта", "网站地图")
    )
    assert not names_sitemap("Contact us")
    assert names_sitemap_path("https://e.com/fr/plan-du-site.html")
    assert names_sitemap_path("https://e.com/sitemap?page=2")
    assert not names_sitemap_path("https://e.com/blog/how-to-write-a-sitemap")
    assert not names_sitemap_path("https://e.com/sitemap.xml")


# --- What browsers read past (issue 33: HTML that browsers read and we do not) -----------

LINKS_50 = b"".join(b"<li><a href='/page/%d'>Page %d</a>" % (i, i) for i in range(50))
EXPECTED_50 = [f"https://e.com/page/{i}" for i in range(50)]


@pytest.mark.parametrize(
    "hold",
    [
        b"<script>" + b"var a = '<a href=/no>';" * 15_000 + b"</script  >",
        b"<STYLE type='text/css'>" + b".a{color:red}\n" * 22_000 + b"</style>",
        b"<!--" + b" <a href='/commented'>old</a> -" * 10_000 + b"-->",
    ],
    ids=["script", "style", "comment"],
)
@pytest.mark.parametrize("step", [None, 4096, 1000])
def test_long_script_style_or_comment_is_read_past(hold: bytes, step: int | None) -> None:
    """300 KB of inline script, style or comment before the links: every link after it is
    read (it used to trip the 64 KiB token bound: 0 of 50), none from inside it, and the
    thread's CPU time stays small (each feed used to search the held text again)."""
    assert len(hold) > 300_000
    started = time.thread_time()
    items, parser = read(b"<html><body>" + hold + LINKS_50, step=step)
    assert time.thread_time() - started < 2.0
    assert urls(items) == EXPECTED_50
    assert parser.problems == [] and parser.complete


def test_closing_tag_split_after_shedding() -> None:
    """The end of a long script arriving in pieces (``</scr`` | ``ipt>``) still ends it."""
    body = b"<script>" + b"x" * 20_000 + b"</scr"
    parser = HtmlLinks(PAGE, None, limits=Limits(), build=BUILD)
    items = parser.feed(body)
    items += parser.feed(b"ipt><a href='/after'>a</a>")
    items += parser.close()
    assert urls(items) == ["https://e.com/after"]


@pytest.mark.parametrize("charset", ["utf-16", "UTF-16LE", "utf-32", "idna", "punycode", "utf-7"])
@pytest.mark.parametrize("where", ["meta", "content-type"])
def test_a_charset_that_lies_is_read_as_utf8(charset: str, where: str) -> None:
    """A declared charset that does not read ASCII markup as itself (UTF-16 or UTF-32 on
    ASCII bytes, ``idna``, ``punycode``, UTF-7) is a lie: the page is read as UTF-8, with
    no error (``idna`` ended in an internal UnicodeError, ``punycode`` took 8 s for 3 MB)."""
    meta = f"<meta charset='{charset}'>".encode() if where == "meta" else b""
    ctype = f"text/html; charset={charset}" if where == "content-type" else None
    body = (
        b"<html><head>" + meta + b"</head><body>" + LINKS_50 + b"<a href='/caf%C3%A9'>\xc3\xa9</a>"
    )
    body += b"<p>" + b"x-y+z " * 500_000  # 3 MB of text after the links
    parser = HtmlLinks(PAGE, ctype, limits=Limits(max_html_bytes=8 << 20), build=BUILD)
    started = time.thread_time()
    items: list[Item] = []
    for start in range(0, len(body), 65536):
        items += parser.feed(body[start : start + 65536])
    items += parser.close()
    assert time.thread_time() - started < 3.0
    assert urls(items) == [*EXPECTED_50, "https://e.com/caf%C3%A9"]
    assert parser.problems == []


def test_a_true_charset_is_kept() -> None:
    """Charsets that read markup as itself stay: Shift_JIS, windows-1252, GB18030."""
    for charset, text in [("shift_jis", "記事"), ("windows-1252", "café"), ("gb18030", "文章")]:
        body = f"<meta charset='{charset}'><a href='/{text}'>{text}</a>".encode(charset)
        items, _ = read(body)
        assert [unquote(u) for u in urls(items)] == [f"https://e.com/{text}"], charset


def _names_sitemap_path_reference(url: str) -> bool:
    """The rule as first written: each segment folded, then tested against each word."""
    parts = urlsplit(url)
    path = unquote(parts.path).lower()
    if path.endswith((".xml", ".gz", ".txt", ".rss", ".atom", ".pdf", ".jpg", ".png", ".zip")):
        return False
    segments = [*path.split("/"), *unquote(parts.query).lower().split("&")]
    folded = [" " + re.sub(r"[\s\-_./]+", " ", s).strip() + " " for s in segments if s]
    return any(f.startswith(f" {word}") for f in folded for word in SITEMAP_WORDS)


@settings(max_examples=500)
@given(
    st.lists(
        st.sampled_from(
            [
                "/",
                "&",
                "?",
                "-",
                "_",
                ".",
                " ",
                "site",
                "map",
                "Sitemap",
                "plan",
                "du",
                "карта",
                "сайта",
                "%20",
                "%2F",
                "%26",
                "サイトマップ",
                "mapa",
                "del",
                "sitio",
                "\u00a0",
                "\x85",
                "x",
                "=",
            ]
        ),
        max_size=12,
    )
)
def test_names_sitemap_path_is_the_segment_rule(pieces: list[str]) -> None:
    """One search a path gives what folding each segment and testing each word gave."""
    url = "https://e.com/" + "".join(pieces)
    assert names_sitemap_path(url) == _names_sitemap_path_reference(url), url


def test_links_of_2000_segments_cost_what_short_ones_cost() -> None:
    """2 MB of links with 2,000 path segments each: read in well under a second of CPU
    (it took 8.5-13.5 s a page), every link kept."""
    deep = "/".join("ab"[i % 2] for i in range(2000))  # under the 8 KiB URL bound
    body = "".join(f"<a href='/{i}/{deep}'>x</a>" for i in range(520)).encode()
    assert len(body) > 2_000_000
    started = time.thread_time()
    items, parser = read(body, step=65536, limits=Limits(max_html_bytes=4 << 20))
    assert time.thread_time() - started < 2.0
    assert len(urls(items)) == 520 and parser.problems == []
