"""Ranked output (issue 6): order, the SQLite spill, top=N, the lastmod-lie discount,
custom scorers and revisit intervals, against real servers on 127.0.0.1 (the buffers
themselves, delivery/order.py: tests/delivery/test_order.py)."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime

import pytest

from sitemap_reader.crawl import SitemapReader
from sitemap_reader.errors import UsageError
from sitemap_reader.options.limits import Limits
from sitemap_reader.records import UrlRecord
from sitemap_reader.records.scoring import REVISIT_SECONDS, default_score, order_key
from tests.crawl.crawl_kit import FAST, SITEMAP_NS, Site, collect

FREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")


def serve_random(site: Site, count: int, seed: int = 7) -> str:
    """A urlset of ``count`` URLs with random priority, changefreq and lastmod."""
    rng = random.Random(seed)
    parts = []
    for i in range(count):
        fields = f"<loc>{site.url(f'/p{i}')}</loc>"
        if rng.random() < 0.8:
            fields += f"<priority>{rng.choice([0.1, 0.5, 0.5, 0.9])}</priority>"
        if rng.random() < 0.7:
            fields += f"<changefreq>{rng.choice(FREQS)}</changefreq>"
        if rng.random() < 0.6:
            fields += f"<lastmod>2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}</lastmod>"
        parts.append(f"<url>{fields}</url>")
    body = f'<urlset xmlns="{SITEMAP_NS}">{"".join(parts)}</urlset>'
    site.add("/s.xml", body)
    return site.url("/s.xml")


async def test_ranked_spill_matches_unranked(site: Site) -> None:
    """With a tiny in-memory bound, ranked output is the unranked output, sorted."""
    target = serve_random(site, 300)
    fixed = datetime(2024, 10, 1, tzinfo=UTC)

    def score(r: UrlRecord, now: datetime) -> float:
        return default_score(r.priority, r.changefreq, r.lastmod, fixed)  # same in both runs

    plain, _ = await collect(target, score=score)
    async with SitemapReader(FAST, max_ranked_in_memory=7, score=score) as reader:
        ranked = [r async for r in reader.urls(target, ranked=True)]
    assert len(ranked) == 300
    assert ranked == sorted(plain, key=order_key)
    scores = [r.score for r in ranked]
    assert all(a >= b for a, b in itertools.pairwise(scores))


async def test_top_n(site: Site) -> None:
    """top=N yields the N best, as the full ranking would."""
    target = serve_random(site, 200)
    async with SitemapReader(options=FAST) as reader:
        full = [r.url async for r in reader.urls(target, ranked=True)]
        best = [r.url async for r in reader.urls(target, top=15)]
    assert best == full[:15]


async def test_uniform_lastmod_is_discounted(site: Site) -> None:
    """A sitemap stamping one lastmod on every URL loses its recency bonus; its node
    says so; a sitemap with real dates keeps it."""
    fresh = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S+00:00")
    same = "".join(
        f"<url><loc>{site.url(f'/u{i}')}</loc><lastmod>{fresh}</lastmod></url>" for i in range(60)
    )
    site.add("/uniform.xml", f'<urlset xmlns="{SITEMAP_NS}">{same}</urlset>')
    varied = "".join(
        f"<url><loc>{site.url(f'/v{i}')}</loc><lastmod>2024-01-{1 + i % 28:02d}</lastmod></url>"
        for i in range(60)
    )
    site.add("/varied.xml", f'<urlset xmlns="{SITEMAP_NS}">{varied}</urlset>')
    index = "".join(
        f"<sitemap><loc>{site.url(p)}</loc></sitemap>" for p in ("/uniform.xml", "/varied.xml")
    )
    site.add("/index.xml", f'<sitemapindex xmlns="{SITEMAP_NS}">{index}</sitemapindex>')
    records, run = await collect(site.url("/index.xml"))
    now = datetime.now(UTC)
    uniform = [r for r in records if "/u" in r.url]
    assert len(uniform) == 60  # the held-back first records came out too
    assert {r.score for r in uniform} == {default_score(None, None, None, now)}
    dated = [r for r in records if "/v" in r.url]
    old = default_score(None, None, datetime(2024, 1, 1, tzinfo=UTC), now)
    assert len(dated) == 60 and any(r.score == pytest.approx(old) for r in dated)
    codes = {n.url: [p.code for p in n.problems] for n in run.nodes()}
    assert codes[site.url("/uniform.xml")] == ["uniform-lastmod"]
    assert codes[site.url("/varied.xml")] == []


async def test_small_sitemap_is_released_at_its_end(site: Site) -> None:
    """Fewer records than the hold-back: all of them come out when the sitemap ends."""
    site.add(
        "/s.xml", f'<urlset xmlns="{SITEMAP_NS}"><url><loc>{site.url("/a")}</loc></url></urlset>'
    )
    records, _ = await collect(site.url("/s.xml"))
    assert [r.url for r in records] == [site.url("/a")]


async def test_every_crawled_record_has_a_revisit(site: Site) -> None:
    """The crawler sets a revisit interval on every record, from changefreq."""
    target = serve_random(site, 50)
    records, _ = await collect(target)
    assert all(r.revisit is not None for r in records)
    for record in records:
        assert record.revisit == REVISIT_SECONDS.get(record.changefreq or "", 7 * 86400)
        assert record.to_dict()["revisit"] == round(record.revisit or 0)


async def test_custom_scorer_orders_ranked_output(site: Site) -> None:
    """score= is applied to every record, and ranked output follows it."""
    target = serve_random(site, 40)
    async with SitemapReader(options=FAST, score=lambda r, now: -len(r.url) / 100) as reader:
        ranked = [r async for r in reader.urls(target, ranked=True)]
    assert [r.score for r in ranked] == sorted((-len(r.url) / 100 for r in ranked), reverse=True)
    assert ranked[0].url == site.url("/p0")


async def test_limits_bound_is_named() -> None:
    """The in-memory bound of ranked output lives in Limits."""
    assert Limits().max_ranked_in_memory == 100_000


async def test_ranked_output_keeps_the_filters_of_the_stream(site: Site) -> None:
    """Ranked output merges the copies a URL has in several sitemaps; a copy that since or
    obey_robots leaves out never comes back through that merge: ranked and streamed runs
    give the same URLs."""

    def entry(path: str, day: str) -> str:
        return f"<url><loc>{site.url(path)}</loc><lastmod>{day}</lastmod></url>"

    first = entry("/old", "2023-01-01") + entry("/new", "2025-01-01") + entry("/no/x", "2025-02-01")
    second = entry("/old", "2023-06-01") + entry("/no/x", "2025-03-01")
    robots = f"User-agent: *\nDisallow: /no/\nSitemap: {site.url('/index.xml')}\n"
    site.add("/robots.txt", robots, content_type="text/plain")
    for path, body in (("/a.xml", first), ("/b.xml", second)):
        site.add(path, f'<urlset xmlns="{SITEMAP_NS}">{body}</urlset>'.encode())
    index = "".join(f"<sitemap><loc>{site.url(p)}</loc></sitemap>" for p in ("/a.xml", "/b.xml"))
    site.add("/index.xml", f'<sitemapindex xmlns="{SITEMAP_NS}">{index}</sitemapindex>'.encode())
    options = FAST.replace(since="2024-01-01", obey_robots=True, concurrency=1)
    async with SitemapReader(options) as reader:
        streamed = [r.url async for r in reader.urls(site.url("/"))]
        ranked = [r.url async for r in reader.urls(site.url("/"), ranked=True)]
    assert streamed == ranked == [site.url("/new")]


# --------------------------------------------------------------------------- sample=N


async def test_reader_sample(site: Site) -> None:
    """reader.urls(sample=N, seed=S): N distinct URLs of the site, the same for one seed
    (fetch order aside), another for another seed; sample with ranked, a seed alone, or
    a sample below 1 is refused by name."""
    target = serve_random(site, 200)
    async with SitemapReader(options=FAST) as reader:
        every = {r.url async for r in reader.urls(target)}
        one = [r.url async for r in reader.urls(target, sample=10, seed=1)]
        again = [r.url async for r in reader.urls(target, sample=10, seed=1)]
        other = [r.url async for r in reader.urls(target, sample=10, seed=2)]
        unseeded = [r.url async for r in reader.urls(target, sample=10)]
        for bad, message in (
            ({"sample": 5, "ranked": True}, "sample: a sample has its own order"),
            ({"seed": 3}, "seed goes with sample"),
            ({"sample": 0}, "sample: expected a whole number >= 1"),
        ):
            with pytest.raises(UsageError, match=message):
                [r async for r in reader.urls(target, **bad)]  # type: ignore[arg-type]
    assert one == again and one != other
    assert len(set(one)) == 10 and set(one) <= every and set(unseeded) <= every
