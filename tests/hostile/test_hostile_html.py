"""A hostile HTML sitemap page (issue 24): megabytes of links, deep nesting, private
addresses, javascript:/data: links and the page linking itself under many spellings;
the installed CLI under the RSS wrapper, with --html."""

from __future__ import annotations

from tests.crawl.crawl_kit import Site
from tests.hostile.cli_kit import run_case

HTML = "text/html"
#: Bounds: the CLI alone is about 40 MiB; 4 MiB of markup through html.parser (CPU
#: seconds per process).
MIB = 100
SECONDS = 45.0


def hostile_page(site: Site) -> tuple[str, list[str]]:
    """/sitemap.html: good links first, then everything hostile; the page URL and the
    good URLs."""
    good = [f"/good-{i}" for i in range(10)]
    port = site.host.rsplit(":", 1)[1]
    selves = [
        "/sitemap.html",
        "/sitemap.html#top",
        "/./sitemap.html",
        "/x/../sitemap.html",
        f"http://127.0.0.1:{port}/sitemap.html",
        f"//127.0.0.1:{port}/sitemap.html",
        f"HTTP://127.0.0.1:{port}/%73itemap.html",
        "sitemap.html",
    ]
    odd = [
        "javascript:alert(1)",
        "data:text/html;base64,PHNjcmlwdD4=",
        "http://10.0.0.1/sitemap/admin",
        "http://192.168.1.1/",
        "http://[::1]:1/x",
        "ftp://127.0.0.1/file",
    ]
    head = "".join(f"<a href='{p}'>g</a>" for p in good + selves * 50 + odd * 50)
    nesting = "<div>" * 50_000
    flood = "".join(f"<a href='/p{i}'>p</a>" for i in range(150_000))  # ~5 MB
    body = f"<!doctype html><html><body>{head}{nesting}{flood}</body></html>"
    site.add("/sitemap.html", body.encode(), content_type=HTML)
    site.add("/", "<!doctype html><a href='/sitemap.html'>Site map</a>", content_type=HTML)
    return site.url("/sitemap.html"), [site.url(p) for p in good]


async def test_hostile_html_sitemap_is_bounded(site: Site) -> None:
    """5 MB of links, 50,000 nested divs, private and non-http links, self links: the
    links cap ends the page, the good links are kept, the page is fetched once per run."""
    page, good = hostile_page(site)
    case = await run_case(site.url("/"), "--html")
    urls = case.check(seconds=SECONDS, mib=MIB, good=good)
    assert len(urls) <= 10_000
    assert not any("10.0.0.1" in u or "192.168." in u or "javascript" in u for u in urls)
    assert page not in urls
    node = case.node(page)
    assert node["kind"] == "html" and not node["ok"]
    codes = {p["code"]: p["count"] for p in node["problems"]}
    assert "limit-html-links" in codes and codes["html-not-http"] >= 100
    assert f"problem: {page} limit-html-links" in case.dump.err, case.dump.err[-2000:]
    assert site.hits["/sitemap.html"] == 2  # once by dump, once by tree: never again
    assert not any(path.startswith("/p") for path in site.hits)  # links are not fetched
