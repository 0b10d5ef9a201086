"""The loader's soak at 1,000,000 URLs (issue 41; ``make test-slow``): 200 loopback sites,
a few huge, many small, some failing, SIGKILLs at random moments, restarts on one
progress file (``tests/loader/soak_kit.py``; the 10 M run is
``benchmarks/loader.py --soak``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.loader.soak_kit import soak


@pytest.mark.slow
async def test_soak_a_million_urls(tmp_path: Path) -> None:
    """Nothing lost, nothing handed out again after its acknowledgement, at most the
    records in flight redelivered per kill, and memory flat: the last RSS sample within
    a bound of the first run's, whatever the URLs."""
    result = await soak(1_000_000, 200, 5, progress=str(tmp_path / "p.db"), say=False)
    print("\n" + result.table())
    assert (result.lost, result.twice_after_ack) == (0, 0)
    assert result.redelivered <= result.kills
    assert result.peak_rss < 200, result.rss  # MiB: the buffer, not the site
