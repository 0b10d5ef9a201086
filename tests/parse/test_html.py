"""The HTML sitemap page reader (parse/html.py): links, bounds, encodings, byte by byte."""

from __future__ import annotations

from sitemap_reader.limits import Limits
from sitemap_reader.parse.html import HtmlLinks, names_sitemap, names_sitemap_path
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
