"""``dump --sample N --seed S``: a uniform random sample of the site's URLs, reproducible."""

from __future__ import annotations

import pytest

from tests.cli.test_commands import ServerFactory
from tests.conftest_cli import Doc, Site, run_cli, urlset

PAGES = 60


@pytest.fixture
async def site(aiohttp_server: ServerFactory) -> str:
    """One sitemap of 60 URLs; the origin."""
    server = await aiohttp_server(
        Site({"/s.xml": Doc(urlset(*(f"/p/{i}" for i in range(PAGES))))}).app()
    )
    return str(server.make_url("/s.xml"))


async def test_dump_sample_is_reproducible(site: str) -> None:
    """--sample 7 --seed 4: 7 distinct URLs of the site, the same lines twice; the summary
    counts 7 written; another seed gives another sample."""
    first = await run_cli("dump", site, "--sample", "7", "--seed", "4", "--format", "txt")
    again = await run_cli("dump", site, "--sample", "7", "--seed", "4", "--format", "txt")
    other = await run_cli("dump", site, "--sample", "7", "--seed", "5", "--format", "txt")
    assert first.code == again.code == other.code == 0, first.err
    lines = first.out.splitlines()
    assert lines == again.out.splitlines() and lines != other.out.splitlines()
    assert len(set(lines)) == 7 and all("/p/" in line for line in lines)
    assert "7 written" in first.err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sample", "3", "--top", "2"], "--sample: a sample has its own order"),
        (["--sample", "3", "--ranked"], "--sample: a sample has its own order"),
        (["--seed", "3"], "--seed: seed goes with sample"),
        (["--sample", "0"], "--sample"),
        (["--sample", "3", "--seed", "1" + "0" * 4000], "--seed: expected a whole number from 0"),
    ],
)
async def test_dump_sample_usage_errors(site: str, extra: list[str], message: str) -> None:
    """What --sample cannot go with is refused before anything is read, exit 2."""
    result = await run_cli("dump", site, *extra)
    assert result.code == 2 and message in result.err, result.err


async def test_dump_sample_of_the_filtered_urls(site: str) -> None:
    """--sample with --include: a sample of the URLs the filter keeps (the core filters
    before the sample), each counted: 3 written, the other 57 filtered out or unsampled."""
    result = await run_cli(
        "dump", site, "--sample", "3", "--seed", "1", "--include", "/p/1", "--format", "txt"
    )
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert len(set(lines)) == 3 and all("/p/1" in line for line in lines)
    assert "3 written, 49 filtered out" in result.err  # 11 of the 60 match /p/1


async def test_dump_top_counts_only_what_the_filter_keeps(site: str) -> None:
    """--top 5 --include: the five best of the URLs the filter keeps (before, the top five
    of every URL were filtered afterwards, and fewer than five could come out)."""
    result = await run_cli("dump", site, "--top", "5", "--include", "/p/5", "--format", "txt")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert len(lines) == 5 and all("/p/5" in line for line in lines)
