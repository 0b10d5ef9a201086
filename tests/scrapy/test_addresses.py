"""The Scrapy private-address guard (issue 10 §6), on real crawls of a site on 127.0.0.1.

The crawl's resolver (tests/scrapy/fake_dns.py) maps made-up names to 127.0.0.1, so a
"public" target, ``public.example``, can be crawled while its robots.txt, its index, a
redirect and a page point at loopback in every way: an IP literal, a name resolving to
loopback, ``localhost``, a numeric spelling. By default (the typed target may resolve
anywhere, everything it names must be public) each of those is refused before any request
and reported; SITEMAP_READER_ALLOW_PRIVATE=True lets them through, False is the default, and
"never" refuses the typed targets too.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from scrapy.utils.test import get_crawler

from sitemap_reader.options.declare import PrivateSetting
from sitemap_reader.scrapy import Addon, SitemapReaderMixin
from sitemap_reader.scrapy.addresses import (
    GUARD_ORDER,
    SETTING,
    Policy,
    PrivateAddressMiddleware,
)
from sitemap_reader.scrapy.settings import options_from_settings
from tests.scrapy.test_scrapy import Crawl, run_crawl
from tests.scrapy.testsite import ServerThread

_NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
#: The crawl's resolver and options: scope "any", so a page on a private address is only
#: stopped by the guard.
RESOLVER = '"tests.scrapy.fake_dns.FakeResolver"'
COMMON = ("--set", f"TWISTED_DNS_RESOLVER={RESOLVER}", "--set", 'SITEMAP_READER_SCOPE="any"')
GUARD_BY_HAND = (
    "--set",
    'DOWNLOADER_MIDDLEWARES={"sitemap_reader.scrapy.addresses.PrivateAddressMiddleware": 80}',
)
#: Each way the public target's documents reach loopback: its sitemap path on the site.
SECRETS = {
    "literal": "/secret-literal.xml",  # http://127.0.0.1:PORT/ in the index
    "name": "/secret-name.xml",  # internal.example, resolving to 127.0.0.1
    "localhost": "/secret-localhost.xml",
    "numeric": "/secret-numeric.xml",  # http://2130706433:PORT/
    "robots-numeric": "/secret-robots.xml",  # http://0177.0.0.1:PORT/ in robots.txt
    "redirect": "/secret-redirect.xml",  # a 302 from public.example to internal.example
}
NUMERIC = {"numeric", "robots-numeric"}


def _urlset(*urls: str) -> str:
    entries = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    return f'<?xml version="1.0"?>\n<urlset {_NS}>{entries}</urlset>\n'


def _index(*urls: str) -> str:
    entries = "".join(f"<sitemap><loc>{u}</loc></sitemap>" for u in urls)
    return f'<?xml version="1.0"?>\n<sitemapindex {_NS}>{entries}</sitemapindex>\n'


def make_app(hits: Counter[str]) -> web.Application:
    """The public-named site; ``hits`` counts the requests per path."""

    async def handle(request: web.Request) -> web.StreamResponse:
        hits[request.path] += 1
        port = request.url.port
        pub = f"http://public.example:{port}"
        docs = {
            "/robots.txt": f"Sitemap: {pub}/index.xml\n"
            f"Sitemap: http://0177.0.0.1:{port}{SECRETS['robots-numeric']}\n",
            "/index.xml": _index(
                f"{pub}/good.xml",
                f"http://127.0.0.1:{port}{SECRETS['literal']}",
                f"http://internal.example:{port}{SECRETS['name']}",
                f"http://localhost:{port}{SECRETS['localhost']}",
                f"http://2130706433:{port}{SECRETS['numeric']}",
                f"{pub}/to-internal.xml",
            ),
            "/good.xml": _urlset(f"{pub}/page", f"http://127.0.0.1:{port}/private-page"),
        }
        if request.path == "/to-internal.xml":
            raise web.HTTPFound(f"http://internal.example:{port}{SECRETS['redirect']}")
        if request.path in SECRETS.values():
            name = request.path.removesuffix(".xml")
            return web.Response(text=_urlset(f"{pub}{name}-page"), content_type="application/xml")
        if request.path in docs:
            kind = "text/plain" if request.path.endswith(".txt") else "application/xml"
            return web.Response(text=docs[request.path], content_type=kind)
        return web.Response(text="<html>page</html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app


@pytest.fixture
def site() -> Iterator[tuple[str, Counter[str]]]:
    """The site on 127.0.0.1 (a fresh hit counter per test); its port and the counter."""
    hits: Counter[str] = Counter()
    with ServerThread(make_app(hits)) as origin:
        yield origin.rsplit(":", 1)[1], hits


def blocked_stat(crawl: Crawl) -> int:
    """The ``sitemap_reader/problems/blocked`` stat from the crawl's stats dump."""
    found = re.search(r"'sitemap_reader/problems/blocked': (\d+)", crawl.log)
    return int(found.group(1)) if found else 0


def crawl_public(mode: str, port: str, out: Path, *options: str) -> tuple[Crawl, float]:
    """Crawl http://public.example:PORT/ in ``mode``; the crawl and its seconds."""
    target = f"http://public.example:{port}/"
    started = time.monotonic()
    crawl = run_crawl(mode, target.rstrip("/"), out, "--target", target, *COMMON, *options)
    return crawl, time.monotonic() - started


@pytest.mark.parametrize(
    ("mode", "setting"),
    [("addon", ()), ("mixin", ()), ("middleware", ()), ("addon", ("--set", f"{SETTING}=false"))],
    ids=["addon", "mixin", "middleware", "addon-False"],
)
def test_public_target_never_reaches_loopback(
    mode: str, setting: tuple[str, ...], site: tuple[str, Counter[str]], tmp_path: Path
) -> None:
    """Default policy (the setting unset, or False: the same): every child, Sitemap: line,
    redirect and page that leads to loopback is refused before a request and logged as
    blocked; the good page is still crawled (the typed name itself is trusted)."""
    port, hits = site
    extra = GUARD_BY_HAND if mode == "middleware" else ()
    crawl, seconds = crawl_public(mode, port, tmp_path / "pages.jsonl", *extra, *setting)
    assert crawl.paths == ["/page"], crawl.log[-3000:]
    for path in SECRETS.values():
        assert hits[path] == 0, path
        assert re.search(rf"{re.escape(path)}: blocked: refused", crawl.log), path
    assert hits["/private-page"] == 0 and "/private-page: blocked" in crawl.log
    assert "internal.example resolves to 127.0.0.1" in crawl.log
    assert "it means 127.0.0.1" in crawl.log
    assert blocked_stat(crawl) == len(SECRETS) + 1
    assert hits["/index.xml"] == 1 and hits["/good.xml"] == 1
    assert seconds < 60


def test_allow_private_lets_everything_through(
    site: tuple[str, Counter[str]], tmp_path: Path
) -> None:
    """SITEMAP_READER_ALLOW_PRIVATE=True: the loopback children and page are crawled; odd
    numeric spellings are still refused (their meaning depends on the reader)."""
    port, hits = site
    options = ("--set", "SITEMAP_READER_ALLOW_PRIVATE=true")
    crawl, _ = crawl_public("addon", port, tmp_path / "pages.jsonl", *options)
    expected = {"/page", f"http://127.0.0.1:{port}/private-page"} | {
        path.removesuffix(".xml") + "-page" for key, path in SECRETS.items() if key not in NUMERIC
    }
    assert set(crawl.paths) == expected, crawl.log[-3000:]
    assert all(hits[SECRETS[key]] == 1 for key in SECRETS if key not in NUMERIC)
    assert all(hits[SECRETS[key]] == 0 for key in NUMERIC)
    assert blocked_stat(crawl) == len(NUMERIC)


def test_never_refuses_the_target_itself(site: tuple[str, Counter[str]], tmp_path: Path) -> None:
    """SITEMAP_READER_ALLOW_PRIVATE="never": the typed name resolving to loopback is refused
    too; nothing is requested from the site at all."""
    port, hits = site
    options = ("--set", f'{SETTING}="never"')
    crawl, _ = crawl_public("mixin", port, tmp_path / "pages.jsonl", *options)
    assert crawl.pages == []
    assert sum(hits.values()) == 0
    assert "public.example resolves to 127.0.0.1" in crawl.log
    assert blocked_stat(crawl) >= 1


#: The default policy's decisions (target number, URL, refused, name left to resolve).
_DEFAULT = [
    (1, "http://127.0.0.1/s.xml", True, None),
    (1, "http://10.1.2.3/s.xml", True, None),
    (1, "http://93.184.216.34/s.xml", False, None),
    (1, "http://other.example/s.xml", False, "other.example"),
    (1, "http://site.example/s.xml", False, None),  # the typed name: trusted
    (0, "http://10.1.2.3/s.xml", False, None),  # a private target's own site
    (0, "http://127.0.0.1/s.xml", False, None),
    (None, "http://127.0.0.1/s.xml", True, None),  # no target said: not every one is open
    (2, "http://site.example/s.xml", False, "site.example"),  # another target's typed name
    (2, "http://127.0.0.1/s.xml", True, None),  # target 0 is private: not target 2
    (1, "http://[::1]/s.xml", True, None),
    (1, "http://0x7f.1/s.xml", True, None),
]


@pytest.mark.parametrize(
    ("allow", "target", "url", "refused", "resolve"),
    [(allow, *case) for allow in (None, False) for case in _DEFAULT]
    + [
        (True, 1, "http://127.0.0.1/s.xml", False, None),
        (True, 1, "http://127.1/s.xml", True, None),
        ("never", 1, "http://site.example/s.xml", False, "site.example"),
        ("never", 0, "http://127.0.0.1/s.xml", True, None),
        ("never", None, "http://127.0.0.1/s.xml", True, None),
        (True, None, "http://127.0.0.1/s.xml", False, None),
        ("never", 1, "http://93.184.216.34/s.xml", False, None),
    ],
)
def test_policy_decisions(
    allow: PrivateSetting, target: int | None, url: str, refused: bool, resolve: str | None
) -> None:
    """The policy per request, by the request's own target: literals judged at once, names
    left to the resolver check; False decides exactly as None."""
    policy = Policy(allow, ["http://127.0.0.1:8080/", "site.example", "other.example"])
    reason, name = policy.refusal(url, target)
    assert (reason is not None, name) == (refused, resolve), reason


def test_mixin_and_addon_enable_the_guard() -> None:
    """The add-on and the mixin put the guard in DOWNLOADER_MIDDLEWARES; a hand-wired start
    middleware without it logs that the guard is off."""
    from scrapy.settings import Settings

    settings = Settings()
    Addon().update_settings(settings)
    assert settings.getdict("DOWNLOADER_MIDDLEWARES")[PrivateAddressMiddleware] == GUARD_ORDER

    class Spider(SitemapReaderMixin):
        name = "guarded"

    crawler = get_crawler(Spider)
    enabled = crawler.settings.getdict("DOWNLOADER_MIDDLEWARES")
    assert enabled[PrivateAddressMiddleware] == GUARD_ORDER


def test_start_middleware_without_guard_warns(caplog: pytest.LogCaptureFixture) -> None:
    """SitemapStartMiddleware enabled by hand without the guard warns once at start."""
    from scrapy import Spider

    from sitemap_reader.scrapy import SitemapStartMiddleware

    crawler = get_crawler(Spider, {"SITEMAP_READER_TARGETS": ["site.example"]})
    with caplog.at_level("WARNING", logger="sitemap_reader.scrapy"):
        SitemapStartMiddleware(crawler)
    assert "private-address guard is off" in caplog.text


def test_guard_knows_discoverys_meta_keys() -> None:
    """The guard recognises discovery's requests by the same meta keys discovery sets."""
    from sitemap_reader.scrapy import META_KEY, SITEMAP_META_KEY
    from sitemap_reader.scrapy import addresses as guard

    assert (guard._SITEMAP_META, guard._PAGE_META) == (SITEMAP_META_KEY, META_KEY)


@pytest.mark.parametrize(
    ("value", "private"),
    [
        (None, False),
        (False, False),
        ("false", False),
        ("0", False),
        (True, True),
        ("True", True),
        ("never", "never"),
        (" NEVER ", "never"),
    ],
)
def test_the_setting_maps_to_allow_private(value: object, private: PrivateSetting) -> None:
    """SITEMAP_READER_ALLOW_PRIVATE: unset and False give the default, True allows every
    address, "never" (any case) guards the typed targets too."""
    from scrapy.settings import Settings

    settings = Settings({SETTING: value} if value is not None else {})
    assert options_from_settings(settings)[0].network.allow_private == private


def test_a_setting_of_another_word_is_refused() -> None:
    """A value that is neither a boolean nor "never" is an error, not a guess."""
    from scrapy.settings import Settings

    with pytest.raises(ValueError, match=r"^SITEMAP_READER_ALLOW_PRIVATE: expected True, False or"):
        options_from_settings(Settings({SETTING: "sometimes"}))


def _loopback_crawl(port: str, out: Path, *options: str) -> Crawl:
    """Crawl the typed loopback target http://127.0.0.1:PORT/good.xml (the mixin)."""
    target = f"http://127.0.0.1:{port}/good.xml"
    return run_crawl(
        "mixin", f"http://127.0.0.1:{port}", out, "--target", target, *COMMON, *options
    )


@pytest.mark.parametrize(
    "options",
    [(), ("--set", f"{SETTING}=false"), ("--set", f'{SETTING}="False"')],
    ids=["unset", "False", "False-text"],
)
def test_a_loopback_target_is_crawled_by_default(
    options: tuple[str, ...], site: tuple[str, Counter[str]], tmp_path: Path
) -> None:
    """A typed loopback target (the setting unset or False, the same default): its site is
    not guarded, so its sitemap and both its pages are crawled, nothing is blocked."""
    port, hits = site
    crawl = _loopback_crawl(port, tmp_path / "pages.jsonl", *options)
    assert sorted(crawl.paths) == ["/private-page", f"http://public.example:{port}/page"]
    assert hits["/good.xml"] == 1 and hits["/private-page"] == 1
    assert blocked_stat(crawl) == 0


def test_never_refuses_a_loopback_target(site: tuple[str, Counter[str]], tmp_path: Path) -> None:
    """SITEMAP_READER_ALLOW_PRIVATE="never": the typed loopback target is refused before
    any request."""
    port, hits = site
    crawl = _loopback_crawl(port, tmp_path / "pages.jsonl", "--set", f'{SETTING}="never"')
    assert crawl.pages == []
    assert sum(hits.values()) == 0
    assert "non-public address 127.0.0.1" in crawl.log
    assert blocked_stat(crawl) >= 1


@pytest.mark.parametrize("mode", ["mixin", "addon"])
def test_a_typed_name_is_trusted_for_its_own_target_only(
    mode: str, site: tuple[str, Counter[str]], tmp_path: Path
) -> None:
    """Two targets: internal.example (typed: its own sitemap is read) and public.example,
    whose index lists a child on internal.example and redirects to it: refused for
    public.example, never fetched on the other target's trust."""
    port, hits = site
    internal = f"http://internal.example:{port}/good.xml"
    crawl, _ = crawl_public(mode, port, tmp_path / "pages.jsonl", "--also", internal)
    assert hits[SECRETS["name"]] == hits[SECRETS["redirect"]] == 0, crawl.log[-3000:]
    assert "internal.example resolves to 127.0.0.1" in crawl.log
    assert hits["/good.xml"] == 2  # public.example's child and internal.example's target


@pytest.mark.parametrize("mode", ["mixin", "addon"])
def test_a_private_targets_pages_free_no_other_targets(
    mode: str, site: tuple[str, Counter[str]], tmp_path: Path
) -> None:
    """A loopback target beside public.example: public.example's page on 127.0.0.1 is
    still refused (a page is judged by the site of its own target)."""
    port, hits = site
    loopback = f"http://127.0.0.1:{port}{SECRETS['literal']}"
    crawl, _ = crawl_public(mode, port, tmp_path / "pages.jsonl", "--also", loopback)
    assert hits[SECRETS["literal"]] == 1  # the loopback target's own sitemap
    assert hits["/private-page"] == 0, crawl.log[-3000:]
    assert "/private-page: blocked" in crawl.log
