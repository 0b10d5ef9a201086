"""The verdict benchmark's small version (issue 42, point 4): 60 simulated domains of every
behaviour on loopback (benchmarks/verdicts.py), read by ours in this process. A correctness
check, not a timing: every verdict kind's precision and recall is at least 0.98, no site
that answered with a block is called absent, and every domain whose sitemaps aiohttp can
read has its URLs found (with client=auto, the fingerprint-walled ones too)."""

from __future__ import annotations

from typing import Literal

import pytest

from benchmarks.verdicts import READABLE, misses, read_ours, score, served
from tests.conftest import NO_BROWSER, browser_extra

DOMAINS = 60


@pytest.mark.parametrize("client", ["aiohttp", "auto"])
async def test_verdicts_are_right_on_the_small_benchmark(
    client: Literal["aiohttp", "auto"],
) -> None:
    if client == "auto" and not browser_extra():
        pytest.skip(NO_BROWSER)
    with served(DOMAINS) as world:
        verdicts, counts = await read_ours(world, client)
    scores = score(world, client, verdicts, counts)
    assert set(scores.support) >= {"ok", "partial", "empty", "absent", "blocked"}
    assert set(scores.support) >= {"unreachable", "broken"}
    wrong = misses(world, client, verdicts)
    for kind in scores.support:
        assert scores.precision[kind] >= 0.98, (kind, wrong)
        assert scores.recall[kind] >= 0.98, (kind, wrong)
    walled = {d.name for d in world.domains if d.truth("aiohttp") == "blocked"}
    assert not [n for n in walled if verdicts[n] == "absent"]
    readable = [d for d in world.domains if d.behaviour in READABLE and d.expected]
    lost = [d.name for d in readable if counts.get(d.name, 0) < 0.99 * d.expected]
    if client == "auto":
        assert lost == [] and scores.found == 1.0
    else:  # only the fingerprint walls keep their URLs from aiohttp
        assert {d.behaviour for d in readable if d.name in lost} <= {"fingerprint"}
