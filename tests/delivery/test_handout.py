"""sitemap_reader.delivery.handout: the loader's hand-out policies (point 4 of issue 32):
round-robin across hosts, best first within each host when asked, the reading order, or
a policy of one's own. The loader's window over them: tests/loader/test_fair.py."""

from __future__ import annotations

from typing import Any

import pytest

from sitemap_reader.delivery.handout import (
    ByHost,
    BySite,
    HandOut,
    InOrder,
    Row,
    SiteQueues,
    make_policy,
    site_of,
)
from sitemap_reader.records import UrlRecord


def _rows(hosts: str, per_host: int) -> list[Row]:
    """Rows read host by host (all of a's, then all of b's...), scores rising."""
    urls = [f"http://{h}/{n}" for h in hosts for n in range(per_host)]
    return [(i, UrlRecord(u, score=(i % per_host) / per_host)) for i, u in enumerate(urls)]


def _taken(policy: HandOut, rows: list[Row]) -> list[UrlRecord]:
    for row in rows:
        policy.put(row)
    out = []
    while (taken := policy.take()) is not None:
        out.append(taken[1])
    assert len(policy) == 0
    return out


def test_by_host_turns_round_and_keeps_each_host_in_order() -> None:
    """ByHost: a, b, c, a, b, c...; within a host, oldest first."""
    taken = _taken(ByHost(best_first=False), _rows("abc", 4))
    hosts = [r.url.split("/")[2] for r in taken]
    assert hosts == list("abc") * 4
    assert [r.url for r in taken if "//a/" in r.url] == [f"http://a/{n}" for n in range(4)]


def test_by_host_best_first_within_each_host() -> None:
    """ByHost(best_first=True): still one host after the other, each best first."""
    taken = _taken(ByHost(best_first=True), _rows("ab", 5))
    assert [r.url.split("/")[2] for r in taken] == list("ab") * 5
    for host in "ab":
        scores = [r.score for r in taken if f"//{host}/" in r.url]
        assert scores == sorted(scores, reverse=True)


def test_in_order_and_a_policy_of_ones_own() -> None:
    """order="intake" is the reading order; order=function builds any HandOut."""
    rows = _rows("ab", 3)
    assert [r.url for r in _taken(InOrder(False), rows)] == [r.url for _, r in rows]
    best = [r.score for r in _taken(make_policy("intake", True), rows)]
    assert best == sorted(best, reverse=True)
    built: list[bool] = []

    def mine(best_first: bool) -> HandOut:
        built.append(best_first)
        return InOrder(best_first)

    assert isinstance(make_policy(mine, True), InOrder) and built == [True]


def test_a_function_that_gives_no_policy_is_a_value_error() -> None:
    """order= a function of the caller's: one that fails or returns something without
    put, take and len is a ValueError saying so (the loader names itself and order)."""
    cases: list[tuple[Any, str]] = [
        (lambda best_first: 42, "gave 42, not a hand-out policy (put, take, len)"),
        (lambda best_first: [], "gave [], not a hand-out policy"),
        (len, "(best_first) failed: TypeError"),
    ]
    for order, said in cases:
        with pytest.raises(ValueError) as caught:
            make_policy(order, False)
        assert said in str(caught.value)
    assert isinstance(make_policy(InOrder, True), InOrder)


def test_by_site_counts_a_site_of_300_subdomains_once() -> None:
    """BySite (the default): a site spread over 300 subdomains read first, then a small
    site: the small site has one hand-out of every two, not one of every 301 (ByHost's,
    kept as order="hosts"); the big site's hosts still take turns among themselves."""
    big = [f"http://h{n % 300}.big.example/{n}" for n in range(3000)]
    small = [f"http://small.example/{n}" for n in range(10)]
    rows = [(i, UrlRecord(u)) for i, u in enumerate(big + small)]
    by_site = [r.url for r in _taken(BySite(best_first=False), rows)]
    places = [by_site.index(u) + 1 for u in small]
    assert places == [2 * k for k in range(1, 11)]
    assert [u.split("/")[2] for u in by_site[:6:2]] == [
        "h0.big.example",
        "h1.big.example",
        "h2.big.example",
    ]
    by_host = [r.url for r in _taken(ByHost(best_first=False), rows)]
    assert by_host.index(small[-1]) > 300 * 9
    assert isinstance(make_policy("sites", False), BySite)


def test_site_of_is_the_registrable_domain() -> None:
    """A site is the registrable domain; a host without one (an IP, localhost) is its
    own site with its port."""
    assert site_of("a.b.example.co.uk") == site_of("example.co.uk:8080") == "example.co.uk"
    assert site_of("alice.github.io") != site_of("bob.github.io")
    assert site_of("127.0.0.1:8080") == "127.0.0.1:8080" != site_of("127.0.0.1:8081")
    assert site_of("[::1]:80") == "[::1]:80" and site_of("localhost") == "localhost"


def test_site_queues_let_records_out_in_turns_and_know_what_passed() -> None:
    """SiteQueues: a site's records in the order read, sites in turns; a mark taken while
    records are held has passed once every one of them was taken."""
    held = SiteQueues()
    held.put([UrlRecord(f"http://h{n}.big.example/{n}") for n in range(6)])
    held.put([UrlRecord(f"http://small.example/{n}") for n in range(2)])
    mark = held.mark()
    held.put([UrlRecord("http://late.example/1")])
    first = [r.url for r in held.take(5)]
    assert first == [
        "http://h0.big.example/0", "http://small.example/0", "http://late.example/1",
        "http://h1.big.example/1", "http://small.example/1",
    ]  # fmt: skip
    assert not held.passed(mark) and len(held) == 4
    assert len(held.take(10)) == 4 and held.passed(mark) and len(held) == 0
