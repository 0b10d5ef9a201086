"""discovery/verdicts.py: every target ends with a verdict and its evidence, read off the
run's tree; each verdict here from a real site on 127.0.0.1 read by the aiohttp reader."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sitemap_reader.records.outcomes import Verdict
from tests.cli.test_commands import ServerFactory
from tests.conftest_cli import stalling_site
from tests.crawl.crawl_kit import FAST, Reply, Site, index, start, tree, urlset
from tests.helpers import closed_port

CHALLENGE = Reply(
    b"<html><head><title>Just a moment...</title></head>"
    b"<script src='/cdn-cgi/challenge-platform/h/b/orchestrate'></script></html>",
    status=403,
    headers={"cf-mitigated": "challenge", "Server": "cloudflare"},
    content_type="text/html",
)


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    """One scripted site on 127.0.0.1."""
    served = Site()
    server = await start(served)
    yield served
    await server.close()


async def verdict(target: str, **options: object) -> Verdict:
    run = await tree(target, options=FAST.replace(**options))
    (only,) = run.verdicts.values()
    return only


async def test_ok_and_partial(site: Site) -> None:
    """A site whose sitemaps were read is ok; one of whose children failed, partial, the
    failure in the evidence."""
    site.add("/robots.txt", f"Sitemap: {site.url('/s.xml')}\n", content_type="text/plain")
    site.add("/s.xml", urlset([site.url("/a"), site.url("/b")]))
    ok = await verdict(site.url("/"))
    assert (ok.kind, ok.urls, ok.evidence) == ("ok", 2, ())
    site.add("/s.xml", index([site.url("/good.xml"), site.url("/bad.xml")]))
    site.add("/good.xml", urlset([site.url("/a")]))
    site.add("/bad.xml", Reply(b"oops", status=500))
    partial = await verdict(site.url("/"), retries=0)
    assert partial.kind == "partial" and partial.urls == 1
    assert [(e.url, e.status) for e in partial.evidence] == [(site.url("/bad.xml"), 500)]


async def test_empty_absent_and_broken(site: Site) -> None:
    """No URL: a sitemap read that lists none is empty; robots.txt listing none and every
    well-known path answering 404 is absent; a listed sitemap that is not one is broken."""
    site.add("/sitemap.xml", urlset([]))
    assert (await verdict(site.url("/"))).kind == "empty"
    del site.routes["/sitemap.xml"]
    absent = await verdict(site.url("/"))
    assert absent.kind == "absent"
    assert absent.evidence and all(e.code == "not-found" for e in absent.evidence)
    site.add("/robots.txt", f"Sitemap: {site.url('/s.xml')}\n", content_type="text/plain")
    site.add("/s.xml", Reply(b"<html><body>a page</body></html>", content_type="text/html"))
    broken = await verdict(site.url("/"))
    assert broken.kind == "broken" and broken.evidence[0].code == "not-a-sitemap"


async def test_a_wall_is_blocked_never_absent(site: Site) -> None:
    """Bot protection answers robots.txt and every well-known path with a challenge: no
    URL, and the verdict is blocked (it was absent or 'not a sitemap' before), with the
    rule, the status and the header that decided."""
    site.add("*", CHALLENGE)
    blocked = await verdict(site.url("/"), retries=0)
    assert blocked.kind == "blocked", blocked
    first = blocked.evidence[0]
    assert first.code == "cloudflare-challenge" and first.status == 403
    assert "cf-mitigated: challenge" in first.seen


async def test_a_login_wall_is_blocked(site: Site) -> None:
    """robots.txt and the sitemap redirect to a login page: blocked by a login page."""
    login = Reply(b"<html><form action='/login'></form></html>", content_type="text/html")
    site.add("/login", login)
    moved = Reply(b"", status=302, headers={"Location": "/login?next=/"})
    site.add("/robots.txt", moved)
    site.add("/sitemap.xml", moved)
    blocked = await verdict(site.url("/sitemap.xml"))
    assert blocked.kind == "blocked" and blocked.evidence[0].code == "login-redirect"


async def test_unreachable_and_refused(site: Site) -> None:
    """A closed port is unreachable; a loopback site with allow_private='never' is refused
    by our own guard (not unreachable: nothing was sent)."""
    with closed_port() as port:
        unreachable = await verdict(f"http://127.0.0.1:{port}/", retries=0)
    assert unreachable.kind == "unreachable"
    site.add("/sitemap.xml", urlset([site.url("/a")]))
    refused = await verdict(site.url("/sitemap.xml"), allow_private="never")
    assert refused.kind == "refused" and refused.evidence[0].code == "blocked"


async def test_a_stopped_run_says_so(aiohttp_server: ServerFactory) -> None:
    """max_urls reached while a sitemap was still being read: stopped, not ok."""
    async with stalling_site(aiohttp_server) as (base, _):
        run = await tree(base + "/sitemap.xml", options=FAST.replace(max_urls=2, timeout=600.0))
    (stopped,) = run.verdicts.values()
    assert stopped.kind == "stopped" and stopped.evidence[0].code == "budget"


@pytest.mark.parametrize("kind", ["ok", "blocked"])
async def test_the_verdict_is_in_the_json(site: Site, kind: str) -> None:
    """``run.to_dict()`` (tree --json, the engines' stats) carries each verdict whole."""
    if kind == "blocked":
        site.add("*", CHALLENGE)
    else:
        site.add("/sitemap.xml", urlset([site.url("/a")]))
    run = await tree(site.url("/sitemap.xml"), options=FAST.replace(retries=0))
    (shown,) = run.to_dict()["verdicts"]
    assert shown["kind"] == kind and shown["target"] == site.url("/sitemap.xml")


async def test_the_python_doors_carry_the_verdicts(site: Site) -> None:
    """A Python caller gets the verdicts as data: on the DiscoveryError of a run that gave
    nothing, and on the loader once its discovery ended."""
    import sitemap_reader as sr

    target = site.url("/")
    async with sr.SitemapReader(FAST) as reader:
        with pytest.raises(sr.DiscoveryError) as raised:
            [r async for r in reader.urls(target)]
    assert raised.value.verdicts[target].kind == "absent"
    site.add("/sitemap.xml", urlset([site.url("/a")]))
    async with sr.SitemapLoader([target], FAST) as loader:
        while await loader.next() is not None:
            pass
    assert loader.verdicts[target].kind == "ok" and loader.verdicts[target].urls == 1
