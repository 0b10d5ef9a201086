"""The record side of one sitemap job: its lastmod vote, its builder, the records held back.

The parser builds each record with the job's builder
(:func:`sitemap_reader.scoring.sitemap_builder`), which computes ``score`` and
``revisit`` as it builds and counts the record in the sitemap's lastmod vote, so a
record leaves the parser final and is never changed afterwards. The discount for a
sitemap that stamps one lastmod on nearly every URL needs
:data:`~sitemap_reader.scoring.UNIFORM_MIN_RECORDS` records before the vote can speak:
the records of a sitemap are held back until then; if the verdict is "uniform", those
few, built before it, are rebuilt with the discount (new objects, nothing mutated).
A custom scorer sees each record with its other fields final and gives its score (one
rebuild per record: the price of a score that needs the whole record).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from sitemap_reader.discovery.model import SitemapNode
from sitemap_reader.records import RecordBuilder, UrlRecord
from sitemap_reader.scoring import LastmodVote, ScoreFunc, sitemap_builder, uniform_fields

Batch = list[UrlRecord]


class Shaper:
    """The records of one sitemap between the parser and the output (see the module doc)."""

    __slots__ = ("_custom", "_now", "build", "held", "noted", "released", "vote")

    def __init__(self, custom: ScoreFunc | None, now: datetime) -> None:
        self._custom = custom
        self._now = now
        self.vote = LastmodVote()
        self.build: RecordBuilder = sitemap_builder(now, self.vote, custom=custom is not None)
        self.held: Batch = []
        self.released = False
        self.noted = False

    @property
    def uniform(self) -> bool:
        """The running verdict: one lastmod on nearly every record so far."""
        return self.vote.uniform

    def shape(self, node: SitemapNode, batch: Batch) -> Batch:
        """A chunk's records to emit now (the first ones are held back until the vote)."""
        if not self.released:
            self.held.extend(batch)
            if not self.vote.ready:
                return []
            batch, self.held, self.released = self.held, [], True
            if self.vote.uniform:  # built before the verdict: rebuilt with it
                custom = self._custom is not None
                batch = [uniform_fields(r, self._now, custom=custom) for r in batch]
        return self._finish(node, batch)

    def repeats(self, batch: Batch) -> Batch:
        """Copies of URLs emitted before, finished like the rest (for merging)."""
        if self.vote.uniform:
            custom = self._custom is not None
            batch = [uniform_fields(r, self._now, custom=custom) for r in batch]
        custom_score = self._custom
        if custom_score is not None:
            now = self._now
            batch = [dataclasses.replace(r, score=custom_score(r, now)) for r in batch]
        return batch

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
        custom = self._custom
        if custom is not None:
            now = self._now
            batch = [dataclasses.replace(r, score=custom(r, now)) for r in batch]
        return batch
