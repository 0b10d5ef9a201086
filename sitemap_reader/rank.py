"""Ranking: the default score of a URL record, a float in [0, 1] where higher is better.

The score is a weighted sum of three parts, each in [0, 1]::

    score = 0.60 * priority + 0.25 * frequency + 0.15 * recency

* ``priority``: the record's ``<priority>``; absent counts as the protocol default 0.5.
* ``frequency``: the changefreq's place on the scale always = 1, hourly = 5/6, daily = 4/6,
  weekly = 3/6, monthly = 2/6, yearly = 1/6, never = 0; absent counts as the middle (0.5).
* ``recency``: ``0.5 ** (age_days / 30)``, halving every 30 days since ``lastmod`` (a future
  lastmod counts as now); absent counts as 90 days old (0.125).

Priority dominates: one step of 0.1 in priority (0.06) outweighs one step of changefreq
(about 0.042); a changefreq step outweighs most recency differences. It is lexicographic in
spirit, not exactly (a very fresh page can overtake one changefreq step). Example: priority
0.8, daily, modified 30 days ago scores 0.6*0.8 + 0.25*(4/6) + 0.15*0.5 = 0.7217; a record
with no fields at all scores 0.6*0.5 + 0.25*0.5 + 0.15*0.125 = 0.44375.

The scoring function is replaceable: anything matching :data:`ScoreFunc` will do.

>>> from datetime import UTC, datetime, timedelta
>>> now = datetime(2024, 3, 5, tzinfo=UTC)
>>> round(default_score(0.8, "daily", now - timedelta(days=30), now), 4)
0.7217
>>> default_score(None, None, None, now)
0.44375
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sitemap_reader.records import UrlRecord

__all__ = [
    "FREQUENCY_RANK",
    "HALF_LIFE_DAYS",
    "MISSING_AGE_DAYS",
    "FieldScorer",
    "ScoreFunc",
    "default_score",
    "make_scorer",
    "score_record",
]

#: A scoring function: (record, now) -> score; higher comes first in ranked output.
ScoreFunc = Callable[[UrlRecord, datetime], float]

#: Weights of priority, changefreq and recency; they sum to 1.
PRIORITY_WEIGHT = 0.60
FREQUENCY_WEIGHT = 0.25
RECENCY_WEIGHT = 0.15
#: The protocol's default priority, used when a record has none.
DEFAULT_PRIORITY = 0.5
#: changefreq on a 0..1 scale, most frequent highest.
FREQUENCY_RANK: dict[str, float] = {
    "always": 6 / 6,
    "hourly": 5 / 6,
    "daily": 4 / 6,
    "weekly": 3 / 6,
    "monthly": 2 / 6,
    "yearly": 1 / 6,
    "never": 0.0,
}
#: Frequency of a record without changefreq: the middle of the scale.
MISSING_FREQUENCY = 0.5
#: Recency halves every this many days.
HALF_LIFE_DAYS = 30.0
#: A record without lastmod counts as this old ("old-ish").
MISSING_AGE_DAYS = 90.0
_SECONDS_PER_HALF_LIFE = HALF_LIFE_DAYS * 86400.0
_MISSING_RECENCY: float = 0.5 ** (MISSING_AGE_DAYS / HALF_LIFE_DAYS)


def default_score(
    priority: float | None, changefreq: str | None, lastmod: datetime | None, now: datetime
) -> float:
    """The default score in [0, 1] (formula in the module docstring).

    ``lastmod`` and ``now`` should be aware datetimes; a naive one is taken as UTC.
    """
    if priority is None or not 0.0 <= priority <= 1.0:  # also False for NaN
        priority = DEFAULT_PRIORITY
    frequency = (
        MISSING_FREQUENCY
        if changefreq is None
        else FREQUENCY_RANK.get(changefreq, MISSING_FREQUENCY)
    )
    score = (
        PRIORITY_WEIGHT * priority
        + FREQUENCY_WEIGHT * frequency
        + RECENCY_WEIGHT * _recency(lastmod, now)
    )
    return min(1.0, max(0.0, score))


def _recency(lastmod: datetime | None, now: datetime) -> float:
    """``0.5 ** (age / half-life)`` in [0, 1]; the missing-lastmod value for None."""
    if lastmod is None:
        return _MISSING_RECENCY
    if (lastmod.tzinfo is None) != (now.tzinfo is None):
        lastmod, now = _aware(lastmod), _aware(now)
    age = (now - lastmod).total_seconds()
    if age <= 0.0:
        return 1.0
    return float(0.5 ** (age / _SECONDS_PER_HALF_LIFE))


def _aware(value: datetime) -> datetime:
    """``value`` with UTC attached if it is naive."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def score_record(record: UrlRecord, now: datetime) -> float:
    """:func:`default_score` of a record's priority, changefreq and lastmod."""
    return default_score(record.priority, record.changefreq, record.lastmod, now)


#: The hot-path form of the default score, bound to one ``now``: (priority, changefreq, lastmod).
FieldScorer = Callable[[float | None, str | None, datetime | None], float]


def make_scorer(now: datetime, cache_size: int = 4096) -> FieldScorer:
    """:func:`default_score` bound to ``now``, memoizing recency per lastmod value.

    The parser scores every URL it emits; lastmod values repeat within a sitemap, and the
    recency term is the only costly part. Expects values as the parser makes them
    (priority in [0, 1] or None, aware lastmod) and returns exactly what
    :func:`default_score` returns for them.

    >>> from datetime import UTC, datetime, timedelta
    >>> now = datetime(2024, 3, 5, tzinfo=UTC)
    >>> score = make_scorer(now)
    >>> score(0.8, "daily", now - timedelta(days=30)) == default_score(
    ...     0.8, "daily", now - timedelta(days=30), now)
    True
    """
    recency: dict[datetime, float] = {}
    frequency = FREQUENCY_RANK.get

    def score(priority: float | None, changefreq: str | None, lastmod: datetime | None) -> float:
        if lastmod is None:
            fresh = _MISSING_RECENCY
        else:
            cached = recency.get(lastmod)
            if cached is None:
                if len(recency) >= cache_size:
                    recency.clear()
                cached = recency[lastmod] = _recency(lastmod, now)
            fresh = cached
        value = (
            PRIORITY_WEIGHT * (DEFAULT_PRIORITY if priority is None else priority)
            + FREQUENCY_WEIGHT * frequency(changefreq, MISSING_FREQUENCY)  # type: ignore[arg-type]
            + RECENCY_WEIGHT * fresh
        )
        return min(1.0, max(0.0, value))

    return score
