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
    SitemapRef,
    TvShow,
    UrlRecord,
    Video,
    VideoId,
    VideoPrice,
    format_datetime,
    make_alternate,
    make_image,
    set_record_extras,
    url_record_builder,
)


def _scored_half(url: str) -> UrlRecord:
    """A bare record from the fast builder, with score 0.5."""
    build = url_record_builder(lambda priority, changefreq, lastmod: 0.5)
    return build(url, None, None, None, None, (), (), (), None)


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
    fast = build(url, lastmod, freq, prio, sitemap, alts, imgs, vids, news)
    slow = UrlRecord(*args)
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)


def test_records_are_frozen() -> None:
    """Records cannot be changed after construction, however they were built."""
    record = _scored_half("https://example.com/")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.url = "x"  # type: ignore[misc]


def test_to_dict_key_order_and_omissions() -> None:
    """to_dict keeps DESIGN.md's key order and leaves out empty extensions."""
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


def test_fast_constructor_leaves_late_fields_at_their_defaults() -> None:
    """A record from the builder reads title/mobile/pagemaps as their defaults, and
    compares, hashes, pickles, copies and replaces like a UrlRecord(...) one."""
    import copy
    import pickle

    fast = _scored_half("https://example.com/")
    slow = UrlRecord("https://example.com/", score=0.5)
    assert (fast.title, fast.mobile, fast.pagemaps) == (None, False, ())
    assert fast == slow and hash(fast) == hash(slow) and repr(fast) == repr(slow)
    assert pickle.loads(pickle.dumps(fast)) == slow and copy.copy(fast) == slow
    assert dataclasses.replace(fast, mobile=True).mobile is True
    with pytest.raises(AttributeError):
        fast.no_such_field  # type: ignore[attr-defined]  # noqa: B018


def test_set_record_extras_and_the_new_keys() -> None:
    """set_record_extras fills the late fields; to_dict shows them after news, only when set."""
    pagemaps = (DataObject("document", "one", (("name", "Doc"), ("name", "Dup"))),)
    fast = _scored_half("https://example.com/")
    record = set_record_extras(fast, "A title", True, pagemaps)
    assert record == UrlRecord(
        "https://example.com/", score=0.5, title="A title", mobile=True, pagemaps=pagemaps
    )
    data = record.to_dict()
    assert list(data)[-3:] == ["title", "mobile", "pagemaps"]
    assert data["pagemaps"] == [{"type": "document", "id": "one", "attributes": {"name": "Doc"}}]
    assert pagemaps[0].get("name") == "Doc" and pagemaps[0].get("other") is None


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
    fast = build("https://example.com/", stamp, "daily", 0.7, "s", alternates, (), (), None)
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
