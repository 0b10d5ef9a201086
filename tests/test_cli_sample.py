"""``dump --sample N --seed S``: a uniform random sample of the site's URLs, reproducible."""

from __future__ import annotations

import pytest

from tests.conftest_cli import Doc, Site, run_cli, urlset
from tests.test_cli import ServerFactory

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
        (["--sample", "3", "--top", "2"], "--sample samples every URL"),
        (["--sample", "3", "--include", "p/1"], "--sample samples every URL"),
        (["--seed", "3"], "--seed goes with --sample"),
        (["--sample", "0"], "--sample"),
    ],
)
async def test_dump_sample_usage_errors(site: str, extra: list[str], message: str) -> None:
    """What --sample cannot go with is refused before anything is read, exit 2."""
    result = await run_cli("dump", site, *extra)
    assert result.code == 2 and message in result.err, result.err
