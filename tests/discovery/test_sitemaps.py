"""The sitemap jobs (discovery/sitemaps.py), driven by hand: the per-sitemap deadline
while parsing, the wire cap, a cut body fetched again, redirects refused, a local file
that cannot be read; and the run's deadline (discovery/run_state.py)."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from sitemap_reader.discovery import Discovery, Fetch, Schedule, Stop, classify
from sitemap_reader.discovery.model import Stopped
from sitemap_reader.options import Options
from sitemap_reader.options.limits import Limits
from tests.discovery.test_core import BASE, Bodies, Harness, index, urlset


def test_deadline_is_checked_while_parsing() -> None:
    """A clock that has run out stops the parse between slices: a timeout, records kept."""
    paths = [f"/p/{i}" for i in range(3000)]
    bodies: Bodies = {"/s.xml": urlset(*paths)}
    calls = []

    def expired() -> bool:
        calls.append(1)
        return len(calls) > 1  # the budget runs out during the first big chunk

    core = Discovery([classify(BASE + "/s.xml")], Options.of(timeout=5))
    harness = Harness(core, bodies, chunk=len(bodies["/s.xml"]), expired=expired)  # type: ignore[arg-type]
    harness.run()
    node = core.run.tree[0]
    assert node.problems[0].code == "timeout"
    assert node.problems[0].message == "no complete answer within 5 s"
    assert 0 < len(harness.records) < len(paths)  # what was parsed before the deadline stays


def test_wire_bytes_are_capped() -> None:
    """A gzip member followed by endless NUL padding stops at the wire cap, records kept."""
    member = gzip.compress(urlset("/1", "/2"), mtime=0)
    body = member + b"\0" * (300 * 1024)
    limits = Limits(max_decompressed_bytes=64 * 1024)  # wire cap: 128 KiB
    core = Discovery([classify(BASE + "/s.xml.gz")], Options.of(limits=limits))
    harness = Harness(core, {"/s.xml.gz": body}, chunk=16 * 1024)
    harness.run()
    node = core.run.tree[0]
    assert node.problems[0].code == "limit-wire-bytes"
    assert node.bytes <= limits.wire_cap() + 16 * 1024
    assert [r.url for r in harness.records] == [BASE + "/1", BASE + "/2"]


def test_empty_deflate_blocks_are_capped() -> None:
    """A deflate stream of empty blocks (no output at all) stops at the wire cap."""
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    empty_block = b"\x00\x00\x00\xff\xff"  # a stored block of length 0, not the last
    body = header + empty_block * 40_000  # 200 KB that inflate to nothing
    assert zlib.decompressobj(wbits=31).decompress(body) == b""
    limits = Limits(max_decompressed_bytes=32 * 1024)
    core = Discovery([classify(BASE + "/s.xml.gz")], Options.of(limits=limits))
    Harness(core, {"/s.xml.gz": body}, chunk=8 * 1024).run()
    assert core.run.tree[0].problems[0].code == "limit-wire-bytes"


def first_fetch(core: Discovery) -> Fetch:
    """Start the run and begin its first job: that job's fetch."""
    (schedule,) = core.start()
    assert isinstance(schedule, Schedule)
    (fetch,) = core.begin(schedule.ticket)
    assert isinstance(fetch, Fetch)
    return fetch


def test_a_cut_body_is_fetched_once_more() -> None:
    """A body cut by a lost connection: fetched again from its final URL, once; the
    second cut fails the sitemap."""
    core = Discovery([classify(BASE + "/s.xml")])
    fetch = first_fetch(core)
    core.response(fetch.ticket, url=BASE + "/moved.xml", status=200)
    (again,) = core.failure(fetch.ticket, "body", "connection lost")
    assert isinstance(again, Fetch) and again.url == BASE + "/moved.xml"
    actions = core.failure(fetch.ticket, "body", "connection lost again")
    assert not any(isinstance(a, Fetch) for a in actions)
    node = core.run.tree[0]
    assert [p.code for p in node.problems] == ["body-retried", "body"]
    assert node.failed and core.stats.sitemaps_failed == 1


def test_a_redirect_back_into_its_chain_is_a_loop() -> None:
    """A refused hop that is the job's own URL (or an earlier hop): a redirect loop."""
    core = Discovery([classify(BASE + "/a.xml")])
    fetch = first_fetch(core)
    assert core.redirect(fetch.ticket, BASE + "/b.xml")
    assert not core.redirect(fetch.ticket, BASE + "/a.xml")
    core.refused(fetch.ticket, BASE + "/a.xml", [BASE + "/b.xml", BASE + "/a.xml"], 301)
    node = core.run.tree[0]
    assert node.reason == f"redirect loop: {BASE}/a.xml -> {BASE}/b.xml -> {BASE}/a.xml"


def test_a_redirect_to_robots_txt_is_a_skip() -> None:
    """A sitemap redirecting to robots.txt: refused, and the sitemap is skipped (no failure)."""
    core = Discovery([classify(BASE + "/a.xml")])
    fetch = first_fetch(core)
    actions = core.response(
        fetch.ticket, url=BASE + "/robots.txt", status=200, redirects=[BASE + "/robots.txt"]
    )
    node = core.run.tree[0]
    assert str(node.skipped) == f"redirects to robots.txt: {BASE}/robots.txt"
    assert [type(a).__name__ for a in actions] == ["Done"] and not node.failed


def test_a_local_file_that_cannot_be_read(tmp_path: Path) -> None:
    """A file target whose read fails: a ``read`` problem naming the path."""
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset("/a"))
    core = Discovery([classify(str(path))])
    fetch = first_fetch(core)
    assert fetch.kind == "file" and fetch.url == str(path)
    core.failure(fetch.ticket, "read", "permission denied")
    node = core.run.tree[0]
    assert (node.problems[0].code, node.problems[0].message) == (
        "read",
        f"cannot read {path}: permission denied",
    )
    assert node.failed and node.problems[0].fatal


def test_the_run_stops_at_its_deadline() -> None:
    """deadline: read on the driver's clock as jobs start; then the run stops, once."""
    now = [0.0]
    core = Discovery([classify(BASE + "/s.xml")], Options.of(deadline=5), clock=lambda: now[0])
    assert core.remaining() == 5.0 and core.overdue() == []
    now[0] = 6.0
    assert core.remaining() == 0.0
    deadline = Stopped("deadline", "deadline", 5.0)
    assert core.overdue() == [Stop(deadline)] and core.overdue() == []
    assert core.stopped == core.stats.stopped == deadline
    (schedule,) = core.start()
    assert isinstance(schedule, Schedule)
    core.begin(schedule.ticket)
    assert str(core.run.tree[0].skipped) == "the run stopped"


def test_children_the_budget_cut_before_their_first_element_are_not_finished() -> None:
    """max_urls=3 on an index of three children read at once: the first child's records
    stop the run while the others have only begun (a few bytes of the prolog, or nothing):
    those are cut short, not finished, never "not a sitemap" (before: format unknown, so
    the summary said ``failed: ... (not a sitemap)``, depending on timing)."""
    from sitemap_reader.cli.summary import Outcome, summary_lines

    core = Discovery([classify(BASE + "/index.xml")], Options.of(max_urls=3))
    index_fetch = first_fetch(core)
    core.response(index_fetch.ticket, url=index_fetch.url, status=200)
    schedules = core.body(index_fetch.ticket, index("/a.xml", "/b.xml", "/c.xml"))
    schedules += core.end(index_fetch.ticket)
    fetches = [core.begin(s.ticket)[0] for s in schedules if isinstance(s, Schedule)]
    assert len(fetches) == 3
    tickets = []
    for fetch in fetches:
        assert isinstance(fetch, Fetch)
        core.response(fetch.ticket, url=fetch.url, status=200)
        tickets.append(fetch.ticket)
    a, b, c = tickets
    core.body(b, b'<?xml version="1.0" enc')  # the prolog only: no element yet
    core.body(a, urlset(*(f"/p{n}" for n in range(50))))
    assert core.stopped == Stopped("budget", "max_urls", 3)
    for ticket in (a, b, c):
        core.end(ticket)
    cut = [n for n in core.run.tree[0].children if n.url != BASE + "/a.xml"]
    assert [n.format for n in cut] == [None, None]
    assert all(n.cut_short and n.reason != "not a sitemap" for n in cut)
    lines = summary_lines(core.stats, core.run.tree, Outcome(written=3))
    assert not any(line.startswith("failed:") for line in lines), lines
    assert [line for line in lines if line.startswith("not finished")] == [
        f"not finished: {BASE}/{name}.xml" for name in "abc"
    ]
