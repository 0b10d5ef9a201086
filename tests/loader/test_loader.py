"""SitemapLoader (sitemap_reader/loader.py): pull, acknowledge, fail, buffer, resume."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import sitemap_reader as sr
from sitemap_reader.crawl.traverse import MAX_BATCH
from sitemap_reader.errors import StateError, UsageError
from sitemap_reader.loader import FROM_PROGRESS
from sitemap_reader.records import UrlRecord
from sitemap_reader.store.progress import ProgressStore
from tests.crawl.crawl_kit import FAST
from tests.loader.conftest import MakeSite
from tests.loader.kill_kit import Audit, run_child


async def drain(loader: sr.SitemapLoader) -> list[UrlRecord]:
    """Take and acknowledge every record."""
    taken = []
    while (record := await loader.next()) is not None:
        taken.append(record)
        await loader.ack(record.url)
    return taken


async def test_every_url_once_then_none(make_site: MakeSite, tmp_path: Path) -> None:
    """Every URL of the site is handed out once; next() is None at the end; counters agree."""
    site = await make_site(3, 40)
    async with sr.SitemapLoader(site.base, progress=tmp_path / "p.db", options=FAST) as loader:
        taken = await drain(loader)
        assert await loader.next() is None
        assert loader.finished and not loader.reading
        assert (loader.handled, loader.pending, loader.total_known) == (120, 0, 120)
    assert sorted(r.url for r in taken) == sorted(site.page_urls())


async def test_without_progress_file_leaves_nothing(make_site: MakeSite, tmp_path: Path) -> None:
    """Without progress=, a temporary file is used, in a private folder (its -wal, -shm
    and -lock too: no name beside it another user could plant a link at), and removed on
    close."""
    site = await make_site(1, 5)
    async with sr.SitemapLoader(site.base, options=FAST) as loader:
        temporary = loader._temporary
        assert temporary is not None and Path(temporary).is_dir()
        assert Path(temporary).stat().st_mode & 0o777 == 0o700
        assert len(await drain(loader)) == 5
    assert not Path(temporary).exists()


async def test_best_first_within_the_buffer(make_site: MakeSite, tmp_path: Path) -> None:
    """best_first=True: with the whole site in the buffer, scores never increase."""
    site = await make_site(2, 30)
    async with sr.SitemapLoader(
        site.base, progress=tmp_path / "p.db", buffer=10_000, best_first=True, options=FAST
    ) as loader:
        first = await loader.next()
        assert first is not None
        await loader.ack(first.url)
        # The first refill happened as soon as records arrived; wait for the rest by taking.
        scores = [r.score for r in await drain(loader)]
    assert len(scores) == 59
    assert first.score >= max(scores) or scores == sorted(scores, reverse=True)


async def test_buffer_bounds_what_waits(make_site: MakeSite, tmp_path: Path) -> None:
    """Backpressure: at every step, at most buffer + one batch of records wait unclaimed."""
    site = await make_site(6, 1000)
    buffer = 50
    async with sr.SitemapLoader(
        site.base, progress=tmp_path / "p.db", buffer=buffer, options=FAST
    ) as loader:
        most = 0
        count = 0
        while (record := await loader.next()) is not None:
            most = max(most, loader.queued)
            await loader.ack(record.url)
            count += 1
    assert count == 6000
    assert most <= buffer + MAX_BATCH


async def test_fail_hands_out_again_then_gives_up(make_site: MakeSite, tmp_path: Path) -> None:
    """fail() puts a URL back; after max_tries failures it is given up and counted."""
    site = await make_site(1, 3)
    async with sr.SitemapLoader(
        site.base, progress=tmp_path / "p.db", max_tries=2, options=FAST
    ) as loader:
        seen: list[str] = []
        while (record := await loader.next()) is not None:
            seen.append(record.url)
            if record.url.endswith("/p/0/1"):
                await loader.fail(record.url)
            else:
                await loader.ack(record.url)
        assert seen.count(site.url("/p/0/1")) == 2
        assert (loader.handled, loader.failed, loader.pending) == (2, 1, 0)


async def test_ack_of_a_url_not_handed_out(make_site: MakeSite, tmp_path: Path) -> None:
    """Acknowledging a URL never handed out (or twice) is a usage error."""
    site = await make_site(1, 2)
    async with sr.SitemapLoader(site.base, progress=tmp_path / "p.db", options=FAST) as loader:
        record = await loader.next()
        assert record is not None
        with pytest.raises(UsageError, match="not handed out"):
            await loader.ack(site.url("/elsewhere"))
        await loader.ack(record.url)
        with pytest.raises(UsageError, match="already settled"):
            await loader.ack(record.url)


async def test_without_async_with_opens_on_first_use_and_closes_at_the_end(
    make_site: MakeSite,
) -> None:
    """Without ``async with``: the first next() opens the loader, every URL comes once, and
    the loader closes itself once finished (its temporary file removed)."""
    site = await make_site(2, 15)
    loader = sr.SitemapLoader(site.base, options=FAST)
    assert not loader.opened and not loader.finished
    first = await loader.next()
    assert first is not None and loader.opened
    temporary = loader._temporary
    assert temporary is not None and Path(temporary).exists()
    await loader.ack(first.url)
    taken = [first, *await drain(loader)]
    assert sorted(r.url for r in taken) == sorted(site.page_urls())
    assert not loader.opened and loader.finished and loader.handled == 30
    assert await loader.next() is None
    assert not Path(temporary).exists()


def test_bad_options() -> None:
    """A bad buffer, max_tries, target list or reader option fails at construction."""
    for kwargs, message in (
        ({"buffer": 0}, "buffer"),
        ({"max_tries": 0}, "max_tries"),
        ({"scope": "galaxy"}, "scope"),
        ({"deadline": -1.0}, "deadline"),
    ):
        with pytest.raises(UsageError, match=message):
            sr.SitemapLoader("example.com", **kwargs)
    with pytest.raises(UsageError, match="no target"):
        sr.SitemapLoader([])


@pytest.mark.parametrize(
    ("targets", "shown"), [(None, "None"), ([42], "42"), (42, "42"), (["a.example", b"x"], "b'x'")]
)
def test_targets_that_are_not_text_are_refused(targets: object, shown: str) -> None:
    """SitemapLoader(None), ([42]), (42): a UsageError naming the door and the targets
    (before: a TypeError or an AttributeError from inside)."""
    with pytest.raises(UsageError) as caught:
        sr.SitemapLoader(targets)  # type: ignore[arg-type]
    assert str(caught.value) == (
        f"SitemapLoader: targets: expected a domain, a URL or a list of them, got {shown}"
    )


def _junk(best_first: bool) -> object:
    return 42


def _no_argument() -> object:
    return None


@pytest.mark.parametrize(
    ("order", "said"),
    [(_junk, "gave 42, not a hand-out policy"), (_no_argument, "(best_first) failed: TypeError")],
)
def test_an_order_function_giving_no_policy_is_refused(order: object, said: str) -> None:
    """order= a function that returns junk, or cannot be called with best_first: a
    UsageError naming the loader and order, at construction (before: an AttributeError
    or TypeError at the first hand-out)."""
    with pytest.raises(UsageError) as caught:
        sr.SitemapLoader("example.com", order=order)  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith("SitemapLoader: order: ") and said in message, message


async def test_resume_skips_finished_sitemaps(make_site: MakeSite, tmp_path: Path) -> None:
    """A loader closed midway: the next one hands out only the rest, and fetches no urlset
    the first one finished."""
    site = await make_site(6, 50)
    progress = tmp_path / "p.db"
    first: list[str] = []
    async with sr.SitemapLoader(site.base, progress=progress, buffer=20, options=FAST) as loader:
        for _ in range(170):
            record = await loader.next()
            assert record is not None
            first.append(record.url)
            await loader.ack(record.url)
    hits = dict(site.hits)
    store = ProgressStore(progress)
    taken = store.sitemap_records()
    store.close()
    assert any(done for _, done in taken.values()), "a urlset was read completely"
    assert any(records and not done for records, done in taken.values()), "one is half-read"
    async with sr.SitemapLoader(site.base, progress=progress, buffer=20, options=FAST) as loader:
        rest = [r.url for r in await drain(loader)]
        assert loader.run is not None
        answered = [n for n in loader.run.nodes() if n.unchanged == FROM_PROGRESS]
    assert not set(first) & set(rest)
    assert set(first) | set(rest) == site.page_urls()
    assert answered, "some urlsets were finished by the first loader"
    for node in answered:
        path = node.url.removeprefix(site.base)
        assert site.hits[path] == hits.get(path, 0), f"{path} was fetched again"


async def test_a_finished_file_reads_nothing(make_site: MakeSite, tmp_path: Path) -> None:
    """Once a discovery ended, a new loader on the file fetches nothing and has nothing."""
    site = await make_site(2, 10)
    progress = tmp_path / "p.db"
    async with sr.SitemapLoader(site.base, progress=progress, options=FAST) as loader:
        assert len(await drain(loader)) == 20
    requests = len(site.requests)
    async with sr.SitemapLoader(site.base, progress=progress, options=FAST) as loader:
        assert await loader.next() is None
        assert (loader.handled, loader.total_known) == (20, 20)
    assert len(site.requests) == requests


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"hello, not a database\n" * 10, "not SQLite"),
        ("sqlite:other", "another program"),
        ("sqlite:state", "incremental state file"),
        ("sqlite:newer", "schema 9 is newer"),
    ],
)
async def test_foreign_files_are_refused_untouched(
    tmp_path: Path, content: bytes | str, message: str
) -> None:
    """A file that is not a progress file of this schema is refused with a clear error,
    byte for byte as it was."""
    import sqlite3

    path = tmp_path / "p.db"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        db = sqlite3.connect(path)
        kind = content.split(":")[1]
        db.execute("CREATE TABLE t (x)")
        if kind == "other":
            db.execute("PRAGMA application_id = 1234")
        elif kind == "state":
            db.execute("PRAGMA application_id = 0x53527374")
        else:
            db.execute("PRAGMA application_id = 0x53526C70")
            db.execute("PRAGMA user_version = 9")
        db.commit()
        db.close()
    before = path.read_bytes()
    loader = sr.SitemapLoader("http://127.0.0.1:9/", progress=path)
    with pytest.raises(StateError, match=message):
        await loader.__aenter__()
    assert path.read_bytes() == before


async def test_a_directory_is_refused(tmp_path: Path) -> None:
    """progress= naming a directory is a clear error."""
    loader = sr.SitemapLoader("http://127.0.0.1:9/", progress=tmp_path)
    with pytest.raises(StateError, match="directory"):
        await loader.__aenter__()


@pytest.mark.slow
async def test_sigkill_at_random_points(make_site: MakeSite, tmp_path: Path) -> None:
    """A loader child killed with SIGKILL at random points (once or twice), then run to its end: no
    URL lost, none handed out again after its acknowledgement, at most the one in flight
    handed out again per kill, and no urlset finished before a kill fetched again."""
    site = await make_site(6, 100)
    expected = site.page_urls()
    for trial in range(3):
        chooser = random.Random(trial)
        progress = str(tmp_path / f"p{trial}.db")
        audit = Audit()
        # Two lines per URL (out, ack): kill points over the first 90% of them.
        kills = sorted(chooser.sample(range(1, int(1.8 * len(expected))), 1 + trial % 2))
        printed = 0
        for kill_at in kills:
            run = await run_child(site.base, progress, buffer=64, kill_after=kill_at - printed)
            printed = kill_at
            audit.add(run)
            assert run.killed, "the kill point is before the end"
        done_before = _done_paths(progress, site.base)
        hits_before = {path: site.hits[path] for path in done_before}
        last = await run_child(site.base, progress, buffer=64, kill_after=None)
        audit.add(last)
        assert audit.lost(expected, progress) == set(), trial
        assert audit.duplicates() == [], trial
        assert len(audit.redelivered()) <= len(kills), trial
        for path in done_before:
            assert site.hits[path] == hits_before[path], f"{path} fetched again"


def _done_paths(progress: str, base: str) -> list[str]:
    store = ProgressStore(progress)
    try:
        return [u.removeprefix(base) for u in store.done_sitemaps() if "/s/" in u]
    finally:
        store.close()


def test_import_loads_no_aiohttp() -> None:
    """``import sitemap_reader`` still loads no aiohttp; SitemapLoader resolves on use."""
    import subprocess
    import sys

    code = (
        "import sys, sitemap_reader as sr; assert 'aiohttp' not in sys.modules; "
        "sr.SitemapLoader; assert 'aiohttp' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_a_damaged_progress_file_is_a_clear_error(tmp_path: Path) -> None:
    """A progress file of ours whose pages were overwritten gives a one-line StateError
    naming the file, not a SQLite traceback."""
    path = tmp_path / "p.db"
    ProgressStore(path).close()
    data = bytearray(path.read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)
    path.write_bytes(bytes(data))
    loader = sr.SitemapLoader("http://127.0.0.1:9/", progress=path)
    with pytest.raises(StateError, match=f"progress file {path}"):
        await loader.__aenter__()


async def test_a_typed_private_name_is_trusted_for_its_own_target_only(tmp_path: Path) -> None:
    """A loader of two targets: intranet.test (typed, resolving to loopback) is read; the
    other target's index child on intranet.test is refused, never fetched on its trust."""
    from tests.crawl.crawl_kit import Site, index, start, urlset
    from tests.hostile.test_guard import FakeResolver

    site = Site()
    server = await start(site)
    port = site.host.rsplit(":", 1)[1]
    own, public = f"http://intranet.test:{port}", f"http://public.example:{port}"
    site.add("/own.xml", urlset([f"{own}/own-page"]))
    site.add("/index.xml", index([f"{own}/secret.xml"]))
    site.add("/secret.xml", urlset([f"{own}/secret-page"]))
    resolver = FakeResolver("intranet.test", "public.example")
    targets = [f"{own}/own.xml", f"{public}/index.xml"]
    try:
        async with sr.SitemapLoader(targets, resolver=resolver, options=FAST) as loader:
            taken = await drain(loader)
    finally:
        await server.close()
    assert [r.url for r in taken] == [f"{own}/own-page"]
    assert site.hits["/secret.xml"] == 0
