"""The robots.txt job of the discovery core, driven by hand (issues 25, 24.3, 18.8, 22.4):
RFC 9309 groups in the audit and the crawl delay, an unreachable robots.txt, an HTML page
served as robots.txt, a robots.txt whose sitemaps all fail, a refused redirect, follow."""

from __future__ import annotations

import pytest

from sitemap_reader.discovery import Discovery, Fetch, Schedule, classify
from sitemap_reader.errors import UsageError
from sitemap_reader.options import Options
from sitemap_reader.records import UrlRecord
from tests.discovery.test_core import BASE, Bodies, Harness, index, urlset

SITE = classify(BASE + "/")


def walk(bodies: Bodies, **config: object) -> Harness:
    """Run the core over ``bodies`` for the site target; the finished harness."""
    harness = Harness(Discovery([SITE], Options.of(**config)), bodies)  # type: ignore[arg-type]
    harness.run()
    return harness


def verdicts(records: list[UrlRecord]) -> dict[str, str | None]:
    """Each record's robots audit, by path."""
    return {r.url.removeprefix(BASE): r.robots for r in records}


def codes(harness: Harness) -> list[str]:
    """The problem codes of the robots.txt node."""
    return [p.code for p in harness.core.run.tree[0].problems]


@pytest.mark.parametrize(
    ("robots", "delays", "paths"),
    [
        (  # a Crawl-delay between the user-agent lines: one group of both agents
            "User-agent: mybot\nCrawl-delay: 10\nUser-agent: yourbot\nDisallow: /private/\n",
            {"mybot": 10.0, "yourbot": None},
            ("/open", "/private/x"),
        ),
        (  # Request-rate and an unknown record between them, then a group for the others
            "User-agent: bingbot\nRequest-rate: 1/5s\nX-Unknown: y\nUser-agent: msnbot\n"
            "Disallow: /private/\n\nUser-agent: *\nDisallow:\n",
            {"bingbot": 5.0, "msnbot": None},
            ("/open", "/private/x"),
        ),
    ],
    ids=["crawl-delay", "bing-msn"],
)
def test_groups_in_the_audit_and_the_delay(
    robots: str, delays: dict[str, float | None], paths: tuple[str, str]
) -> None:
    """RFC 9309 2.2: records between user-agent lines keep one group: its rule binds every
    agent of it in the audit; a pacing line binds only the agents named before it (as
    crawler-commons reads it); other agents keep their own group."""
    body = f"{robots}Sitemap: {BASE}/s.xml\n".encode()
    bodies: Bodies = {"/robots.txt": body, "/s.xml": urlset(*paths)}
    for agent, delay in delays.items():
        harness = walk(bodies, user_agent=agent)
        assert verdicts(harness.records) == {paths[0]: "allowed", paths[1]: "disallowed"}
        assert harness.core.delay_for(BASE + "/x") == (delay or 0.0), agent
    if "*" in robots:
        other = walk(bodies, user_agent="otherbot")
        assert set(verdicts(other.records).values()) == {"allowed"}


def test_robots_agent_names_the_group_read() -> None:
    """robots_agent: the rules (and delay) of its group apply whatever the User-Agent
    sent; without it, the User-Agent's own group does."""
    robots = "User-agent: mybot\nCrawl-delay: 3\nDisallow: /private/\n"
    body = f"{robots}Sitemap: {BASE}/s.xml\n".encode()
    bodies: Bodies = {"/robots.txt": body, "/s.xml": urlset("/open", "/private/x")}
    named = walk(bodies, user_agent="Mozilla/5.0 (compatible)", robots_agent="mybot")
    assert verdicts(named.records) == {"/open": "allowed", "/private/x": "disallowed"}
    assert named.core.delay_for(BASE + "/x") == 3.0
    unnamed = walk(bodies, user_agent="Mozilla/5.0 (compatible)")
    assert set(verdicts(unnamed.records).values()) == {"allowed"}
    assert unnamed.core.delay_for(BASE + "/x") == 0.0


@pytest.mark.parametrize("status", [500, 503])
def test_5xx_robots_disallows_everything(status: int) -> None:
    """A robots.txt answering 5xx: every record of the origin is disallowed (obey drops
    them), the reason on the node; the well-known paths are still probed."""
    bodies: Bodies = {"/robots.txt": status, "/sitemap.xml": urlset("/a", "/b")}
    harness = walk(bodies)
    assert verdicts(harness.records) == {"/a": "disallowed", "/b": "disallowed"}
    root = harness.core.run.tree[0]
    assert root.reason == (
        f"robots.txt unavailable (HTTP {status}): everything disallowed until it answers"
    )
    assert harness.core.stats.urls_disallowed == 2
    assert walk(bodies, obey_robots=True).records == []


def test_4xx_robots_allows_everything() -> None:
    """A robots.txt answering 404 restricts nothing: records are kept, not disallowed."""
    harness = walk({"/sitemap.xml": urlset("/a")}, obey_robots=True)
    assert [r.url for r in harness.records] == [BASE + "/a"]
    assert harness.core.run.tree[0].reason is None


def test_unreachable_robots_after_connecting_disallows_everything() -> None:
    """A robots.txt fetch that timed out (a network error once connected): disallow all."""
    core = Discovery([SITE])
    (schedule,) = core.start()
    assert isinstance(schedule, Schedule)
    (fetch,) = core.begin(schedule.ticket)
    assert isinstance(fetch, Fetch)
    actions = core.failure(fetch.ticket, "timeout", "no answer within 30 s")
    assert sum(isinstance(a, Schedule) for a in actions) == 6  # the well-known paths
    site = core.sites[0]
    assert site.audit.verdict(BASE + "/a") == "disallowed"
    assert core.run.tree[0].problems[0].code == "robots-unavailable"


def test_html_robots_yields_no_bare_url_sitemaps() -> None:
    """An HTML page served as robots.txt: its link lines are not sitemaps; the well-known
    paths are probed and the node says robots.txt is an HTML page."""
    page = (
        "<!DOCTYPE html>\n<html><body>\nhttps://twitter.com/intent/tweet?text=Home&\n"
        f"{BASE}/sitemap-from-a-link.xml\n</body></html>\n"
    )
    bodies: Bodies = {"/robots.txt": page.encode(), "/sitemap.xml": urlset("/a")}
    harness = walk(bodies)
    assert BASE + "/sitemap-from-a-link.xml" not in harness.fetched
    assert [r.url for r in harness.records] == [BASE + "/a"]
    assert codes(harness) == ["robots-html"]


def test_robots_that_leads_nowhere_falls_back_to_well_known_paths() -> None:
    """Every listed sitemap fails (404, not a sitemap): the well-known paths are probed as
    if robots.txt listed none, and the node says so."""
    robots = f"Sitemap: {BASE}/gone.xml\nSitemap: {BASE}/page.xml\n"
    bodies: Bodies = {
        "/robots.txt": robots.encode(),
        "/page.xml": b"<!doctype html><html><body>soft 404</body></html>",
        "/sitemap.xml": urlset("/a", "/b"),
    }
    harness = walk(bodies)
    assert [r.url for r in harness.records] == [BASE + "/a", BASE + "/b"]
    assert "robots-led-nowhere" in codes(harness)
    assert harness.core.run.error is None
    kinds = [c.kind for c in harness.core.run.tree[0].children]
    assert kinds == ["sitemap", "sitemap"] + ["guess"] * 6


def test_robots_with_one_good_sitemap_probes_nothing() -> None:
    """One listed sitemap that works is enough: no well-known path is fetched."""
    robots = f"Sitemap: {BASE}/gone.xml\nSitemap: {BASE}/s.xml\n"
    harness = walk({"/robots.txt": robots.encode(), "/s.xml": urlset("/a")})
    assert harness.fetched == [BASE + "/robots.txt", BASE + "/gone.xml", BASE + "/s.xml"]
    assert "robots-led-nowhere" not in codes(harness)


def test_nowhere_and_no_well_known_sitemap_says_both() -> None:
    """Listed sitemaps and probes all fail: the one-line reason names both."""
    harness = walk({"/robots.txt": f"Sitemap: {BASE}/gone.xml\n".encode()})
    error = harness.core.run.error
    assert error is not None
    assert "robots.txt lists 1 sitemap, none could be read" in error
    assert "nor any of the 6 well-known paths" in error


def test_refused_robots_redirect_probes_the_hosts_own_paths() -> None:
    """robots.txt redirects to an address the guard refuses: only robots.txt is lost; the
    public host's well-known paths are scheduled (not the refused host's)."""
    core = Discovery([classify("site.example")])
    (schedule,) = core.start()
    assert isinstance(schedule, Schedule)
    (fetch,) = core.begin(schedule.ticket)
    assert isinstance(fetch, Fetch)
    assert core.redirect(fetch.ticket, "http://127.0.0.1/robots.txt")
    actions = core.failure(fetch.ticket, "blocked", "127.0.0.1 is private", cannot_connect=True)
    guesses = [core.begin(a.ticket) for a in actions if isinstance(a, Schedule)]
    urls = [f.url for batch in guesses for f in batch if isinstance(f, Fetch)]
    assert urls and all(u.startswith("https://site.example/") for u in urls)
    assert core.sites[0].unreachable is None
    assert core.run.tree[0].problems[0].code == "blocked"


def test_blocked_target_itself_is_still_unreachable() -> None:
    """The guard refusing robots.txt itself (no redirect): the site is unreachable."""
    core = Discovery([classify("https://site.example/")])
    (schedule,) = core.start()
    assert isinstance(schedule, Schedule)
    (fetch,) = core.begin(schedule.ticket)
    assert isinstance(fetch, Fetch)
    actions = core.failure(fetch.ticket, "blocked", "private", cannot_connect=True)
    assert not any(isinstance(a, Schedule) for a in actions)
    assert core.sites[0].unreachable == "private"


def test_follow_filters_only_index_children() -> None:
    """follow (Scrapy's sitemap_follow): the sitemaps robots.txt lists are always read;
    only the children of an index are filtered."""
    robots = f"Sitemap: {BASE}/index.xml\nSitemap: {BASE}/news.xml\n"
    bodies: Bodies = {
        "/robots.txt": robots.encode(),
        "/index.xml": index("/part-01.xml", "/part-02.xml", "/part-03.xml"),
        "/news.xml": urlset("/n"),
        "/part-01.xml": urlset("/1"),
        "/part-02.xml": urlset("/2"),
        "/part-03.xml": urlset("/3"),
    }
    harness = walk(bodies, follow=[r"part-0[12]"])
    assert sorted(r.url.removeprefix(BASE) for r in harness.records) == ["/1", "/2", "/n"]
    assert BASE + "/part-03.xml" not in harness.fetched


def test_follow_function_filters_the_same_children() -> None:
    """follow=function of the URL (usp #105): the same filtering as the regexes, and
    robots.txt's sitemaps are never put to it."""
    bodies: Bodies = {
        "/robots.txt": f"Sitemap: {BASE}/index.xml\n".encode(),
        "/index.xml": index("/part-01.xml", "/part-02.xml"),
        "/part-01.xml": urlset("/1"),
        "/part-02.xml": urlset("/2"),
    }
    asked: list[str] = []

    def wanted(url: str) -> bool:
        asked.append(url)
        return url.endswith("-02.xml")

    harness = walk(bodies, follow=wanted)
    assert [r.url.removeprefix(BASE) for r in harness.records] == ["/2"]
    assert sorted(asked) == [BASE + "/part-01.xml", BASE + "/part-02.xml"]


@pytest.mark.parametrize("bad", ["(", "[a-", "*x"])
def test_bad_pattern_is_a_usage_error(bad: str) -> None:
    """A bad regex given as ``follow`` is a UsageError naming the door and the option."""
    with pytest.raises(UsageError, match=r"^Options: follow: bad regular expression"):
        Options.of(follow=[bad])


def test_bare_domain_falls_back_to_http_in_the_core() -> None:
    """https cannot connect: the core asks for the http URL, with the problem on the node."""
    core = Discovery([classify("site.example")])
    (schedule,) = core.start()
    assert isinstance(schedule, Schedule)
    (fetch,) = core.begin(schedule.ticket)
    assert isinstance(fetch, Fetch) and fetch.url == "https://site.example/robots.txt"
    assert not fetch.retry_connect
    (again,) = core.failure(fetch.ticket, "connect", "refused", cannot_connect=True)
    assert isinstance(again, Fetch) and again.url == "http://site.example/robots.txt"
    assert core.run.tree[0].problems[0].code == "https-unavailable"
