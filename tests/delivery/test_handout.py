"""sitemap_reader.delivery.handout: the loader's hand-out policies (point 4 of issue 32):
round-robin across hosts, best first within each host when asked, the reading order, or
a policy of one's own. The loader's window over them: tests/loader/test_fair.py."""

from __future__ import annotations

import pytest

from sitemap_reader.delivery.handout import ByHost, HandOut, InOrder, Row, make_policy
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
    for order, said in (
        (lambda best_first: 42, "gave 42, not a hand-out policy (put, take, len)"),
        (lambda best_first: [], "gave [], not a hand-out policy"),
        (len, "(best_first) failed: TypeError"),
    ):
        with pytest.raises(ValueError) as caught:
            make_policy(order, False)
        assert said in str(caught.value)
    assert isinstance(make_policy(InOrder, True), InOrder)
