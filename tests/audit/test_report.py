"""``sitemap-reader report``: one self-contained HTML file, checked on its structure.

Issue 34 rows 1-3 each have a test here: every URL counted in the charts, blocked and out of
scope counted, uniform values flagged, findings worst first (row 1); a page a phone can lay
out (row 2; ``make check-report`` renders it at 390 and 1280 px); the HTML way in shown
in the tree (row 3)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from html.parser import HTMLParser
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.big_site import LongUrlSite
from tests.conftest_cli import Doc, Site, index, run_cli, urlset
from tests.report_render import chart_failures

ServerFactory = Callable[[web.Application], Awaitable[TestServer]]
SECTIONS = [
    "summary", "findings", "blocked", "freshness", "lastmod", "changefreq", "priority",
    "hreflang", "duplicates", "tree", "slowest", "largest",
]  # fmt: skip
HTML = "text/html"


class Outline(HTMLParser):
    """What the page is made of: tags, section ids, tree rows, anything that loads; the
    table rows of each section as (class, text) cells; the cards; each chart as
    (section, data-total, the data-count of each bar)."""

    def __init__(self) -> None:
        super().__init__()
        self.table: dict[str, list[list[tuple[str, str]]]] = {}
        self.charts: list[tuple[str, int, list[int]]] = []
        self.cards: dict[str, int] = {}
        self.urls_card: int | None = None
        self.scrolled_tables = 0
        self._card: list[str] | None = None
        self._open: list[str] = []
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
            self.table.setdefault(self.section, []).append([])
        if tag == "td" and self.section:
            self.table[self.section][-1].append((values.get("class") or "", ""))
        self._in_td = self._in_td or tag == "td"
        if tag == "table" and "scroll" in self._open:
            self.scrolled_tables += 1
        if tag == "div":
            self._open.append(values.get("class") or "")
        if values.get("class") == "card":
            self._card = []
            if values.get("data-urls") is not None:
                self.urls_card = int(values["data-urls"] or 0)
        if values.get("data-total") is not None:
            self.charts.append((self.section or "", int(values["data-total"] or 0), []))
        if values.get("data-count") is not None:
            self.charts[-1][2].append(int(values["data-count"] or 0))

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_td = False
        if tag == "div" and self._open:
            closed = self._open.pop()
            if closed == "card" and self._card is not None:
                number, label = self._card[0], " ".join(self._card[1:])
                self.cards[label] = int(number.replace(",", ""))
                self._card = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._card is not None:
            self._card.append(data)
        if self._in_td and self.section:
            self.cells.setdefault(self.section, []).append(data)
            hue, text = self.table[self.section][-1][-1]
            self.table[self.section][-1][-1] = (hue, text + data)


async def test_report_is_one_self_contained_page(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """Every section is there, the charts are CSS bars, and nothing would be fetched."""
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
    assert "svg" not in page.tags  # the charts are CSS bars: they reflow
    assert [section for section, _, _ in page.charts] == ["lastmod", "changefreq", "priority"]
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


def _read(html: str) -> Outline:
    page = Outline()
    page.feed(html)
    page.close()
    return page


async def test_report_counts_every_url_and_puts_the_worst_first(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """Row 1: old and undated lastmods each have a bar, so every chart adds up to the URL
    card; robots-blocked and out-of-scope URLs are counted; a lastmod and a changefreq on
    every URL are flagged; findings come errors first, then warnings, then notices."""
    entries = [
        f"<url><loc>{{base}}/p{n}</loc>"
        + ("" if n % 20 == 0 else "<lastmod>2015-06-01</lastmod>")
        + "<changefreq>daily</changefreq></url>"
        for n in range(40)
    ]
    entries.append("<url><loc>{base}/private/secret</loc><changefreq>daily</changefreq></url>")
    entries.append("<url><loc>https://elsewhere.example/x</loc></url>")
    docs = {
        "/robots.txt": Doc(
            "User-agent: *\nDisallow: /private/\nSitemap: {base}/sitemap.xml\n",
            content_type="text/plain",
        ),
        "/sitemap.xml": Doc(index("/a.xml", "/b.xml")),
        "/a.xml": Doc(urlset(*entries)),
        "/b.xml": Doc(urlset(
            "/p1", "<url><loc>{base}/q</loc><lastmod>2026-01-02</lastmod>"
            "<priority>7</priority></url>",
        )),
    }  # fmt: skip
    server = await aiohttp_server(Site(docs).app())
    base = str(server.make_url("")).rstrip("/")
    out = tmp_path / "report.html"
    result = await run_cli("report", base + "/", "-o", str(out))
    assert result.code == 0, result.err
    html = out.read_text(encoding="utf-8")
    page = _read(html)
    kept = 40 + 1 + 1  # p0-p39, /private/secret, /q
    assert page.urls_card == kept == page.cards["URLs"]
    for section, total, bars in page.charts:
        assert total == sum(bars) == kept, section
    lastmod = html[html.index('<section id="lastmod">') : html.index('<section id="changefreq">')]
    bar = r'<span>([^<]*)</span><span class="bar" data-count="([0-9]+)"'
    # 2015 is years before the newest lastmod: one bar for the year
    assert dict(re.findall(bar, lastmod)) == {"2015": "38", "2026-01": "1", "undated": "3"}
    assert page.cards["blocked by robots.txt"] == 1
    assert page.cards["out of scope (not kept)"] == 1
    assert page.cards["listed again (not kept)"] == 1
    assert page.cards["error"] == page.cards["warning"] == page.cards["notice"] == 1
    blocked = " ".join(page.text[page.text.index("Blocked and out of scope") :])
    assert f"{base}/private/secret" in blocked and "elsewhere.example" in blocked
    flags = " ".join(cell for row in page.table["freshness"] for _, cell in row)
    assert "uniform lastmod: one lastmod (2015-06-01" in flags
    assert "uniform changefreq: daily" in flags
    severities = [row[0][1] for row in page.table["findings"] if row]
    order = ["error", "warning", "notice"]
    assert severities == sorted(severities, key=order.index)
    assert set(severities) == set(order)
    assert [hue for (hue, _), *_ in (r for r in page.table["findings"] if r)] == severities


async def test_report_fits_a_phone(aiohttp_server: ServerFactory, tmp_path: Path) -> None:
    """Row 2: a viewport meta, every table in its own scroll box, no fixed-width chart
    (the pixels are checked by ``make check-report`` at 390 px and 1280 px)."""
    long = "/" + "very-long-segment/" * 12 + "page"
    docs = {"/sitemap.xml": Doc(urlset("/a", long))}
    server = await aiohttp_server(Site(docs).app())
    base = str(server.make_url("")).rstrip("/")
    out = tmp_path / "report.html"
    result = await run_cli("report", base + "/sitemap.xml", "-o", str(out))
    assert result.code == 0, result.err
    html = out.read_text(encoding="utf-8")
    page = _read(html)
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert page.tags.count("table") == page.scrolled_tables > 0
    assert "svg" not in page.tags and re.search(r'(?<![-\w])width(="[0-9]|:[0-9]+px)', html) is None
    assert "@media (max-width:600px)" in html and "overflow-wrap:anywhere" in html


async def test_report_with_html_shows_the_pages_in_the_tree(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """Row 3: a site with only an HTML site map: ``report --html`` lists the home page and
    the site map page in the tree and the slowest and largest tables, as ``tree --html``
    does; the missing robots.txt is not shown as an error."""
    paths = [f"/doc/{n}" for n in range(6)]
    links = "".join(f"<li><a href='{p}'>{p}</a></li>" for p in paths)
    docs = {
        "/": Doc(
            "<!doctype html><html><body><main>hello</main><footer>"
            "<a href='/site-map'>Site map</a></footer></body></html>",
            content_type=HTML,
        ),
        "/site-map": Doc(
            f"<!doctype html><html><body><main><ul>{links}</ul></main></body></html>",
            content_type=HTML,
        ),
    }
    server = await aiohttp_server(Site(docs).app())
    base = str(server.make_url("")).rstrip("/")
    out = tmp_path / "report.html"
    result = await run_cli("report", base + "/", "--html", "-o", str(out))
    assert result.code == 0, result.err
    page = _read(out.read_text(encoding="utf-8"))
    tree = {row[0][1]: row for row in page.table["tree"] if row}
    assert f"{base}/" in tree and f"{base}/site-map" in tree
    assert tree[f"{base}/site-map"][1][1] == "html"
    assert tree[f"{base}/site-map"][5][1] == "6"
    robots = tree[f"{base}/robots.txt"]
    assert robots[3] == ("muted", "no robots.txt (everything allowed)")
    assert robots[2][0] != "ok" or robots[2][1] != "404"
    for section in ("slowest", "largest"):
        listed = {row[0][1] for row in page.table[section] if row}
        assert {f"{base}/", f"{base}/site-map"} <= listed, section
    assert page.urls_card == 6
    # the cards and the story say where the 6 came from, never "0 sitemaps read" alone
    assert page.cards["HTML page read for links"] == 1 and page.cards["sitemaps read"] == 0
    assert "The HTML site map's pages list 6 URLs" in out.read_text(encoding="utf-8")


def _alternates(page: str, *pairs: tuple[str, str]) -> str:
    links = "".join(
        f'<xhtml:link rel="alternate" hreflang="{lang}" href="{{base}}{path}"/>'
        for lang, path in pairs
    )
    return f"<url><loc>{{base}}{page}</loc>{links}</url>"


async def test_report_hreflang_reciprocity_and_freshness(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """Beyond the rows: hreflang alternates per language and the links not returned (the
    German page does not name the English one back; the French one is listed nowhere);
    freshness per target and per sitemap: newest, oldest, share undated."""
    docs = {
        "/sitemap.xml": Doc(urlset(
            _alternates("/en", ("en", "/en"), ("de", "/de"), ("fr", "/fr")),
            _alternates("/de", ("de", "/de")),
            "<url><loc>{base}/old</loc><lastmod>2020-05-01</lastmod></url>",
            "<url><loc>{base}/new</loc><lastmod>2026-02-03</lastmod></url>",
        )),
    }  # fmt: skip
    server = await aiohttp_server(Site(docs).app())
    base = str(server.make_url("")).rstrip("/")
    out = tmp_path / "report.html"
    result = await run_cli("report", base + "/sitemap.xml", "-o", str(out))
    assert result.code == 0, result.err
    page = _read(out.read_text(encoding="utf-8"))
    rows = [[text for _, text in row] for row in page.table["hreflang"] if row]
    assert ["de", "2"] in rows and ["en", "1"] in rows and ["fr", "1"] in rows
    assert [f"{base}/en", f"{base}/de"] in rows  # /de does not name /en back
    text = " ".join(page.text)
    assert "2 URLs of 4 (50%) name hreflang alternates" in text
    assert "of 1 link between listed pages, 1 is not returned" in text
    assert "1 link points at pages no sitemap lists" in text
    fresh = [[text for _, text in row] for row in page.table["freshness"] if row]
    expected = ["4", "2026-02-03", "2020-05-01", "50%"]
    assert [base + "/sitemap.xml", *expected] in fresh  # the target
    assert [base + "/sitemap.xml", *expected, ""] in fresh  # its one sitemap, no flag


async def test_check_report_catches_a_chart_that_does_not_add_up(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """The rule ``make check-report`` applies to the written page (tests/report_render.py):
    a real report passes; the same page with one bar's count changed, or without its URL
    card, fails, naming the chart."""
    docs = {"/sitemap.xml": Doc(urlset(
        "<url><loc>{base}/a</loc><lastmod>2025-01-01</lastmod></url>", "/b", "/c",
    ))}  # fmt: skip
    server = await aiohttp_server(Site(docs).app())
    out = tmp_path / "report.html"
    result = await run_cli("report", str(server.make_url("/sitemap.xml")), "-o", str(out))
    assert result.code == 0, result.err
    html = out.read_text(encoding="utf-8")
    assert chart_failures(html) == []
    tampered = html.replace('data-count="2"', 'data-count="1"', 1)  # the undated bar
    assert tampered != html
    assert chart_failures(tampered) == ["lastmod: bars add up to 2, total 3, URL card 3"]
    assert chart_failures(html.replace("data-urls=", "data-x=")) == ["no URL card (data-urls)"]


def _rules(style: str, *declarations: str) -> set[str]:
    """The selectors of ``style`` whose rule holds one of ``declarations``, split into
    simple selectors (``td.u``, ``.bars span``)."""
    found: set[str] = set()
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", style):
        if any(d in body for d in declarations):
            found.update(s.strip() for s in selectors.split(","))
    return found


def _matches(selector: str, stack: list[tuple[str, set[str]]]) -> bool:
    """Whether the innermost element of ``stack`` (tag, classes) is what ``selector``
    (``tag``, ``.class``, ``tag.class``, or one of these after an ancestor) names."""
    *outer, last = selector.split()

    def fits(simple: str, element: tuple[str, set[str]]) -> bool:
        tag, _, cls = simple.partition(".")
        return (not tag or tag == element[0]) and (not cls or cls in element[1])

    if not stack or not fits(last, stack[-1]):
        return False
    return all(any(fits(o, e) for e in stack[:-1]) for o in outer)


class LongText(HTMLParser):
    """Every run of text without a break opportunity longer than a phone's width (80
    characters), with the elements it sits in."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, set[str]]] = []
        self.found: list[tuple[str, list[tuple[str, set[str]]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ("meta", "br"):
            self.stack.append((tag, set((dict(attrs).get("class") or "").split())))

    def handle_endtag(self, tag: str) -> None:
        if self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if any(len(word) > 80 for word in data.split()) and self.stack[-1][0] != "style":
            self.found.append((data[:40], list(self.stack)))


async def test_a_report_of_very_long_urls_fits_a_phone(
    aiohttp_server: ServerFactory, tmp_path: Path
) -> None:
    """URL paths of 1,500 letters everywhere a URL shows (the tree, findings, freshness,
    duplicates, hreflang, robots.txt's blocked examples, the out-of-scope examples): each
    sits in an element the style lets break anywhere, none in an element kept on one
    line, and no width depends on a URL (before: 13,150 px wide at 390 px; ``make
    check-report`` renders it)."""
    from sitemap_reader.audit.report import _STYLE

    server = await aiohttp_server(LongUrlSite(1_500).app())
    base = str(server.make_url("")).rstrip("/")
    out = tmp_path / "report.html"
    result = await run_cli("report", base + "/", "-o", str(out), "-q")
    assert result.code in (0, 1), result.err
    html = out.read_text(encoding="utf-8")
    breaking = _rules(_STYLE, "overflow-wrap:anywhere", "overflow-wrap:break-word", "break-all")
    one_line = _rules(_STYLE, "nowrap", "overflow-wrap:normal", "keep-all")
    page = LongText()
    page.feed(html)
    assert len(page.found) >= 8
    for text, stack in page.found:
        assert any(_matches(s, stack[: i + 1]) for s in breaking for i in range(len(stack))), text
        assert not any(_matches(s, stack[: i + 1]) for s in one_line for i in range(len(stack)))
    for style in re.findall(r'style="([^"]*)"', html):
        assert re.fullmatch(r"(padding-left:\d{1,3}px|width:[\d.]+%)", style), style
