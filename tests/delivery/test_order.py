"""sitemap_reader.delivery.order: a global order with bounded memory. The ranked buffer
(spilling to SQLite past its bound), top=N and the uniform sample=N, on records
Hypothesis makes; the reader's ranked runs on real servers are in
tests/crawl/test_ranked.py."""

from __future__ import annotations

import random
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_reader.delivery.order import RankedBuffer, Sample, TopN, make_sink
from sitemap_reader.options import Delivery
from sitemap_reader.options.limits import Limits
from sitemap_reader.records import UrlRecord
from sitemap_reader.records.scoring import order_key

records_strategy = st.lists(
    st.builds(
        UrlRecord,
        url=st.text("abcxyz/", min_size=1, max_size=6).map(lambda t: "https://e.com/" + t),
        score=st.sampled_from([0.0, 0.25, 0.5, 0.5, 0.75, 1.0]),
        priority=st.one_of(st.none(), st.floats(0, 1)),
    ),
    max_size=120,
    unique_by=lambda r: r.url,
)


def batched(records: list[UrlRecord], size: int) -> list[list[UrlRecord]]:
    """The records in batches of ``size``."""
    return [records[i : i + size] for i in range(0, len(records), size)]


@settings(max_examples=60, deadline=None)
@given(records_strategy, st.integers(1, 50), st.integers(1, 17))
def test_buffer_is_a_sorted_permutation(records: list[UrlRecord], bound: int, size: int) -> None:
    """Whatever the bound (spilling or not), the output is the input sorted best-first."""
    buffer = RankedBuffer(bound)
    for batch in batched(records, size):
        buffer.add(batch)
    out = [r for batch in buffer.drain() for r in batch]
    spilled = buffer.spilled
    buffer.close()
    assert out == sorted(records, key=order_key)
    assert spilled == (len(records) > bound)


@settings(max_examples=60, deadline=None)
@given(records_strategy, st.integers(1, 30))
def test_top_is_the_sorted_prefix(records: list[UrlRecord], n: int) -> None:
    """TopN(n) yields exactly the first n of the full ranked order."""
    top = TopN(n)
    for batch in batched(records, 7):
        top.add(batch)
    assert [r for b in top.drain() for r in b] == sorted(records, key=order_key)[:n]


def test_spilled_records_come_back_whole() -> None:
    """A record read back from the spill file equals the one that went in."""
    rich = UrlRecord(
        "https://e.com/a",
        lastmod=datetime(2024, 1, 2, tzinfo=UTC),
        changefreq="daily",
        priority=0.3,
        score=0.9,
        sitemap="https://e.com/s.xml",
        revisit=86400.0,
    )
    buffer = RankedBuffer(1)
    buffer.add([rich, UrlRecord("https://e.com/b", score=0.1)])
    assert buffer.spilled
    assert next(iter(buffer.drain()))[0] == rich


def test_sample_is_uniform_and_bounded() -> None:
    """Sample(5) of 20 URLs over 2,000 seeds: each URL kept 500 times give or take
    about 3.5 standard deviations (a fixed set of seeds: the counts never change), and
    never more than 5 records held."""
    urls = [f"https://e.com/{i}" for i in range(20)]
    kept = dict.fromkeys(urls, 0)
    for seed in range(2000):
        sample = Sample(5, seed)
        for batch in batched([UrlRecord(u) for u in urls], 3):
            sample.add(batch)
        out = [r.url for batch in sample.drain() for r in batch]
        assert len(out) == len(set(out)) == 5
        for url in out:
            kept[url] += 1
    assert all(430 <= count <= 570 for count in kept.values()), kept


@settings(max_examples=60, deadline=None)
@given(records_strategy, st.integers(1, 30), st.integers(0, 2**64), st.randoms())
def test_sample_depends_on_the_urls_and_the_seed_only(
    records: list[UrlRecord], n: int, seed: int, rng: random.Random
) -> None:
    """The same URLs offered in any order and batching give the same sample; at most n,
    all of them when there are fewer."""
    first, second = Sample(n, seed), Sample(n, seed)
    for batch in batched(records, 7):
        first.add(batch)
    shuffled = rng.sample(records, len(records))
    for batch in batched(shuffled, rng.randint(1, 9)):
        second.add(batch)
    one = [r.url for batch in first.drain() for r in batch]
    assert one == [r.url for batch in second.drain() for r in batch]
    assert len(one) == min(n, len(records))
    assert set(one) <= {r.url for r in records}


def test_sample_merges_copies_of_a_kept_url() -> None:
    """Another copy of a kept URL with a newer lastmod replaces it; a URL not kept stays out."""
    sample = Sample(1, 3)
    old = UrlRecord("https://e.com/a", datetime(2020, 1, 1, tzinfo=UTC), sitemap="https://e.com/1")
    sample.add([old])
    newer = UrlRecord(
        "https://e.com/a", datetime(2024, 1, 1, tzinfo=UTC), sitemap="https://e.com/2"
    )
    sample.merge([newer, UrlRecord("https://e.com/never-offered")])
    assert [r for batch in sample.drain() for r in batch] == [newer]


def test_a_sample_bigger_than_the_bound_spills_and_stays_the_same() -> None:
    """sample=N past max_ranked_in_memory (the CLI's --sample 1000000000 of a big site):
    memory for the bound, the rest in the temporary file, and the same records (dated
    copies merged in) in the same order as a sample held in memory (before: every
    record held)."""
    records = [UrlRecord(f"https://x/{i}", score=i / 3000) for i in range(3000)]
    dated = datetime(2024, 1, 1, tzinfo=UTC)
    copies = [UrlRecord(f"https://x/{i}", dated) for i in range(0, 3000, 7)]
    for n in (10, 2999, 10**9):
        held, spilling = Sample(n, 11), Sample(n, 11, bound=100)
        for start in range(0, 3000, 250):
            for sample in (held, spilling):
                sample.add(records[start : start + 250])
            if spilling._buffer is not None:
                assert len(spilling._buffer._memory) <= 100
        for sample in (held, spilling):
            sample.merge(copies)
        expected = [r for b in held.drain() for r in b]
        assert [r for b in spilling.drain() for r in b] == expected
        assert spilling.spilled is (n > 100) and len(expected) == min(n, 3000)
        assert any(r.lastmod == dated for r in expected)


def test_the_reader_sample_is_bounded_by_max_ranked_in_memory() -> None:
    """make_sink gives a sample past max_ranked_in_memory the spilling buffer, one within
    it the heap of N records."""
    limits = Limits(max_ranked_in_memory=100)
    big = make_sink(Delivery(sample=10**9), limits)
    small = make_sink(Delivery(sample=100), limits)
    assert isinstance(big, Sample) and big._buffer is not None
    assert isinstance(small, Sample) and small._buffer is None
