"""The last fields of a sitemap's records: the lastmod-lie discount, a custom score, revisit.

The parser scores each record on its own (:func:`sitemap_reader.rank.make_scorer`); only
the core sees a whole sitemap, so the discount for a sitemap that stamps one lastmod on
nearly every URL (:class:`sitemap_reader.rank.LastmodVote`) is decided here, per job.
The first :data:`~sitemap_reader.rank.UNIFORM_MIN_RECORDS` records of each sitemap are
held back until the vote can speak, then released scored like the rest; later records
are scored with the running verdict. A sitemap that ends earlier releases what it held
when it ends. Records are fresh from the parser and not shared with anyone yet, so the
score and revisit slots are set in place (as the parser's own fast constructor does).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

from sitemap_reader.discovery.model import SitemapNode
from sitemap_reader.rank import (
    MISSING_REVISIT_SECONDS,
    REVISIT_SECONDS,
    FieldScorer,
    LastmodVote,
    ScoreFunc,
)
from sitemap_reader.records import UrlRecord

Batch = list[UrlRecord]
_set_score = UrlRecord.__dict__["score"].__set__
_set_revisit = UrlRecord.__dict__["revisit"].__set__


class Shaper:
    """The record shaping of one sitemap: its lastmod vote and the records held back."""

    __slots__ = ("_custom", "_default", "_now", "held", "noted", "released", "vote")

    def __init__(self, custom: ScoreFunc | None, default: FieldScorer, now: datetime) -> None:
        self._custom = custom
        self._default = default
        self._now = now
        self.vote = LastmodVote()
        self.held: Batch = []
        self.released = False
        self.noted = False

    def shape(self, node: SitemapNode, batch: Batch) -> Batch:
        """Finish a chunk's records; those to emit now (the first ones are held back)."""
        vote = self.vote
        for record in batch:
            vote.add(record.lastmod)
        if not self.released:
            self.held.extend(batch)
            if not vote.ready:
                return []
            batch, self.held, self.released = self.held, [], True
        return self._finish(node, batch)

    def release(self, node: SitemapNode) -> Batch:
        """The sitemap ended (however): what it still holds, finished."""
        held, self.held = self.held, []
        return self._finish(node, held) if held else held

    def _finish(self, node: SitemapNode, batch: Batch) -> Batch:
        vote = self.vote
        uniform = vote.uniform
        if uniform and not self.noted:
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
        elif uniform:
            default = self._default
            for record in batch:  # never fresher than without a lastmod; never raised
                if record.lastmod is not None:
                    plain = default(record.priority, record.changefreq, None)
                    if plain < record.score:
                        _set_score(record, plain)
        revisit = REVISIT_SECONDS.get
        for record in batch:
            if uniform or record.revisit is None:
                _set_revisit(record, revisit(record.changefreq or "", MISSING_REVISIT_SECONDS))
        return batch
