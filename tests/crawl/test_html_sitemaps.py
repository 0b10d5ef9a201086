"""More ways in (issue 24): HTML sitemap pages, a subdomain's parent, ``since`` on index
children, sitemaps listed in a urlset; each on a loopback site, before and after."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web

from sitemap_reader.errors import DiscoveryError
from sitemap_reader.records import UrlRecord
from tests.conftest_cli import SITEMAP_READER, cli_env
from tests.crawl.crawl_kit import (
    FAST,
    SITEMAP_NS,
    Handler,
    Reply,
    Site,
    ThreadedServer,
    collect,
    gz,
    node_by_url,
    tree,
    urlset,
)
from tests.hostile.test_guard import FakeResolver

HTML = "text/html; charset=utf-8"
NAV = (
    "<header><nav><a href='/'>Accueil</a><a href='/produits/'>Produits</a>"
    "<a href='/contact'>Contact</a></nav></header>"
)


def page(body: str, footer: str = "<a href='/mentions'>Mentions</a>", *, head: str = "") -> str:
    """An HTML page with the site's header and footer navigation around ``body``."""
    return (
        f"<!doctype html><html><head>{head}<title>t</title></head><body>{NAV}"
        f"<main>{body}</main><footer>{footer}</footer></body></html>"
    )


def links(site: Site, paths: list[str]) -> str:
    """A list of links to ``paths``."""
    return "<ul>" + "".join(f"<li><a href='{p}'>{p}</a></li>" for p in paths) + "</ul>"


def french_site(site: Site) -> list[str]:
    """A site with only an HTML sitemap, /plan-du-site, linked from the home footer."""
    content = [f"/produits/p{i}" for i in range(5)] + ["/blog/bonjour", "/a-propos"]
    footer = "<a href='/mentions'>Mentions</a> <a href='/plan-du-site'>Plan du site</a>"
    site.add(
        "/", page("<p>Bienvenue</p><a href='/produits/p0'>Vedette</a>", footer), content_type=HTML
    )
    sitemap = links(site, content) + "<a rel='nofollow' href='/connexion'>x</a>"
    sitemap += "<a href='javascript:void(0)'>x</a><a href='http://10.0.0.1/admin'>x</a>"
    site.add("/plan-du-site", page(sitemap, footer), content_type=HTML)
    return [site.url(p) for p in content]


async def test_french_html_sitemap_found_from_the_home_footer(site: Site) -> None:
    """Only an HTML sitemap: nothing before; with html=True its content links, no nav."""
    expected = french_site(site)
    with pytest.raises(DiscoveryError):
        await collect(site.url("/"))
    before = sum(site.hits.values())
    records, run = await collect(site.url("/"), html=True)
    assert [r.url for r in records] == expected
    assert {r.source for r in records} == {"html"}
    assert {r.sitemap for r in records} == {site.url("/plan-du-site")}
    assert all(r.priority is None and r.robots is None for r in records)
    home = node_by_url(run, site.url("/"))
    assert home.kind == "home" and home.format == "html"
    sitemap = node_by_url(run, site.url("/plan-du-site"))
    assert sitemap.kind == "html" and sitemap.ok and sitemap.urls == len(expected) + 1
    codes = {p.code: p.count for p in sitemap.problems}
    assert codes["html-navigation"] == 4 and codes["html-nofollow"] == 1
    assert codes["html-not-http"] == 1
    assert run.stats.urls_out_of_scope == 1  # the private address: out of scope, not fetched
    assert any(p.code == "html-fallback" for p in run.tree[0].problems)
    requests = sum(site.hits.values()) - before
    assert requests == 1 + 6 + 1 + 1  # robots.txt, well-known paths, home, the page
    print(f"\nTABLE french: before 0, after {len(records)}, requests {requests}")


async def test_japanese_html_sitemap_named_by_link_text_in_shift_jis(site: Site) -> None:
    """A home link whose text is サイトマップ (its path says nothing), a Shift_JIS page."""
    content = ["/記事/一", "/記事/二", "/会社"]
    footer = "<a href='/annai/'>サイトマップ</a>"
    site.add("/", page("<p>ようこそ</p>", footer), content_type=HTML)
    body = page(links(site, content), footer, head="<meta charset='shift_jis'>")
    site.add("/annai/", body.encode("shift_jis"), content_type="text/html")
    with pytest.raises(DiscoveryError):
        await collect(site.url("/"))
    before = len(site.requests)
    records, run = await collect(site.url("/"), html=True)
    assert [r.url for r in records] == [
        site.url("/%E8%A8%98%E4%BA%8B/%E4%B8%80"),
        site.url("/%E8%A8%98%E4%BA%8B/%E4%BA%8C"),
        site.url("/%E4%BC%9A%E7%A4%BE"),
    ]
    assert node_by_url(run, site.url("/annai/")).kind == "html"
    print(
        f"\nTABLE japanese: before 0, after {len(records)}, requests {len(site.requests) - before}"
    )


def sections_site(site: Site) -> None:
    """/sitemap.html and two section pages, each with the same <div> menu."""
    menu = "<div class='menu'><a href='/about'>About</a><a href='/jobs'>Jobs</a></div>"
    site.add("/", page("<p>home, no sitemap link</p>"), content_type=HTML)
    top = menu + links(site, ["/sitemap/produits", "/sitemap/blog", "/a"])
    site.add("/sitemap.html", page(top), content_type=HTML)
    site.add("/sitemap/produits", page(menu + links(site, ["/p1", "/p2"])), content_type=HTML)
    deeper = menu + links(site, ["/b1", "/sitemap/blog/2024", "/a"])
    site.add("/sitemap/blog", page(deeper), content_type=HTML)
    site.add("/sitemap/blog/2024", page(links(site, ["/never"])), content_type=HTML)


async def test_html_sitemap_split_over_section_pages(site: Site) -> None:
    """/sitemap.html (a usual path) links two section pages; a third level is not read;
    a menu of plain <div>s that every page shares is left out."""
    sections_site(site)
    records, run = await collect(site.url("/"), html=True)
    assert sorted(r.url for r in records) == sorted(
        site.url(p) for p in ["/a", "/p1", "/p2", "/b1"]
    )
    assert site.hits["/sitemap/blog/2024"] == 0
    blog = node_by_url(run, site.url("/sitemap/blog"))
    assert blog.kind == "html" and blog.depth == 1
    assert str(blog.children[0].skipped) == "deeper than max_html_depth=2"
    top_node = node_by_url(run, site.url("/sitemap.html"))
    assert top_node.kind == "html"
    assert [(p.code, p.count) for p in top_node.problems if p.code == "html-shared"] == [
        ("html-shared", 2)
    ]
    requests = sum(site.hits.values())
    print(f"\nTABLE sections: before 0, after {len(records)}, requests {requests}")


async def test_html_records_held_past_the_bound_go_out_at_once(site: Site) -> None:
    """max_html_held=2: the hold overflows, is reported, and no record is lost."""
    sections_site(site)
    options = FAST.replace(max_html_held=2)
    records, run = await collect(site.url("/"), html=True, options=options)
    assert {site.url(p) for p in ["/a", "/p1", "/p2", "/b1"]} <= {r.url for r in records}
    assert any(p.code == "limit-html-held" for n in run.nodes() for p in n.problems)


async def test_html_pages_per_site_are_bounded(site: Site) -> None:
    """A home page linking 50 "sitemap" pages, max_html_pages=4: the home page and three
    of them are read, the rest skipped and reported."""
    paths = [f"/sitemap-{i}" for i in range(50)]
    site.add("/", page(links(site, paths)), content_type=HTML)
    for i, path in enumerate(paths):
        site.add(path, page(links(site, [f"/page-{i}"])), content_type=HTML)
    options = FAST.replace(max_html_pages=4)
    records, run = await collect(site.url("/"), html=True, options=options)
    assert len(records) == 3
    assert sum(site.hits[p] for p in paths) == 3
    home = node_by_url(run, site.url("/"))
    assert str(home.children[-1].skipped) == "over max_html_pages=4"
    assert [p.count for p in home.problems if p.code == "limit-html-pages"] == [47]


async def test_target_that_is_an_html_sitemap_page(site: Site) -> None:
    """The page given as the target: refused as not a sitemap, read with html=True."""
    french_site(site)
    with pytest.raises(DiscoveryError, match="HTML page is not a sitemap"):
        await collect(site.url("/plan-du-site"))
    records, run = await collect(site.url("/plan-du-site"), html=True)
    assert len(records) == 7 and run.tree[0].kind == "html"


async def test_html_always_reads_the_html_sitemap_beside_the_xml_one(site: Site) -> None:
    """html='always': the XML sitemap and the HTML one; a site with XML is unchanged by
    html=True (fallback)."""
    expected = french_site(site)
    site.add("/sitemap.xml", urlset([site.url("/x1"), expected[0]]))
    plain, _ = await collect(site.url("/"))
    fallback, _ = await collect(site.url("/"), html=True)
    assert [r.url for r in fallback] == [r.url for r in plain] == [site.url("/x1"), expected[0]]
    both, _ = await collect(site.url("/"), html="always")
    assert sorted(r.url for r in both) == sorted({site.url("/x1"), *expected})
    assert {r.source for r in both if r.url == site.url("/x1")} == {None}
    assert {r.source for r in both if r.url == expected[-1]} == {"html"}


def _by_host(routes: dict[str, dict[str, bytes]]) -> Handler:
    """A handler answering by Host: ``routes[host][path]``, 404 elsewhere."""

    async def handle(request: web.Request) -> web.StreamResponse:
        body = routes.get(request.host.split(":")[0], {}).get(request.path)
        if body is None:
            return web.Response(status=404)
        return web.Response(body=body, content_type="application/xml")

    return handle


async def test_subdomain_reads_its_parents_sitemaps(site: Site) -> None:
    """docs.example.test has none: parent=True reads example.test's, keeps docs URLs."""
    port = site.host.rsplit(":", 1)[1]
    docs, main = f"http://docs.example.test:{port}", f"http://example.test:{port}"
    listed = [f"{docs}/guide", f"{docs}/api", f"{main}/shop", f"http://blog.example.test:{port}/x"]
    routes = {
        "example.test": {
            "/robots.txt": f"Sitemap: {main}/all.xml\n".encode(),
            "/all.xml": urlset(listed),
        }
    }
    handler = _by_host(routes)
    for path in ("/robots.txt", "/all.xml", "/sitemap.xml"):
        site.add(path, handler)
    resolver = FakeResolver("docs.example.test", "example.test")
    options = {"resolver": resolver, "allow_private": True}
    with pytest.raises(DiscoveryError):
        await collect(docs + "/", **options)
    before = len(site.requests)
    records, run = await collect(docs + "/", parent=True, **options)
    assert [r.url for r in records] == listed[:2]
    assert run.stats.urls_out_of_scope == 2
    parent = node_by_url(run, f"{main}/robots.txt")
    assert parent.kind == "robots" and parent.children[0].url == f"{main}/all.xml"
    note = [p.message for p in run.tree[0].problems if p.code == "parent-sitemaps"]
    reading = "reading example.test's sitemaps, keeping URLs under docs.example.test"
    assert note == [f"no sitemap of its own: {reading}"]
    print(f"\nTABLE parent: before 0, after {len(records)}, requests {len(site.requests) - before}")


def dated_index(site: Site, count: int, cutoff: datetime) -> list[str]:
    """An index of ``count`` children, one a day back from ``cutoff`` + 10 days; the
    URLs of the children not older than ``cutoff``."""
    entries, fresh = [], []
    for i in range(count):
        day = cutoff + timedelta(days=10 - i)
        path = f"/news-{i}.xml"
        site.add(path, urlset([site.url(f"/article-{i}")]))
        entries.append(
            f"<sitemap><loc>{site.url(path)}</loc><lastmod>{day:%Y-%m-%d}</lastmod></sitemap>"
        )
        if day >= cutoff:
            fresh.append(site.url(f"/article-{i}"))
    body = f'<sitemapindex xmlns="{SITEMAP_NS}">{"".join(entries)}</sitemapindex>'
    site.add("/robots.txt", f"Sitemap: {site.url('/index.xml')}\n", content_type="text/plain")
    site.add("/index.xml", body)
    return fresh


async def test_since_skips_older_index_children_unfetched(site: Site) -> None:
    """200 dated children, since=the 11th: 11 fetched, 189 skipped unfetched and counted."""
    cutoff = datetime(2024, 6, 1, tzinfo=UTC)
    fresh = dated_index(site, 200, cutoff)
    everything, _ = await collect(site.url("/"))
    before = len(site.requests)
    records, run = await collect(site.url("/"), since=cutoff)
    assert len(everything) == 200
    assert sorted(r.url for r in records) == sorted(fresh) and len(fresh) == 11
    assert site.hits["/news-199.xml"] == 1  # the first run only
    index_node = node_by_url(run, site.url("/index.xml"))
    older = [p for p in index_node.problems if p.code == "children-older"]
    assert older[0].count == 189
    assert str(index_node.children[-1].skipped) == "index lastmod older than since"
    assert run.stats.sitemaps_skipped == 189
    print(
        f"\nTABLE since: before 200, after {len(records)}, requests {len(site.requests) - before}"
    )


async def test_since_leaves_out_older_records_as_the_cli_does(site: Site) -> None:
    """since= (a date string too) leaves out the records older than it, keeps the undated
    and the newer ones, and counts what it left out: the meaning of --since."""
    entries = "".join(
        f"<url><loc>{site.url(path)}</loc>{f'<lastmod>{day}</lastmod>' if day else ''}</url>"
        for path, day in [("/old", "2023-05-01"), ("/new", "2024-07-01"), ("/undated", None)]
    )
    site.add("/s.xml", f'<urlset xmlns="{SITEMAP_NS}">{entries}</urlset>'.encode())
    records, run = await collect(site.url("/s.xml"), since="2024-06-01")
    assert sorted(r.url for r in records) == [site.url("/new"), site.url("/undated")]
    assert run.stats.urls_older == 1 and run.stats.to_dict()["urls_older"] == 1


def test_cli_since_summary_and_ignore_index_lastmod() -> None:
    """dump --since: the summary counts the children not fetched; --ignore-index-lastmod
    (no --state needed) fetches them and filters the records instead."""
    with ThreadedServer(Site()) as site:
        _cli_since(site)


def _cli_since(site: Site) -> None:
    cutoff = datetime(2024, 6, 1, tzinfo=UTC)
    fresh = dated_index(site, 30, cutoff)
    args = [SITEMAP_READER, "dump", site.url("/"), "--since", "2024-06-01", "--no-progress"]
    done = subprocess.run(args, capture_output=True, text=True, env=cli_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(line)["url"] for line in done.stdout.splitlines()) == sorted(fresh)
    assert (
        "not fetched: 19 child sitemaps whose index lastmod is older than --since (their URLs "
        "may be newer: --ignore-index-lastmod reads them)"
    ) in done.stderr
    done = subprocess.run(
        [*args, "--ignore-index-lastmod"], capture_output=True, text=True, env=cli_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "older than --since" not in done.stderr
    assert site.hits["/news-29.xml"] == 1


async def test_urlset_listing_sub_sitemaps_is_followed_when_asked(site: Site) -> None:
    """A CMS urlset lists its sub-sitemaps as locs: read when they are sitemaps, kept as
    pages when not; off by default."""
    listed = [
        site.url("/post-sitemap.xml"),
        site.url("/page-sitemap.xml.gz"),
        site.url("/feed.xml"),
    ]
    site.add("/sitemap.xml", urlset([site.url("/home"), *listed]))
    site.add("/post-sitemap.xml", urlset([site.url("/post-1"), site.url("/post-2")]))
    site.add("/page-sitemap.xml.gz", gz(urlset([site.url("/page-1")])))
    site.add("/feed.xml", Reply(page("<p>not a sitemap</p>").encode(), content_type=HTML))
    plain, _ = await collect(site.url("/"))
    assert [r.url for r in plain] == [site.url("/home"), *listed]
    before = len(site.requests)
    records, run = await collect(site.url("/"), follow_urlset_sitemaps=True)
    urls = [r.url for r in records]
    assert sorted(urls) == sorted(
        [site.url(p) for p in ("/home", "/post-1", "/post-2", "/page-1", "/feed.xml")]
    )
    assert node_by_url(run, site.url("/post-sitemap.xml")).kind == "sitemap"
    feed = node_by_url(run, site.url("/feed.xml"))
    assert str(feed.skipped) == "not a sitemap: kept as a page" and not feed.failed
    assert run.stats.sitemaps_failed == 0
    made = len(site.requests) - before
    print(f"\nTABLE urlset: before {len(plain)}, after {len(records)}, requests {made}")


async def test_tree_shows_the_html_kinds(site: Site) -> None:
    """tree: home and html nodes, to_dict with their kinds."""
    french_site(site)
    run = await tree(site.url("/"), html=True)
    kinds = [n["kind"] for n in json.loads(json.dumps(run.to_dict()))["tree"][0]["children"]]
    assert "home" in kinds
    assert run.error is None
    assert isinstance(UrlRecord("https://e.com/", source="html").to_dict()["source"], str)


def test_cli_html_dump_and_tree() -> None:
    """dump --html (with --parent and --follow-urlset-sitemaps, no-ops here): the HTML
    sitemap's records and the summary line; tree --json shows the home and html kinds;
    check --html does not hold the HTML pages to the sitemap protocol."""
    with ThreadedServer(Site()) as site:
        expected = french_site(site)
        flags = ["--html", "--parent", "--follow-urlset-sitemaps", "--no-progress"]
        dump = [SITEMAP_READER, "dump", site.url("/"), *flags]
        done = subprocess.run(dump, capture_output=True, text=True, env=cli_env(), timeout=60)
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in done.stdout.splitlines()]
        assert [r["url"] for r in records] == expected
        assert {r["source"] for r in records} == {"html"}
        line = f"{site.host}: no XML or text sitemap found: reading HTML sitemap pages"
        assert line in done.stderr
        shown = [SITEMAP_READER, "tree", site.url("/"), "--json", *flags]
        done = subprocess.run(shown, capture_output=True, text=True, env=cli_env(), timeout=60)
        assert done.returncode == 0, done.stderr
        children = json.loads(done.stdout)["tree"][0]["children"]
        home = next(c for c in children if c["kind"] == "home")
        assert [c["kind"] for c in home["children"]] == ["html"]
        checked = [SITEMAP_READER, "check", site.url("/"), "--html", "--no-progress"]
        done = subprocess.run(checked, capture_output=True, text=True, env=cli_env(), timeout=60)
        assert done.returncode == 0, done.stdout  # HTML pages are not held to the protocol


async def test_html_records_get_the_robots_audit_and_the_state(site: Site, tmp_path: Path) -> None:
    """robots.txt (no Sitemap line) disallows /blog/: the HTML record says so; a second
    --state run with changed_only finds the page unchanged and emits nothing."""
    expected = french_site(site)
    site.add("/robots.txt", "User-agent: *\nDisallow: /blog/\n", content_type="text/plain")
    state = tmp_path / "state.db"
    records, _ = await collect(site.url("/"), html=True, state=state)
    verdicts = {r.url: r.robots for r in records}
    assert [r.url for r in records] == expected
    assert verdicts[site.url("/blog/bonjour")] == "disallowed"
    assert verdicts[site.url("/a-propos")] == "allowed"
    again, run = await collect(site.url("/"), html=True, state=state, changed_only=True)
    assert again == []
    assert run.stats.urls_unchanged == len(expected)
