"""The emitter's hot path (parse/parser.py ``_Emitter.drain``): its inlined lastmod step
and its changefreq/priority lookups give exactly what the parse functions give."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from xml.sax.saxutils import escape

from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_reader.parse.extensions import human_text
from sitemap_reader.parse.normalize import parse_changefreq, parse_lastmod, parse_priority
from sitemap_reader.parse.parser import SitemapParser
from sitemap_reader.records import Image, UrlRecord
from sitemap_reader.records.scoring import FREQUENCY_RANK, FieldScorer, Verdict, make_scorer

NOW = datetime(2026, 1, 1, tzinfo=UTC)
URL = "https://example.com/sitemap.xml"
HEAD = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'


def records(values: list[tuple[str, str, str]], *, by_byte: bool = False) -> list[UrlRecord]:
    """The records of a urlset with one entry per (lastmod, changefreq, priority)."""
    entries = "".join(
        f"<url><loc>https://example.com/{n}</loc><lastmod>{escape(lastmod)}</lastmod>"
        f"<changefreq>{escape(freq)}</changefreq><priority>{escape(prio)}</priority></url>"
        for n, (lastmod, freq, prio) in enumerate(values)
    )
    body = f"{HEAD}{entries}</urlset>".encode()
    parser = SitemapParser(URL, now=NOW)
    found = []
    if by_byte:
        for i in range(len(body)):
            found += parser.feed(body[i : i + 1])
    else:
        found += parser.feed(body)
    found += parser.close()
    assert parser.complete
    return [item for item in found if isinstance(item, UrlRecord)]


def same_instant_and_zone(a: datetime | None, b: datetime | None) -> bool:
    """Equal datetimes, the same tzinfo object and the same fields (not just the instant)."""
    if a is None or b is None:
        return a is b
    return a == b and a.tzinfo is b.tzinfo and a.isoformat() == b.isoformat()


_DIGITS = st.text("0123456789", min_size=1, max_size=4)
_ZONES = st.sampled_from(["", "Z", "z", "+00:00", "-00:00", "+02:00", "-05:30", "+0000", "+24:00"])
_SEPARATORS = st.sampled_from(["T", " ", "t", "-", ""])
_LASTMODS = st.one_of(
    st.builds(
        "{}-{}-{}{}{}:{}:{}{}{}".format,
        _DIGITS,
        _DIGITS,
        _DIGITS,
        _SEPARATORS,
        _DIGITS,
        _DIGITS,
        _DIGITS,
        st.sampled_from(["", ".5", ".123456", ".1234567", ","]),
        _ZONES,
    ),
    st.builds(
        "{}{}{}".format,
        st.sampled_from(["", " ", "\n "]),
        st.sampled_from(["2024-03-05", "2024-02-30", "2024-W10-1", "2024-03", "2024", "20240305"]),
        st.sampled_from(
            [
                "",
                "T12:00:00Z",
                "T12:00Z",
                "T25:00:00+00:00",
                "T12:00:00+00:00 ",
                "T12:00:00+02:00",
                "T12:00:00",
                "T12:00:00.5-05:30",
                " 12:00:00z",
                "T23:59:60Z",
            ]
        ),
    ),
    st.text(st.sampled_from("0123456789-T:+Zz. ,"), max_size=30),
    st.just("Thu, 05 Jan 2017 12:34:50 GMT"),
)
_FREQS = st.one_of(
    st.sampled_from(["daily", "Daily", " weekly ", "never", "sometimes", "DAILY", "yearly"]),
    st.text(st.sampled_from("adilyweknvrDAIL -"), max_size=8),
)
_PRIOS = st.one_of(
    st.sampled_from(["0.5", "1.0", "1", "0", "0.0", "1.1", "-0.0", " 0.8 ", "nan", "0.50", ".5"]),
    st.text(st.sampled_from("0123456789.-e "), max_size=6),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_LASTMODS, _FREQS, _PRIOS), min_size=1, max_size=6))
def test_drain_fields_equal_the_parse_functions(values: list[tuple[str, str, str]]) -> None:
    """Every lastmod, changefreq and priority string reads as the parse functions read it."""
    found = records(values)
    assert len(found) == len(values)
    for record, (lastmod, freq, prio) in zip(found, values, strict=True):
        expected = parse_lastmod(lastmod) if lastmod.strip() else None
        assert same_instant_and_zone(record.lastmod, expected), lastmod
        assert record.changefreq == (parse_changefreq(freq) if freq.strip() else None)
        wanted = parse_priority(prio) if prio.strip() else None
        assert record.priority == wanted and type(record.priority) is type(wanted)


def test_common_shapes_byte_by_byte() -> None:
    """The shapes the fast path takes, and their near misses, read the same byte by byte."""
    values = [
        ("2024-03-05T14:30:15+00:00", "daily", "0.8"),
        ("2024-03-05T14:30:15Z", "weekly", "1.0"),
        ("2024-03-05T14:30:15z", "Monthly", "1"),
        ("2024-03-05T14:30:15+02:00", "never", "0.80"),
        ("2024-03-05", "yearly", "0"),
        ("2024-03-05T14:30:15", "always", "0.0"),
        ("2024-W10-1T00:00:00", "hourly", "1.5"),
        ("2024-13-05T14:30:15+00:00", "often", "x"),
    ]
    whole, single = records(values), records(values, by_byte=True)
    assert whole == single
    for record, (lastmod, freq, prio) in zip(whole, values, strict=True):
        assert same_instant_and_zone(record.lastmod, parse_lastmod(lastmod))
        assert record.changefreq == parse_changefreq(freq)
        assert record.priority == parse_priority(prio)
    assert whole[0].lastmod == datetime(2024, 3, 5, 14, 30, 15, tzinfo=UTC)
    assert whole[-1].lastmod is None and whole[-1].changefreq is None


@given(st.text(st.sampled_from(" \t\r\nab\u00a0é"), max_size=12))
def test_human_text_equals_the_substitution(text: str) -> None:
    """human_text's shortcut gives what collapsing every white-space run would give."""
    expected = re.sub(r"[ \t\r\n]+", " ", text).strip(" ") or None
    assert human_text(text) == expected


def test_image_fields_kept_on_the_fast_path() -> None:
    """An image with a title and caption keeps them (white space collapsed), and one whose
    loc needs normalizing is normalized, whole or byte by byte."""
    body = (
        f"{HEAD}<url><loc>https://example.com/a</loc>"
        '<image:image xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
        "<image:loc>https://example.com/i.jpg</image:loc><image:title> A\n  cat </image:title>"
        "<image:caption>x</image:caption></image:image>"
        '<image:image xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">'
        "<image:loc>HTTPS://Example.com/j.jpg</image:loc></image:image></url></urlset>"
    ).encode()
    results = []
    for size in (len(body), 1):
        parser = SitemapParser(URL, now=NOW)
        found = []
        for i in range(0, len(body), size):
            found += parser.feed(body[i : i + size])
        results.append(found + parser.close())
    assert results[0] == results[1]
    (record,) = results[0]
    assert isinstance(record, UrlRecord)
    assert record.images == (
        Image("https://example.com/i.jpg", title="A cat", caption="x"),
        Image("https://example.com/j.jpg"),
    )


def reference_scorer(now: datetime, verdict: Verdict | None = None) -> FieldScorer:
    """make_scorer as it was before its terms were precomputed: the exactness reference."""
    now_ts = now.timestamp()

    def score(priority: float | None, changefreq: str | None, lastmod: datetime | None) -> float:
        if lastmod is None:
            fresh: float = 0.5 ** (90.0 / 30.0)
        else:
            age = now_ts - lastmod.timestamp()
            fresh = 1.0 if age <= 0.0 else 0.5 ** (age / (30.0 * 86400.0))
            if verdict is not None and fresh > 0.5**3.0 and verdict.uniform:
                fresh = 0.5**3.0
        return (
            0.60 * (0.5 if priority is None else priority)
            + 0.25 * FREQUENCY_RANK.get(changefreq or "", 0.5)
            + 0.15 * fresh
        )

    return score


_STAMPS = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)
)


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.floats(0.0, 1.0)),
            st.one_of(st.none(), st.sampled_from([*FREQUENCY_RANK, "often"])),
            st.one_of(st.none(), _STAMPS),
        ),
        min_size=1,
        max_size=8,
    ),
    st.booleans(),
    st.booleans(),
)
def test_scorer_equals_the_formula_exactly(
    fields: list[tuple[float | None, str | None, datetime | None]], uniform: bool, repeat: bool
) -> None:
    """The scorer (precomputed terms, last recency kept) gives the formula's exact float,
    for fresh and for repeated lastmod objects, with and without the lastmod-lie verdict."""
    verdict = Verdict()
    verdict.uniform = uniform
    for votes in (None, verdict):
        fast, slow = make_scorer(NOW, votes), reference_scorer(NOW, votes)
        for priority, changefreq, lastmod in fields * (2 if repeat else 1):
            assert fast(priority, changefreq, lastmod) == slow(priority, changefreq, lastmod)
