"""Per-sitemap scoring in the crawl layer: the lastmod-lie discount, custom scorers, and
the revisit interval of every emitted record.

The parser scores each record on its own (:func:`sitemap_reader.rank.make_scorer`); only
the crawl layer sees a whole sitemap, so the discount for a sitemap that stamps one
lastmod on nearly every URL (:class:`sitemap_reader.rank.LastmodVote`) is applied here.
The first :data:`~sitemap_reader.rank.UNIFORM_MIN_RECORDS` records of each sitemap are
held back until the vote can speak, then released scored like the rest; later records
are scored with the running verdict. A sitemap that ends earlier releases what it held
when it ends. Records are fresh from the parser and not shared with anyone yet, so the
score and revisit slots are set in place (as the parser's own fast constructor does).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import TYPE_CHECKING

from sitemap_reader.rank import (
    MISSING_REVISIT_SECONDS,
    REVISIT_SECONDS,
    LastmodVote,
    ScoreFunc,
    make_scorer,
)
from sitemap_reader.records import UrlRecord

if TYPE_CHECKING:
    from sitemap_reader.crawl.model import SitemapNode

Batch = list[UrlRecord]
_set_score = UrlRecord.__dict__["score"].__set__
_set_revisit = UrlRecord.__dict__["revisit"].__set__


class _Sitemap:
    __slots__ = ("held", "noted", "released", "vote")

    def __init__(self) -> None:
        self.vote = LastmodVote()
        self.held: Batch = []
        self.released = False
        self.noted = False


class Scoring:
    """The scoring state of one run: one vote per sitemap being read."""

    def __init__(self, score: ScoreFunc | None, now: datetime) -> None:
        self._custom = score
        self._now = now
        self._default = make_scorer(now)
        self._sitemaps: dict[int, _Sitemap] = {}

    def shape(self, node: SitemapNode, batch: Batch) -> Batch:
        """Score a chunk's records; those to emit now (the first ones are held back)."""
        state = self._sitemaps.get(id(node))
        if state is None:
            state = self._sitemaps[id(node)] = _Sitemap()
        vote = state.vote
        for record in batch:
            vote.add(record.lastmod)
        if not state.released:
            state.held.extend(batch)
            if not vote.ready:
                return []
            batch, state.held, state.released = state.held, [], True
        return self._finish(node, state, batch)

    def release(self, node: SitemapNode) -> Batch:
        """The sitemap ended (however): what it still holds, scored."""
        state = self._sitemaps.pop(id(node), None)
        if state is None or not state.held:
            return []
        return self._finish(node, state, state.held)

    def _finish(self, node: SitemapNode, state: _Sitemap, batch: Batch) -> Batch:
        uniform = state.vote.uniform
        if uniform and not state.noted:
            state.noted = True
            vote = state.vote
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
