"""sitemap_reader.crawl.schedule: host-fair scheduling and the bounded output channel."""

from __future__ import annotations

import asyncio

import pytest

from sitemap_reader.crawl.schedule import Channel, HostScheduler
from sitemap_reader.options import Parallelism


async def test_scheduler_bounds_and_turns() -> None:
    """The scheduler keeps global and per-host bounds and lets hosts take turns."""
    scheduler = HostScheduler(Parallelism(concurrency=3, per_host=2))
    running: dict[str, int] = {}
    peak = {"all": 0, "host": 0}
    order: list[str] = []
    gate = asyncio.Event()

    def job(host: str) -> object:
        async def run() -> None:
            order.append(host)
            running[host] = running.get(host, 0) + 1
            peak["all"] = max(peak["all"], sum(running.values()))
            peak["host"] = max(peak["host"], running[host])
            if sum(running.values()) == 3:
                gate.set()
            await gate.wait()
            running[host] -= 1

        return run

    for _ in range(4):
        scheduler.push("a", job("a"))  # type: ignore[arg-type]
    for _ in range(4):
        scheduler.push("b", job("b"))  # type: ignore[arg-type]
    await scheduler.run()
    assert peak == {"all": 3, "host": 2} and len(order) == 8
    assert order[:3] in (["a", "b", "a"], ["a", "a", "b"])
    assert set(order[:3]) == {"a", "b"}


async def test_scheduler_reraises_job_errors() -> None:
    """A bug in a job surfaces as itself, not wrapped in an ExceptionGroup."""
    scheduler = HostScheduler(Parallelism(concurrency=1, per_host=1))

    async def broken() -> None:
        raise KeyError("bug")

    scheduler.push("h", broken)
    with pytest.raises(KeyError):
        await scheduler.run()


async def test_channel_bounded_and_closable() -> None:
    """put() waits when full; get() drains then returns None after close()."""
    channel: Channel[int] = Channel(2)
    await channel.put(1)
    await channel.put(2)
    assert channel.full()
    blocked = asyncio.ensure_future(channel.put(3))
    await asyncio.sleep(0)
    assert not blocked.done()
    assert await channel.get() == 1
    await blocked
    channel.close()
    assert [await channel.get(), await channel.get(), await channel.get()] == [2, 3, None]
