"""``sitemap-reader report``: one self-contained HTML file, checked on its structure."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from html.parser import HTMLParser
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.conftest_cli import Doc, Site, index, run_cli, urlset

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
SECTIONS = [
    "summary", "tree", "lastmod", "changefreq", "priority", "duplicates", "slowest",
    "largest", "findings",
]  # fmt: skip


class Outline(HTMLParser):
    """What the page is made of: tags, section ids, tree rows, anything that loads."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.sections: list[str] = []
        self.loads: list[str] = []  # src / href / url(...) values: must be none
        self.section: str | None = None
        self.rows: dict[str, int] = {}
        self.cells: dict[str, list[str]] = {}
        self.text: list[str] = []
        self._in_td = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        values = dict(attrs)
        if tag == "section":
            self.section = values.get("id")
            self.sections.append(self.section or "")
        for name in ("src", "href", "srcset", "action"):
            if values.get(name):
                self.loads.append(f"{tag} {name}={values[name]}")
        if tag == "tr" and self.section:
            self.rows[self.section] = self.rows.get(self.section, 0) + 1
        self._in_td = tag == "td"

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_td = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_td and self.section:
            self.cells.setdefault(self.section, []).append(data)


async def test_report_is_one_self_contained_page(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """Every section is there, the charts are inline SVG, and nothing would be fetched."""
    docs = {
        "/robots.txt": Doc("Sitemap: {base}/sitemap.xml\n", content_type="text/plain"),
        "/sitemap.xml": Doc(index("/a.xml", "/b.xml")),
        "/a.xml": Doc(urlset(
            "<url><loc>{base}/p1</loc><lastmod>2025-03-05</lastmod>"
            "<changefreq>daily</changefreq><priority>0.8</priority></url>",
            "<url><loc>{base}/p2</loc><lastmod>2025-04-01</lastmod></url>",
        )),
        "/b.xml": Doc(urlset("/p1", "<url><loc>{base}/&lt;script&gt;x</loc></url>")),
    }  # fmt: skip
    server = await aiohttp_server(Site(docs).app())
    base = str(server.make_url("")).rstrip("/")
    out = tmp_path / "report.html"
    result = await run_cli("report", base + "/", "-o", str(out))
    assert result.code == 0, result.err
    assert str(out) in result.err
    html = out.read_text(encoding="utf-8")
    page = Outline()
    page.feed(html)
    page.close()
    assert html.startswith("<!DOCTYPE html>")
    assert page.sections == SECTIONS
    assert "script" not in page.tags and "link" not in page.tags and "img" not in page.tags
    assert page.loads == [] and "url(" not in html and "@import" not in html
    assert page.tags.count("svg") == 3  # lastmod, changefreq, priority
    assert page.rows["tree"] == 1 + 4  # header + robots.txt, index, two sitemaps
    assert page.rows["duplicates"] == 1 + 1  # b.xml repeats /p1
    cells = " ".join(page.cells["tree"])
    assert f"{base}/a.xml" in cells and "sitemapindex" in cells
    text = " ".join(page.text)
    assert "2025-03" in text and "2025-04" in text  # lastmod months
    assert "<script>" not in html and "&lt;script&gt;" in html  # site text is escaped


async def test_report_of_nothing_says_why_and_exits_1(unused_tcp_port: int, tmp_path: Path) -> None:
    """Nothing discovered: the page is still written, with the plain reason; exit 1."""
    out = tmp_path / "r.html"
    result = await run_cli("report", f"http://127.0.0.1:{unused_tcp_port}/", "-o", str(out))
    assert result.code == 1
    page = out.read_text()
    assert "connection refused" in page and "ClientConnectorError" not in page


async def test_report_needs_an_output_file() -> None:
    """report without -o is a usage error naming -o."""
    result = await run_cli("report", "example.com")
    assert result.code == 2 and "-o" in result.err.splitlines()[0]
