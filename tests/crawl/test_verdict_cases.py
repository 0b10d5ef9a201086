"""Three verdicts the verdict benchmark (benchmarks/verdicts.py) found wrong, each on a
loopback site: a site without sitemaps whose home page is a 404, read with the HTML
fallback; a parked domain (one page at every path); a server answering 429 to everything."""

from __future__ import annotations

from aiohttp import web

from tests.crawl.crawl_kit import Site, tree


async def test_a_home_page_404_leaves_a_site_without_sitemaps_absent(site: Site) -> None:
    """html="fallback", 404 everywhere (the home page too): absent, not broken."""
    run = await tree(site.url("/"), html="fallback", twin=False)
    assert run.verdicts[site.url("/")].kind == "absent"


async def test_a_parked_domain_is_absent(site: Site) -> None:
    """The same "for sale" page at every path, robots.txt and the HTML site map's usual
    paths included: absent (no site map listed anything), not empty."""

    async def parked(request: web.Request) -> web.Response:
        page = "<html><title>for sale</title><h1>This domain is parked</h1></html>"
        return web.Response(text=page, content_type="text/html")

    site.add("*", parked)
    run = await tree(site.url("/"), html="fallback", twin=False)
    assert run.verdicts[site.url("/")].kind == "absent"


async def test_a_429_at_every_path_is_broken_not_absent(site: Site) -> None:
    """429 with no block's signature, after the retries, at every path: nothing can be
    said of the sitemaps' absence: broken, as a 5xx robots.txt."""

    async def busy(request: web.Request) -> web.Response:
        return web.Response(status=429, text="Too Many Requests")

    site.add("*", busy)
    run = await tree(site.url("/"), twin=False, retries=0)
    verdict = run.verdicts[site.url("/")]
    assert verdict.kind == "broken"
