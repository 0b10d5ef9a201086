"""The Delivery group (options/groups.py): its rules written once, the same at every door,
and what each door derives from it."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pytest

import sitemap_reader as sr
from sitemap_reader.engines.batch import discover_batches
from sitemap_reader.errors import UsageError
from sitemap_reader.options import Delivery, Options
from sitemap_reader.options.declare import OptionError, spec_of
from sitemap_reader.records.outcomes import Stopped
from tests.cli.test_commands import ServerFactory
from tests.conftest_cli import stalling_site
from tests.crawl.crawl_kit import FAST, Site, ThreadedServer, urlset

#: (keywords, the refusal every door gives): the rules between the fields.
RULES: list[tuple[dict[str, Any], str]] = [
    ({"sample": 3, "ranked": True}, "sample: a sample has its own order"),
    ({"sample": 3, "top": 2}, "sample: a sample has its own order"),
    ({"seed": 3}, "seed: seed goes with sample"),
    ({"top": 0}, "top: expected a whole number >= 1"),
    ({"sample": 2, "seed": -1}, "seed: expected a whole number from 0"),
    ({"include": "("}, "include: bad regular expression"),
]


def test_the_rules_hold_on_the_value_itself() -> None:
    """top implies ranked; max_urls is the core's budget unless the order waits for the
    whole run; include and exclude keep what one matches and the other does not."""
    assert Delivery(top=5).ordered and Delivery(sample=5).ordered and not Delivery().ordered
    assert Delivery(max_urls=9).budget == 9
    assert Delivery(max_urls=9, ranked=True).budget is None
    assert Delivery(max_urls=9, sample=3).budget is None
    kept = Options.of(include=["/blog/"], exclude=["draft"]).delivery
    assert kept.keeps("https://e.com/blog/a") and not kept.keeps("https://e.com/blog/draft")
    assert not kept.keeps("https://e.com/shop/a")


def _reader_door(given: dict[str, Any]) -> None:
    sr.SitemapReader(**given)


def _urls_door(given: dict[str, Any]) -> None:
    async def call() -> None:
        async with sr.SitemapReader() as reader:
            async for _ in reader.urls("https://example.invalid/s.xml", **given):
                pass

    asyncio.run(call())


def _iter_door(given: dict[str, Any]) -> None:
    list(sr.iter_urls("https://example.invalid/s.xml", **given))


def _engine_door(given: dict[str, Any]) -> None:
    list(discover_batches(["example.invalid"], **given))


def _options_door(given: dict[str, Any]) -> None:
    Options.of(**given)


DOORS: dict[str, Callable[[dict[str, Any]], None]] = {
    "Options.of": _options_door,
    "SitemapReader": _reader_door,
    "SitemapReader.urls": _urls_door,
    "iter_urls": _iter_door,
    "discover_batches": _engine_door,
}


@pytest.mark.parametrize("door", list(DOORS))
@pytest.mark.parametrize(("given", "refusal"), RULES)
def test_every_python_door_refuses_alike(door: str, given: dict[str, Any], refusal: str) -> None:
    """A rule is refused the same way at every Python door, naming the door and the option
    (iter_urls had no sample at all before)."""
    with pytest.raises(OptionError, match=re.escape(refusal)) as caught:
        DOORS[door](given)
    assert caught.value.door is None or caught.value.door.startswith(door.split(".")[0])


@pytest.mark.parametrize("name", ["ranked", "top", "sample", "seed"])
def test_the_loader_refuses_what_it_lacks_with_the_reason(name: str) -> None:
    """The loader hands records out by its own order: an ordering option is refused at
    once, with the reason its declaration gives; include and max_urls it takes."""
    value = {"ranked": True, "top": 2, "sample": 2, "seed": 1}[name]
    extra = {"sample": 2} if name == "seed" else {}  # a seed goes with a sample: named first
    named = "sample" if name == "seed" else name
    field = Delivery.__dataclass_fields__[named]
    with pytest.raises(UsageError, match=f"SitemapLoader: {named}: not at this door") as caught:
        sr.SitemapLoader(["example.invalid"], **{name: value, **extra})  # type: ignore[arg-type]
    assert str(spec_of(field).loader) in str(caught.value)
    loader = sr.SitemapLoader(["example.invalid"], include=["/blog/"], max_urls=5)
    assert loader._budget == 5  # the loader's own: it counts the URLs new to its file


def test_iter_urls_delivers_a_sample_and_filters() -> None:
    """iter_urls takes every delivery option (it had no sample): a seeded sample of the
    URLs the filter keeps, the same twice."""
    with ThreadedServer(Site()) as site:
        site.add("/s.xml", urlset([site.url(f"/p/{i}") for i in range(40)]))
        target = site.url("/s.xml")
        one = [r.url for r in sr.iter_urls(target, FAST, sample=4, seed=3, include="/p/1")]
        again = [r.url for r in sr.iter_urls(target, FAST, sample=4, seed=3, include="/p/1")]
    assert one == again and len(set(one)) == 4 and all("/p/1" in url for url in one)


async def test_a_stop_ends_the_reads_in_flight(aiohttp_server: ServerFactory) -> None:
    """max_urls reached while a child sitemap stalls mid-body: the run stops at once (the
    driver ends every read in flight) instead of waiting for the stalled body's timeout;
    the stalled sitemap is not finished, not failed, and the stop is typed."""
    options = FAST.replace(timeout=600.0, max_urls=3)
    async with stalling_site(aiohttp_server) as (base, _), sr.SitemapReader(options) as reader:
        records = await asyncio.wait_for(_drain(reader.urls(base + "/sitemap.xml")), 60)
        run_of = reader.last_run  # the wait is a hang guard only
    assert len(records) == 3 and run_of is not None
    stats = run_of.stats
    assert stats.stopped == Stopped("budget", "max_urls", 3)
    assert stats.to_dict()["stopped"] == {"kind": "budget", "option": "max_urls", "limit": 3}
    (slow_node,) = [n for n in run_of.nodes() if n.url.endswith("/slow.xml")]
    assert not slow_node.complete and not any(p.fatal for p in slow_node.problems)


async def _drain(records: Any) -> list[sr.UrlRecord]:
    return [record async for record in records]


@pytest.mark.parametrize(
    "given",
    [
        {"a.example": f"http://crawler:{'s3cr3t'}@proxy:3128"},  # a proxy URL, not a mapping
        '{"a.example": {"proxy": "http://crawler:s3cr3t@proxy:3128"}',  # JSON cut short
        {"a.example": {"proxy": "ftp://crawler:s3cr3t@proxy"}},
        {"a.example": {"headers": {"Cookie": "session=s3cr3t\n"}}},
        [("a.example", {"headers": ["s3cr3t"]})],
    ],
)
def test_a_refused_per_target_value_never_echoes_a_credential(given: object) -> None:
    """per_target=: a refused shape, JSON text, proxy or header says what is wrong without
    the password or the header value it holds."""
    with pytest.raises(UsageError) as refused:
        sr.Options.of(per_target=given)
    assert "s3cr3t" not in str(refused.value)


def test_a_group_given_as_a_mapping_never_echoes_its_credentials() -> None:
    """network={...} instead of a Network value: refused, its header value and proxy
    password hidden in the message."""
    with pytest.raises(UsageError, match="network must be Network") as refused:
        sr.SitemapReader(network={"headers": {"Authorization": "Bearer s3cr3t"}})  # type: ignore[arg-type]
    assert "s3cr3t" not in str(refused.value)
