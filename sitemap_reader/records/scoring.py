"""Scoring: the one formula of a URL record's score and of its revisit interval.

Every record's ``score`` and ``revisit`` are computed here, once, while the record is
built (:func:`plain_builder` for the bare parser, :func:`sitemap_builder` for a sitemap
the crawler reads, which also counts the sitemap's lastmod vote). The score is a float
in [0, 1] where higher is better (ranked output and Scrapy priorities use it).

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

**The lastmod lie.** Many sites stamp one lastmod (often the time the file was generated)
on nearly every URL of a sitemap; recency then says nothing about the page. The crawler
detects it per sitemap with a streaming estimate (:class:`LastmodVote`: a Boyer-Moore
majority vote over the records' lastmod values, no per-value memory): when at least
:data:`UNIFORM_MIN_RECORDS` records were seen and one value's vote count is at least
:data:`UNIFORM_LASTMOD_SHARE` (0.8) of all records, the sitemap is *uniform* and its
records' lastmod is discounted: its recency counts at most as much as an absent
lastmod's (0.125), so a uniform stamp can lower a score, never raise it. The vote count is
a lower bound of the true count (and at least ``2 * share - 1`` of it), so every sitemap
where 90% or more of the URLs share a lastmod is caught, and none below 80% is. The
crawler holds back the first :data:`UNIFORM_MIN_RECORDS` records of each sitemap until
the estimate can speak, so they are scored like the rest; the verdict is a problem
(``uniform-lastmod``) on the sitemap's node in the tree. Example: 1,000 URLs all dated
"yesterday", priority 0.5, weekly: undiscounted 0.6*0.5 + 0.25*0.5 + 0.15*0.977 = 0.572;
discounted 0.44375 -- the same as a record with no lastmod.

The scoring function is replaceable: anything matching :data:`ScoreFunc` will do. A
custom scorer sees the record as parsed; the lastmod discount is part of the default.

**Revisit interval.** :func:`revisit_interval` suggests, for a crawl scheduler, how
long to wait before fetching the page again: from changefreq (:data:`REVISIT_SECONDS`;
absent counts as weekly) or, when an incremental run saw the lastmod move forward since
the previous run (and the sitemap's lastmods are not uniform), the observed interval
between the two lastmods, clamped to [1 hour, 1 year].

>>> from datetime import UTC, datetime, timedelta
>>> now = datetime(2024, 3, 5, tzinfo=UTC)
>>> round(default_score(0.8, "daily", now - timedelta(days=30), now), 4)
0.7217
>>> default_score(None, None, None, now)
0.44375
>>> revisit_interval("daily") / 3600
24.0
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime

from sitemap_reader.records import Audit, RecordBuilder, UrlRecord, url_record_builder

__all__ = [
    "FREQUENCY_RANK",
    "HALF_LIFE_DAYS",
    "MISSING_AGE_DAYS",
    "REVISIT_SECONDS",
    "UNIFORM_LASTMOD_SHARE",
    "UNIFORM_MIN_RECORDS",
    "FieldScorer",
    "LastmodVote",
    "ScoreFunc",
    "Verdict",
    "default_score",
    "make_scorer",
    "order_key",
    "plain_builder",
    "revisit_interval",
    "score_record",
    "sitemap_builder",
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


class Verdict:
    """A sitemap's settled lastmod-lie verdict, read by its scorer on every record."""

    __slots__ = ("uniform",)

    def __init__(self) -> None:
        self.uniform = False


def make_scorer(now: datetime, verdict: Verdict | None = None) -> FieldScorer:
    """:func:`default_score` bound to ``now``, for the parser's hot path.

    With a ``verdict``, the lastmod-lie discount is part of the formula: while
    ``verdict.uniform`` is set, a lastmod's recency counts at most as much as an absent
    lastmod's (the score can fall, never rise).

    The parser scores every URL it emits, so this skips what it can: validation (it
    expects values as the parser makes them: priority in [0, 1] or None, aware lastmod),
    timedelta objects and clamping. It returns what :func:`default_score` returns for
    them, to rounding.

    >>> from datetime import UTC, datetime, timedelta
    >>> now = datetime(2024, 3, 5, tzinfo=UTC)
    >>> score = make_scorer(now)
    >>> month_ago = now - timedelta(days=30)
    >>> abs(score(0.8, "daily", month_ago) - default_score(0.8, "daily", month_ago, now)) < 1e-12
    True
    """
    # Each weighted term precomputed where it can be (the same products, so the same sums).
    frequency_term = {word: FREQUENCY_WEIGHT * rank for word, rank in FREQUENCY_RANK.items()}.get
    missing_frequency_term = FREQUENCY_WEIGHT * MISSING_FREQUENCY
    missing_priority_term = PRIORITY_WEIGHT * DEFAULT_PRIORITY
    now_ts = _aware(now).timestamp()
    # The parser memoizes lastmods per sitemap, so records often share one datetime
    # object (often one for a whole sitemap): the last one's recency is kept.
    seen: datetime | None = None
    seen_fresh = _MISSING_RECENCY

    def score(priority: float | None, changefreq: str | None, lastmod: datetime | None) -> float:
        nonlocal seen, seen_fresh
        if lastmod is None:
            fresh = _MISSING_RECENCY
        else:
            if lastmod is seen:
                fresh = seen_fresh
            else:
                # The same value as _recency(), from timestamps: no timedelta objects.
                age = (
                    now_ts - _aware(lastmod).timestamp()
                    if lastmod.tzinfo is None
                    else (now_ts - lastmod.timestamp())
                )
                fresh = 1.0 if age <= 0.0 else 0.5 ** (age / _SECONDS_PER_HALF_LIFE)
                seen, seen_fresh = lastmod, fresh
            if verdict is not None and fresh > _MISSING_RECENCY and verdict.uniform:
                fresh = _MISSING_RECENCY  # the lastmod lie: no fresher than none
        # Every term is in [0, 1] and the weights sum to 1: no clamping needed.
        return (
            (missing_priority_term if priority is None else PRIORITY_WEIGHT * priority)
            + frequency_term(changefreq, missing_frequency_term)  # type: ignore[arg-type]
            + RECENCY_WEIGHT * fresh
        )

    return score


def order_key(record: UrlRecord) -> tuple[float, str]:
    """The ranked-output sort key: score descending, then URL ascending."""
    return (-record.score, record.url)


# --------------------------------------------------------------------------- lastmod lie

#: Share of a sitemap's records whose lastmod must win the vote for it to be uniform.
UNIFORM_LASTMOD_SHARE = 0.8
#: Records needed before a sitemap can be called uniform (a 5-URL sitemap written in
#: one go may truly have one lastmod); also how many records the crawler holds back.
UNIFORM_MIN_RECORDS = 32


class LastmodVote:
    """Streaming estimate of "one lastmod on nearly every record" (Boyer-Moore vote).

    Constant memory: the current candidate value and its vote count. ``count`` never
    exceeds the candidate's true frequency and is at least ``2 * f - n`` for a value of
    frequency ``f`` among ``n`` records, so :attr:`uniform` is True whenever at least
    90% of the records share a lastmod, and False whenever no value reaches 80%.

    >>> from datetime import UTC, datetime
    >>> vote = LastmodVote()
    >>> stamp = datetime(2024, 1, 1, tzinfo=UTC)
    >>> for _ in range(40):
    ...     vote.add(stamp)
    >>> vote.uniform
    True
    """

    __slots__ = ("candidate", "count", "total")

    def __init__(self) -> None:
        self.candidate: datetime | None = None
        self.count = 0
        self.total = 0

    def add(self, lastmod: datetime | None) -> None:
        """Count one record (a record without lastmod votes against every value)."""
        self.total += 1
        if lastmod is None:
            if self.count:
                self.count -= 1
            return
        if self.count == 0:
            self.candidate, self.count = lastmod, 1
        elif lastmod == self.candidate:
            self.count += 1
        else:
            self.count -= 1

    @property
    def ready(self) -> bool:
        """True once enough records were seen for :attr:`uniform` to be trusted."""
        return self.total >= UNIFORM_MIN_RECORDS

    @property
    def uniform(self) -> bool:
        """True when one lastmod is (estimated to be) on nearly every record."""
        return (
            self.total >= UNIFORM_MIN_RECORDS and self.count >= UNIFORM_LASTMOD_SHARE * self.total
        )


# --------------------------------------------------------------------------- revisit

_HOUR = 3600.0
_DAY = 86400.0
#: Suggested revisit interval per changefreq, in seconds. "always" is polled hourly (a
#: sitemap is no real-time feed); "never" (archived) still gets a yearly check.
REVISIT_SECONDS: dict[str, float] = {
    "always": _HOUR,
    "hourly": _HOUR,
    "daily": _DAY,
    "weekly": 7 * _DAY,
    "monthly": 30 * _DAY,
    "yearly": 365 * _DAY,
    "never": 365 * _DAY,
}
#: Without changefreq: weekly, the middle of the scale (as in the score).
MISSING_REVISIT_SECONDS = 7 * _DAY
#: Bounds of an interval observed from lastmod history.
MIN_REVISIT_SECONDS = _HOUR
MAX_REVISIT_SECONDS = 365 * _DAY


def revisit_interval(
    changefreq: str | None,
    lastmod: datetime | None = None,
    previous: datetime | None = None,
) -> float:
    """A suggested revisit interval in seconds (see the module docstring).

    ``previous`` is the lastmod an earlier run saw for the URL; when ``lastmod`` moved
    forward from it, the observed interval wins over changefreq.

    >>> from datetime import UTC, datetime
    >>> revisit_interval("weekly", datetime(2024, 1, 3, tzinfo=UTC),
    ...                  datetime(2024, 1, 1, tzinfo=UTC)) / 86400
    2.0
    >>> revisit_interval(None) / 86400
    7.0
    """
    if lastmod is not None and previous is not None and lastmod > previous:
        observed = (lastmod - previous).total_seconds()
        return min(MAX_REVISIT_SECONDS, max(MIN_REVISIT_SECONDS, observed))
    if changefreq is None:
        return MISSING_REVISIT_SECONDS
    return REVISIT_SECONDS.get(changefreq, MISSING_REVISIT_SECONDS)


# --------------------------------------------------------------------------- builders


def plain_builder(now: datetime) -> RecordBuilder:
    """Records of the bare parser: the default score at ``now``, no revisit interval."""
    return url_record_builder(make_scorer(now))


def sitemap_builder(
    now: datetime,
    verdict: Verdict,
    *,
    custom: bool = False,
    source: str | None = None,
    audit: Audit | None = None,
) -> RecordBuilder:
    """Records of one sitemap the crawler reads, every field final when built.

    The score is the default one, with the lastmod-lie discount while the sitemap's
    ``verdict`` says uniform (records built before the verdict are corrected by the
    crawler: :func:`uniform_fields`), or 0.0 when a custom scorer will give it; the
    revisit interval comes from changefreq (:data:`REVISIT_SECONDS`); ``robots`` is the
    site's ``audit`` of the URL; ``source`` says where the records come from (``"html"``:
    an HTML sitemap page).
    """
    score = _zero if custom else make_scorer(now, verdict)
    return url_record_builder(
        score, REVISIT_SECONDS, MISSING_REVISIT_SECONDS, source=source, audit=audit
    )


def _zero(priority: float | None, changefreq: str | None, lastmod: datetime | None) -> float:
    return 0.0


def uniform_fields(record: UrlRecord, now: datetime, *, custom: bool = False) -> UrlRecord:
    """``record`` as :func:`sitemap_builder` builds it in a uniform sitemap (the discount
    applied, revisit from changefreq): for records built before the vote could speak."""
    score = record.score
    if not custom and record.lastmod is not None:
        score = min(score, default_score(record.priority, record.changefreq, None, now))
    revisit = revisit_interval(record.changefreq)
    if score == record.score and revisit == record.revisit:
        return record
    return dataclasses.replace(record, score=score, revisit=revisit)
