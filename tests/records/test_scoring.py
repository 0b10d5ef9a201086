"""sitemap_reader.records.scoring: the default score, the lastmod vote, revisit intervals."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_reader.parse.normalize import CHANGEFREQS
from sitemap_reader.records import UrlRecord
from sitemap_reader.records.scoring import (
    FREQUENCY_RANK,
    MAX_REVISIT_SECONDS,
    MIN_REVISIT_SECONDS,
    REVISIT_SECONDS,
    UNIFORM_MIN_RECORDS,
    LastmodVote,
    default_score,
    order_key,
    revisit_interval,
    score_record,
)

NOW = datetime(2024, 3, 5, 12, tzinfo=UTC)

priorities = st.one_of(st.none(), st.floats(0.0, 1.0))
freqs = st.one_of(st.none(), st.sampled_from(CHANGEFREQS))
lastmods = st.one_of(
    st.none(),
    st.datetimes(datetime(1990, 1, 1), datetime(2030, 1, 1), timezones=st.just(UTC)),
)


def test_docstring_example() -> None:
    """Priority 0.8, daily, 30 days old scores 0.6*0.8 + 0.25*4/6 + 0.15*0.5."""
    score = default_score(0.8, "daily", NOW - timedelta(days=30), NOW)
    assert score == pytest.approx(0.48 + 0.25 * 4 / 6 + 0.075)


def test_missing_fields_use_defaults() -> None:
    """No priority = 0.5, no changefreq = the middle, no lastmod = 90 days old."""
    empty = default_score(None, None, None, NOW)
    assert empty == default_score(0.5, "weekly", NOW - timedelta(days=90), NOW)


def test_frequency_order() -> None:
    """always > hourly > ... > never, with everything else equal."""
    scores = [default_score(0.5, freq, NOW, NOW) for freq in CHANGEFREQS]
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) == len(CHANGEFREQS)
    assert set(FREQUENCY_RANK) == set(CHANGEFREQS)


def test_newer_lastmod_scores_higher() -> None:
    """A newer lastmod wins with everything else equal; the future counts as now."""
    day, year = NOW - timedelta(days=1), NOW - timedelta(days=365)
    assert default_score(0.5, None, day, NOW) > default_score(0.5, None, year, NOW)
    assert default_score(0.5, None, NOW + timedelta(days=9), NOW) == default_score(
        0.5, None, NOW, NOW
    )


def test_priority_step_beats_frequency_step() -> None:
    """0.1 more priority outweighs one changefreq step (lexicographic in spirit)."""
    assert default_score(0.6, "weekly", NOW, NOW) > default_score(0.5, "daily", NOW, NOW)


def test_invalid_inputs_tolerated() -> None:
    """NaN or out-of-range priority counts as 0.5; unknown changefreq as the middle."""
    base = default_score(0.5, None, None, NOW)
    assert default_score(math.nan, None, None, NOW) == base
    assert default_score(7.0, "sometimes", None, NOW) == base


def test_naive_datetimes_taken_as_utc() -> None:
    """A naive lastmod or now is taken as UTC instead of raising."""
    naive = datetime(2024, 3, 4, 12)
    assert default_score(None, None, naive, NOW) == default_score(
        None, None, naive.replace(tzinfo=UTC), NOW
    )
    assert 0.0 <= default_score(None, None, NOW, NOW.replace(tzinfo=None)) <= 1.0


def test_score_record() -> None:
    """score_record reads priority, changefreq and lastmod from the record."""
    record = UrlRecord("https://example.com/", lastmod=NOW, changefreq="hourly", priority=0.9)
    assert score_record(record, NOW) == default_score(0.9, "hourly", NOW, NOW)


@given(priorities, freqs, lastmods)
def test_score_within_unit_interval(
    priority: float | None, freq: str | None, lastmod: datetime | None
) -> None:
    """Every score lies in [0, 1]."""
    assert 0.0 <= default_score(priority, freq, lastmod, NOW) <= 1.0


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), freqs, lastmods)
def test_higher_priority_scores_higher(
    low: float, high: float, freq: str | None, lastmod: datetime | None
) -> None:
    """With changefreq and lastmod equal, a higher priority never scores lower."""
    low, high = sorted((low, high))
    assert default_score(high, freq, lastmod, NOW) >= default_score(low, freq, lastmod, NOW)
    if high - low > 1e-9:
        assert default_score(high, freq, lastmod, NOW) > default_score(low, freq, lastmod, NOW)


@given(priorities, freqs, lastmods, lastmods)
def test_newer_never_scores_lower(
    priority: float | None, freq: str | None, a: datetime | None, b: datetime | None
) -> None:
    """With priority and changefreq equal, a newer lastmod never scores lower."""
    if a is None or b is None:
        return
    older, newer = sorted((a, b))
    assert default_score(priority, freq, newer, NOW) >= default_score(priority, freq, older, NOW)


# --------------------------------------------------------------------------- lastmod vote

stamps = st.lists(st.one_of(st.none(), st.integers(0, 3)), max_size=300)


@given(stamps)
def test_vote_catches_90_percent_and_never_below_80(values: list[int | None]) -> None:
    """uniform is True when >= 90% share a lastmod, False when none reaches 80%."""
    vote = LastmodVote()
    for value in values:
        vote.add(None if value is None else NOW - timedelta(days=value))
    counts = [values.count(v) for v in range(4)]
    top = max(counts, default=0)
    enough = len(values) >= UNIFORM_MIN_RECORDS
    if enough and top >= 0.9 * len(values):
        assert vote.uniform
    if top < 0.8 * len(values):
        assert not vote.uniform


def test_vote_needs_enough_records() -> None:
    """A handful of URLs sharing a lastmod is plausible: not uniform, not ready."""
    vote = LastmodVote()
    for _ in range(UNIFORM_MIN_RECORDS - 1):
        vote.add(NOW)
    assert not vote.ready and not vote.uniform
    vote.add(NOW)
    assert vote.ready and vote.uniform and vote.candidate == NOW


# --------------------------------------------------------------------------- revisit


def test_revisit_from_changefreq() -> None:
    """Each changefreq has its interval; more frequent is never longer."""
    intervals = [revisit_interval(freq) for freq in CHANGEFREQS]
    assert intervals == sorted(intervals)
    assert revisit_interval("daily") == REVISIT_SECONDS["daily"] == 86400
    assert revisit_interval(None) == revisit_interval("weekly")


@given(lastmods, lastmods, freqs)
def test_revisit_observed_interval(
    lastmod: datetime | None, previous: datetime | None, freq: str | None
) -> None:
    """A lastmod that moved forward gives the clamped observed interval; else changefreq."""
    value = revisit_interval(freq, lastmod, previous)
    if lastmod is not None and previous is not None and lastmod > previous:
        observed = (lastmod - previous).total_seconds()
        assert value == min(MAX_REVISIT_SECONDS, max(MIN_REVISIT_SECONDS, observed))
    else:
        assert value == revisit_interval(freq)


def test_order_key_ties_by_url() -> None:
    """Score descending, then URL ascending."""
    records = [UrlRecord("https://b/", score=0.5), UrlRecord("https://a/", score=0.5),
               UrlRecord("https://c/", score=0.9)]  # fmt: skip
    assert [r.url for r in sorted(records, key=order_key)] == [
        "https://c/", "https://a/", "https://b/"
    ]  # fmt: skip
