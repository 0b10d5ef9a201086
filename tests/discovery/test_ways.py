"""The opt-in ways into a site (discovery/ways.py), on the harness: a subdomain's
parent, the HTML way in (home page, usual paths), sitemaps listed in a urlset."""

from __future__ import annotations

from typing import Any

from sitemap_reader.discovery import Discovery, classify
from sitemap_reader.discovery.ways import PinnedScope, parent_domain, twin_host
from sitemap_reader.options import Options
from tests.discovery.test_core import BASE, NS, Bodies, Harness, urlset

DOCS = "https://docs.site.example"


def walk(target: str, bodies: Bodies, **options: Any) -> Harness:
    """Run the core over ``bodies`` for ``target``; the finished harness."""
    harness = Harness(Discovery([classify(target)], Options.of(**options)), bodies)
    harness.run()
    return harness


def test_a_subdomain_without_sitemaps_reads_its_parents() -> None:
    """parent: docs.site.example finds nothing; site.example's sitemaps are read, and
    only the URLs under docs.site.example are kept (the parent cannot widen the scope)."""
    entries = "".join(
        f"<url><loc>{u}</loc></url>" for u in (DOCS + "/guide", BASE + "/shop", DOCS + "/api")
    )
    bodies: Bodies = {
        "/robots.txt": f"Sitemap: {BASE}/s.xml\n".encode(),
        "/s.xml": f"<urlset {NS}>{entries}</urlset>".encode(),
    }
    assert walk(DOCS + "/", bodies).records == []
    harness = walk(DOCS + "/", bodies, parent=True)
    assert [r.url for r in harness.records] == [DOCS + "/guide", DOCS + "/api"]
    root = harness.core.run.tree[0]
    assert "parent-sitemaps" in [p.code for p in root.problems]
    assert root.children[-1].url == BASE + "/robots.txt" and root.children[-1].kind == "robots"
    assert harness.core.stats.urls_out_of_scope == 1 and harness.core.run.error is None


def test_the_usual_html_paths_are_probed_when_the_home_page_names_none() -> None:
    """html fallback: no XML sitemap, a home page naming no site map: the usual paths
    are probed; the one that is an HTML page becomes kind ``html``; its links are records."""
    page = "<main><a href='/a'>a</a><a href='/b'>b</a></main>"
    bodies: Bodies = {"/robots.txt": 404, "/": b"<html><body>hi</body></html>"}
    bodies["/site-map"] = page.encode()
    harness = walk(BASE + "/", bodies, html="fallback")
    assert [(r.url, r.source) for r in harness.records] == [
        (BASE + "/a", "html"),
        (BASE + "/b", "html"),
    ]
    kinds = {n.url.removeprefix(BASE): n.kind for n in harness.core.run.nodes()}
    assert kinds["/"] == "home" and kinds["/site-map"] == "html"
    assert kinds["/sitemap.html"] == "html-guess"  # a miss keeps its kind: skipped
    root = harness.core.run.tree[0]
    assert [p.code for p in root.problems] == ["twin-host", "html-fallback"]  # the twin first


def test_a_listed_loc_is_a_sitemap_or_a_page() -> None:
    """follow_urlset_sitemaps: a .xml loc whose body is a sitemap is read as one (kind
    ``sitemap``); one whose body is not is emitted as the page it is."""
    bodies: Bodies = {
        "/s.xml": urlset("/x.xml", "/page.xml", "/c"),
        "/x.xml": urlset("/from-x"),
        "/page.xml": b"<html><body>a page after all</body></html>",
    }
    harness = walk(BASE + "/s.xml", bodies, follow_urlset_sitemaps=True)
    assert [r.url.removeprefix(BASE) for r in harness.records] == ["/c", "/from-x", "/page.xml"]
    nodes = {n.url.removeprefix(BASE): n for n in harness.core.run.nodes()}
    assert nodes["/x.xml"].kind == "sitemap" and nodes["/x.xml"].ok
    assert nodes["/page.xml"].kind == "listed"
    assert str(nodes["/page.xml"].skipped) == "not a sitemap: kept as a page"


def test_a_sitemap_target_that_is_an_html_page() -> None:
    """html on, a target given as a sitemap URL that is an HTML page: read as one (the
    node becomes kind ``html``, its records say so)."""
    bodies: Bodies = {"/pages": b"<html><body><main><a href='/a'>a</a></main></body></html>"}
    harness = walk(BASE + "/pages", bodies, html="fallback")
    assert [(r.url, r.source) for r in harness.records] == [(BASE + "/a", "html")]
    assert harness.core.run.tree[0].kind == "html"


def test_a_pinned_scope_cannot_be_widened() -> None:
    """The parent's robots.txt does not vouch for its own host: the scope stays put."""
    scope = PinnedScope("docs.site.example")
    scope.add_host("site.example")
    assert scope.allows(DOCS + "/a", None) and not scope.allows(BASE + "/a", None)
    assert parent_domain("docs.site.example") == "site.example"


WWW = "https://www.site.example"


def test_a_bare_domain_without_sitemaps_reads_its_www_twin() -> None:
    """twin: site.example lists nothing and has none at the usual paths; the robots.txt
    of www.site.example lists one: its records come out (the scope keeps both hosts), and
    one line on the root says the twin was tried (before, nothing was found)."""
    bodies: Bodies = {
        WWW + "/robots.txt": f"Sitemap: {WWW}/s.xml\n".encode(),
        WWW + "/s.xml": f"<urlset {NS}><url><loc>{WWW}/a</loc></url></urlset>".encode(),
    }
    harness = walk("site.example", bodies, html="fallback")
    assert [r.url for r in harness.records] == [WWW + "/a"]
    root = harness.core.run.tree[0]
    assert [(p.code, p.message) for p in root.problems] == [
        ("twin-host", "no sitemap on site.example: trying its twin www.site.example")
    ]  # and no HTML fallback: the twin found a sitemap
    assert (root.children[-1].url, root.children[-1].kind) == (WWW + "/robots.txt", "robots")
    assert walk("site.example", bodies, twin=False).records == []


def test_a_www_host_reads_its_bare_twin_at_the_usual_paths() -> None:
    """twin: www.site.example has nothing; site.example has no robots.txt but a
    /sitemap.xml: the twin's well-known paths are probed as the host's own would be."""
    bodies: Bodies = {"/sitemap.xml": urlset("/a", "/b")}
    harness = walk(WWW + "/", bodies)
    assert [r.url for r in harness.records] == [BASE + "/a", BASE + "/b"]
    assert "twin-host" in [p.code for p in harness.core.run.tree[0].problems]


def test_the_twin_is_not_tried_when_the_host_has_a_sitemap_or_none() -> None:
    """A host with a sitemap never fetches its twin; a subdomain other than www has no
    twin; an IP address neither."""
    found = walk(
        BASE + "/", {"/robots.txt": f"Sitemap: {BASE}/s.xml\n".encode(), "/s.xml": urlset("/a")}
    )
    assert not any(url.startswith(WWW) for url in found.fetched)
    docs = walk(DOCS + "/", {})
    assert not any("www." in url for url in docs.fetched)
    assert "twin-host" not in [p.code for p in docs.core.run.tree[0].problems]
    assert (twin_host("site.example"), twin_host("www.site.example")) == (
        "www.site.example",
        "site.example",
    )
    assert [
        twin_host(h) for h in ("docs.site.example", "127.0.0.1", "[::1]", "localhost", "www.")
    ] == [None] * 5


def test_parent_never_leaves_the_registrable_domain() -> None:
    """parent: example.co.uk, example.com.au and alice.github.io have no parent (before,
    co.uk, com.au and github.io were read: other parties' hosts); a deeper subdomain
    climbs to its registrable domain, never past it."""
    assert [parent_domain(h) for h in ("example.co.uk", "example.com.au", "alice.github.io")] == [
        None
    ] * 3
    assert parent_domain("docs.example.co.uk") == "example.co.uk"
    assert parent_domain("api.docs.alice.github.io") == "docs.alice.github.io"
    pages = "https://alice.github.io"
    harness = walk(pages + "/", {}, parent=True, twin=False)
    assert not any("//github.io" in url for url in harness.fetched)
    assert "parent-sitemaps" not in [p.code for p in harness.core.run.tree[0].problems]
