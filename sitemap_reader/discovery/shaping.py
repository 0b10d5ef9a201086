"""The record side of one sitemap job: its lastmod vote, its builders, the records held back.

The parser builds each record with the job's builder
(:func:`sitemap_reader.records.scoring.sitemap_builder`), which computes ``score``, ``revisit``
and the site's robots verdict as it builds (an HTML page's builder also says
``source="html"``), so a record leaves the parser final and is never changed
afterwards. The discount for a sitemap that stamps one lastmod on nearly every URL is
part of the score formula, switched by the sitemap's
:class:`~sitemap_reader.records.scoring.Verdict`;
the vote (:class:`~sitemap_reader.records.scoring.LastmodVote`) counts each chunk's new records,
and needs :data:`~sitemap_reader.records.scoring.UNIFORM_MIN_RECORDS` of them before it can
speak: the records of a sitemap are held back until then. When the verdict turns
"uniform", the records built before it (the held ones, and that chunk's) are rebuilt
with the discount (new objects, nothing mutated); later ones are built with it.
A custom scorer sees each record with its other fields final and gives its score (one
rebuild per record: the price of a score that needs the whole record). The run's
deadline is read between two of its calls: once it passed, the records not scored yet
are dropped (the run stops, as a deadline cuts a body), so a slow scorer ends the run
at most one call late.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime

from sitemap_reader.discovery.model import SitemapNode
from sitemap_reader.records import Audit, RecordBuilder, UrlRecord
from sitemap_reader.records.scoring import (
    LastmodVote,
    ScoreFunc,
    Verdict,
    sitemap_builder,
    uniform_fields,
)

Batch = list[UrlRecord]


class Shaper:
    """The records of one sitemap between the parser and the output (see the module doc)."""

    __slots__ = (
        "_audit",
        "_custom",
        "_due",
        "_now",
        "_page_build",
        "build",
        "held",
        "noted",
        "released",
        "verdict",
        "vote",
    )

    def __init__(
        self,
        custom: ScoreFunc | None,
        now: datetime,
        audit: Audit | None = None,
        due: Callable[[], bool] = lambda: False,
    ) -> None:
        self._custom = custom
        self._due = due
        self._now = now
        self._audit = audit
        self.vote = LastmodVote()
        self.verdict = Verdict()
        #: The builder of the job's sitemap records (``audit``: the site's robots verdict).
        self.build: RecordBuilder = sitemap_builder(
            now, self.verdict, custom=custom is not None, audit=audit
        )
        self._page_build: RecordBuilder | None = None
        self.held: Batch = []
        self.released = False
        self.noted = False

    @property
    def page_build(self) -> RecordBuilder:
        """The builder of the records of an HTML page (``source="html"``), made once."""
        build = self._page_build
        if build is None:
            custom = self._custom is not None
            build = sitemap_builder(
                self._now, self.verdict, custom=custom, source="html", audit=self._audit
            )
            self._page_build = build
        return build

    @property
    def uniform(self) -> bool:
        """The settled verdict: one lastmod on nearly every record so far."""
        return self.verdict.uniform

    def shape(self, node: SitemapNode, batch: Batch) -> Batch:
        """A chunk's records to emit now (the first ones are held back until the vote)."""
        vote = self.vote
        add = vote.add
        for record in batch:
            add(record.lastmod)
        if not self.released:
            self.held.extend(batch)
            if not vote.ready:
                return []
            batch, self.held, self.released = self.held, [], True
        uniform = vote.uniform
        if uniform and not self.verdict.uniform:  # built before the verdict: rebuilt
            custom = self._custom is not None
            batch = [uniform_fields(r, self._now, custom=custom) for r in batch]
        self.verdict.uniform = uniform
        return self._finish(node, batch)

    def repeats(self, batch: Batch) -> Batch:
        """Copies of URLs emitted before, finished like the rest (for merging)."""
        if self.verdict.uniform:
            custom = self._custom is not None
            batch = [uniform_fields(r, self._now, custom=custom) for r in batch]
        return self._scored(batch)

    def release(self, node: SitemapNode) -> Batch:
        """The sitemap ended (however): what it still holds (the vote never got ready)."""
        held, self.held = self.held, []
        return self._finish(node, held) if held else held

    def _finish(self, node: SitemapNode, batch: Batch) -> Batch:
        vote = self.vote
        if not self.noted and vote.uniform:
            self.noted = True
            node.add_problem(
                "uniform-lastmod",
                f"one lastmod ({vote.candidate}) on nearly every URL: "
                "recency ignored when ranking this sitemap",
            )
        return self._scored(batch)

    def _scored(self, batch: Batch) -> Batch:
        """The records with the custom score (all of them without one), up to the run's
        deadline: it is read between two calls, and the rest dropped once it passed."""
        custom = self._custom
        if custom is None:
            return batch
        now, due, replace = self._now, self._due, dataclasses.replace
        scored: Batch = []
        for record in batch:
            if due():
                break
            scored.append(replace(record, score=custom(record, now)))
        return scored
