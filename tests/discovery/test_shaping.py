"""The record side of a sitemap job (discovery/shaping.py): a custom scorer that is slow
ends the run at its deadline, read between two of its calls."""

from __future__ import annotations

from datetime import datetime

from sitemap_reader.discovery import Discovery, classify
from sitemap_reader.options import Options
from sitemap_reader.records import UrlRecord
from tests.discovery.test_children import FakeClock
from tests.discovery.test_core import BASE, Harness, urlset


def test_a_slow_scorer_ends_the_run_at_its_deadline() -> None:
    """score= a function taking 0.3 s a call, deadline=3, one sitemap of 100 URLs: at most
    11 calls (the deadline read between two), the records scored go out, the rest are
    dropped and the run stops at its deadline (before: 100 calls, 30 s)."""
    clock, calls = FakeClock(), []

    def score(record: UrlRecord, now: datetime) -> float:
        calls.append(record.url)
        clock.now += 0.3
        return 0.5

    paths = [f"/p{n}" for n in range(100)]
    options = Options.of(score=score, deadline=3)
    core = Discovery([classify(BASE + "/s.xml")], options, clock=clock)
    harness = Harness(core, {"/s.xml": urlset(*paths)})
    harness.run()
    assert len(calls) <= 11
    assert [r.url for r in harness.records] == calls[: len(harness.records)]
    assert {r.score for r in harness.records} == {0.5}
    assert core.stats.stopped is not None and core.stats.stopped.option == "deadline"
