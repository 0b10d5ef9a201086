"""Records: the JSON shape, datetime formatting, and the fast constructor's equivalence."""

from __future__ import annotations

import dataclasses
import pickle
from datetime import UTC, datetime, timedelta, timezone

import pytest

from sitemap_reader.records import (
    Alternate,
    DataObject,
    Image,
    News,
    Problem,
    RareFields,
    SitemapRef,
    TvShow,
    UrlRecord,
    Video,
    VideoId,
    VideoPrice,
    format_datetime,
    make_alternate,
    make_image,
    url_record_builder,
)


def _scored_half(url: str) -> UrlRecord:
    """A bare record from the fast builder, with score 0.5."""
    build = url_record_builder(lambda priority, changefreq, lastmod: 0.5)
    return build(url, None, None, None, None, (), (), (), None, None)


def test_fast_constructor_equals_dataclass_init() -> None:
    """The record builder builds exactly what UrlRecord(...) builds."""
    args = (
        "https://example.com/",
        datetime(2024, 1, 2, tzinfo=UTC),
        "daily",
        0.5,
        0.4,
        "https://example.com/sitemap.xml",
        (Alternate("de", "https://example.com/de"),),
        (Image("https://example.com/a.jpg"),),
        (Video(title="t"),),
        News(title="n"),
    )
    url, lastmod, freq, prio, score, sitemap, alts, imgs, vids, news = args
    build = url_record_builder(lambda priority, changefreq, lastmod: score)
    fast = build(url, lastmod, freq, prio, sitemap, alts, imgs, vids, news, None)
    slow = UrlRecord(*args)
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)


def test_records_are_frozen() -> None:
    """Records cannot be changed after construction, however they were built."""
    record = _scored_half("https://example.com/")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.url = "x"  # type: ignore[misc]


def test_to_dict_key_order_and_omissions() -> None:
    """to_dict keeps the record's key order (docs/reference/record.md) and leaves out empty
    extensions."""
    record = UrlRecord("https://example.com/a", score=0.123456)
    assert record.to_dict() == {
        "url": "https://example.com/a",
        "lastmod": None,
        "changefreq": None,
        "priority": None,
        "score": 0.1235,
        "sitemap": None,
    }
    full = dataclasses.replace(
        record,
        alternates=(Alternate("de", "https://example.com/de"),),
        videos=(Video(title="T", tags=("a",), duration=5),),
        news=News(title="N", publication_date=datetime(2024, 1, 1, tzinfo=UTC)),
    )
    data = full.to_dict()
    assert list(data)[-3:] == ["alternates", "videos", "news"]
    assert data["videos"] == [{"title": "T", "duration": 5, "tags": ["a"]}]
    assert data["news"] == {"title": "N", "publication_date": "2024-01-01T00:00:00Z"}


def test_format_datetime() -> None:
    """Datetimes print as ISO 8601 with Z in UTC; other offsets are kept as given."""
    assert format_datetime(datetime(2024, 3, 5, 14, 30, tzinfo=UTC)) == "2024-03-05T14:30:00Z"
    plus2 = datetime(2024, 3, 5, 14, 30, tzinfo=timezone(timedelta(hours=2)))
    assert format_datetime(plus2) == "2024-03-05T14:30:00+02:00"
    assert format_datetime(None) is None


def test_sitemap_ref_and_problem_dicts() -> None:
    """SitemapRef and Problem have JSON shapes too."""
    ref = SitemapRef("https://example.com/s.xml", None, "https://example.com/index.xml")
    assert ref.to_dict() == {
        "url": "https://example.com/s.xml",
        "lastmod": None,
        "sitemap": "https://example.com/index.xml",
    }
    assert Problem("bad-url", "x", 3).to_dict() == {"code": "bad-url", "message": "x", "count": 3}


def test_news_validity() -> None:
    """News is valid only with title, publication name, language and date."""
    date = datetime(2024, 1, 1, tzinfo=UTC)
    assert News("T", "Paper", "en", date).valid
    assert not News("T", "", "en", date).valid


def test_fast_constructor_sets_every_field() -> None:
    """A record from the builder has every slot set (the rare fields at their defaults),
    and compares, hashes, pickles, copies and replaces like a UrlRecord(...) one."""
    import copy

    fast = _scored_half("https://example.com/")
    slow = UrlRecord("https://example.com/", score=0.5)
    assert {s: object.__getattribute__(fast, s) for s in UrlRecord.__slots__} == {
        s: object.__getattribute__(slow, s) for s in UrlRecord.__slots__
    }
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert pickle.loads(pickle.dumps(fast)) == slow and copy.copy(fast) == slow
    assert dataclasses.replace(fast, mobile=True).mobile is True
    with pytest.raises(AttributeError):
        fast.no_such_field  # type: ignore[attr-defined]  # noqa: B018


def test_rare_fields_source_and_audit_are_built_in() -> None:
    """The rare fields, the source and the robots verdict are set by the builder; to_dict
    shows them after news, only when set."""
    pagemaps = (DataObject("document", "one", (("name", "Doc"), ("name", "Dup"))),)
    asked: list[str] = []

    def audit(url: str) -> str:
        asked.append(url)
        return "disallowed"

    build = url_record_builder(lambda p, f, m: 0.5, source="html", audit=audit)
    rare = RareFields("A title", True, pagemaps)
    record = build("https://example.com/", None, None, None, None, (), (), (), None, rare)
    assert record == UrlRecord(
        "https://example.com/",
        score=0.5,
        title="A title",
        mobile=True,
        pagemaps=pagemaps,
        robots="disallowed",
        source="html",
    )
    assert asked == ["https://example.com/"]
    data = record.to_dict()
    assert list(data)[-5:] == ["title", "mobile", "pagemaps", "robots", "source"]
    assert data["pagemaps"] == [{"type": "document", "id": "one", "attributes": {"name": "Doc"}}]
    assert pagemaps[0].get("name") == "Doc" and pagemaps[0].get("other") is None


def test_a_record_has_no_finishing_hooks() -> None:
    """Records are built whole: no late defaults on the class, no setters in the module."""
    import sitemap_reader.records as records

    assert "__getattr__" not in vars(UrlRecord)
    assert not [n for n in vars(records) if n.startswith(("set_record", "_SET_", "_LATE"))]


def test_new_extension_values_to_dict() -> None:
    """Video prices, TV show and ids, news access: compact JSON shapes."""
    video = Video(
        title="T",
        prices=(VideoPrice(1.99, "EUR"), VideoPrice(type="rent")),
        tvshow=TvShow(show_title="S", season_number=2),
        ids=(VideoId("x", "url"),),
        gallery_loc="https://example.com/g",
    )
    assert video.to_dict() == {
        "title": "T",
        "gallery_loc": "https://example.com/g",
        "prices": [{"amount": 1.99, "currency": "EUR"}, {"type": "rent"}],
        "tvshow": {"show_title": "S", "season_number": 2},
        "ids": [{"value": "x", "type": "url"}],
    }
    assert News(title="N", access="Subscription").to_dict() == {
        "title": "N",
        "access": "Subscription",
    }


def test_fast_extension_constructors_equal_dataclass_init() -> None:
    """make_alternate and make_image build exactly what Alternate(...) and Image(...) do:
    same type, value, hash and repr, frozen, and picklable."""
    pairs: list[tuple[Alternate | Image, Alternate | Image]] = [
        (make_alternate("de", "https://example.com/de"), Alternate("de", "https://example.com/de")),
        (make_image("https://example.com/a.jpg"), Image("https://example.com/a.jpg")),
    ]
    for fast, slow in pairs:
        assert type(fast) is type(slow)
        assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
        assert pickle.loads(pickle.dumps(fast)) == slow
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(fast, dataclasses.fields(fast)[0].name, "x")


def test_record_builder_equals_dataclass_init() -> None:
    """A url_record_builder record equals UrlRecord(...) with the score and revisit it
    computes, is exactly a UrlRecord, stays frozen and survives pickling and replace."""
    build = url_record_builder(lambda p, f, m: 0.25, {"daily": 86400.0}, 604800.0)
    stamp = datetime(2024, 1, 2, tzinfo=UTC)
    alternates = (Alternate("de", "https://example.com/de"),)
    fast = build("https://example.com/", stamp, "daily", 0.7, "s", alternates, (), (), None, None)
    slow = UrlRecord(
        "https://example.com/", stamp, "daily", 0.7, 0.25, "s", alternates, revisit=86400.0
    )
    assert type(fast) is UrlRecord
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert fast.to_dict() == slow.to_dict()
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert dataclasses.replace(fast, score=0.5) == dataclasses.replace(slow, score=0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.score = 1.0  # type: ignore[misc]


# --------------------------------------------------------------------------- built whole

NS = (
    'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
    'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
    'xmlns:xhtml="http://www.w3.org/1999/xhtml" '
    'xmlns:mobile="http://www.google.com/schemas/sitemap-mobile/1.0"'
)
PAGEMAP = (
    '<PageMap xmlns="http://www.google.com/schemas/sitemap-pagemap/1.0">'
    '<DataObject type="document" id="one"><Attribute name="name">Doc</Attribute></DataObject>'
    "</PageMap>"
)


def mixed_urlset(base: str, count: int) -> bytes:
    """Plain entries and entries with each extension and rare field, every tenth under a
    path robots.txt disallows (``/private/``)."""
    entries = []
    for n in range(count):
        path = f"/private/{n}" if n % 10 == 0 else f"/p/{n}"
        extra = ""
        if n % 7 == 1:
            extra = f"<image:image><image:loc>{base}/i/{n}.jpg</image:loc></image:image>"
        elif n % 7 == 2:
            extra = f'<xhtml:link rel="alternate" hreflang="de" href="{base}/de{path}"/>'
        elif n % 7 == 3:
            extra = "<mobile:mobile/>"
        elif n % 7 == 4:
            extra = PAGEMAP
        entries.append(
            f"<url><loc>{base}{path}</loc><lastmod>2001-01-{1 + n % 28:02d}</lastmod>{extra}</url>"
        )
    return f'<?xml version="1.0"?>\n<urlset {NS}>{"".join(entries)}</urlset>\n'.encode()


def unset_slots(records: list[UrlRecord]) -> dict[str, list[str]]:
    """The slots of each record that were never written (read past the class defaults)."""
    missing: dict[str, list[str]] = {}
    for record in records:
        for name in UrlRecord.__slots__:
            try:
                object.__getattribute__(record, name)
            except AttributeError:
                missing.setdefault(record.url, []).append(name)
    return missing


def test_no_slot_is_unset_from_the_parser() -> None:
    """The parser's records (plain, with extensions, mobile, PageMaps; RSS items with a
    title) have every slot written, whatever the path through the builder."""
    from sitemap_reader.parse.parser import SitemapParser

    base = "https://site.example"
    parser = SitemapParser(base + "/s.xml", pagemaps=True)
    records = parser.feed(mixed_urlset(base, 70)) + parser.close()
    feed = SitemapParser(base + "/feed.rss")
    rss = (
        '<rss version="2.0"><channel><title>F</title><item><title>One</title>'
        f"<link>{base}/1</link></item><item><link>{base}/2</link></item></channel></rss>"
    )
    records += feed.feed(rss.encode()) + feed.close()
    urls = [r for r in records if isinstance(r, UrlRecord)]
    assert len(urls) == 72 and unset_slots(urls) == {}
    assert {r.title for r in urls} == {None, "One"} and any(r.mobile for r in urls)
    assert any(r.pagemaps for r in urls) and any(r.images for r in urls)


def test_no_slot_is_unset_from_an_html_page_or_the_robots_audit() -> None:
    """Through the core: the sitemap's records and an HTML sitemap page's come out with
    every slot written, the robots verdict and the source decided as they were built."""
    from sitemap_reader.discovery import Discovery, classify
    from sitemap_reader.options import Options
    from tests.discovery.test_core import BASE, Bodies, Harness

    home = "<html><body><footer><a href='/plan-du-site'>Plan du site</a></footer></body></html>"
    plan = "<html><body><main><a href='/private/x'>x</a><a href='/page'>y</a></main></body></html>"
    bodies: Bodies = {
        "/robots.txt": b"User-agent: *\nDisallow: /private/\n",
        "/sitemap.xml": mixed_urlset(BASE, 70),
        "/": home.encode(),
        "/plan-du-site": plan.encode(),
    }
    core = Discovery([classify(BASE + "/")], Options.of(html="always"))
    harness = Harness(core, bodies)
    harness.run()
    records = harness.records
    pages = [r for r in records if r.source == "html"]
    assert [r.url for r in pages] == [BASE + "/private/x", BASE + "/page"]
    assert len(records) == 72 and unset_slots(records) == {}
    assert {r.url.removeprefix(BASE)[:9]: r.robots for r in records}["/private/"] == "disallowed"
    assert {r.robots for r in records} == {"allowed", "disallowed"}
    disallowed = sum(1 for r in records if r.robots == "disallowed")
    assert core.stats.urls_disallowed == disallowed == 8


async def test_no_slot_is_unset_from_a_parse_worker() -> None:
    """Records parsed in a worker process and rebuilt here (score, robots verdict) have
    every slot written, and equal the records parsed in-process."""
    from sitemap_reader.crawl import SitemapReader
    from tests.crawl.crawl_kit import FAST, Site, start

    site = Site()
    server = await start(site)
    # The pool's first big body starts it and stays here: the second goes to the worker.
    robots = f"Sitemap: {site.url('/first.xml')}\nSitemap: {site.url('/s.xml')}\n"
    site.add("/robots.txt", f"User-agent: *\nDisallow: /private/\n{robots}")
    site.add("/first.xml", mixed_urlset(site.base + "/first", 20))
    site.add("/s.xml", mixed_urlset(site.base, 700))
    runs = []
    try:
        for processes in (0, 1):
            async with SitemapReader(options=FAST, processes=processes) as reader:
                pool = reader.pool
                if pool is not None:  # the test bodies count as large
                    pool.min_bytes, pool.after_bytes = 1024, 1 << 40
                runs.append([r async for r in reader.urls(site.url("/"))])
                assert processes == 0 or (pool is not None and pool.remote_jobs == 1)
    finally:
        await server.close()
    here, there = runs
    assert len(there) == 720 and unset_slots(there) == {}
    assert there == here
    assert sum(1 for r in there if r.robots == "disallowed") == 70  # not /first/private/
