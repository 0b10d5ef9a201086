"""Which child sitemaps become jobs (discovery/children.py): the pure skip rule, table
by table, then the Children part alone and on the harness."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest

from sitemap_reader.discovery import Discovery, Done, Schedule, SitemapNode, classify
from sitemap_reader.discovery.actions import Action
from sitemap_reader.discovery.children import (
    MAX_SKIPPED_NODES,
    STOPPED,
    VISITED,
    Children,
    Skip,
    child_of,
    listed_sitemap,
    skip_reason,
)
from sitemap_reader.discovery.job import Job, Site
from sitemap_reader.discovery.model import Skipped
from sitemap_reader.discovery.robots_audit import RobotsAudit
from sitemap_reader.discovery.run_state import RunState
from sitemap_reader.discovery.scheduling import Scheduling
from sitemap_reader.options import Options, Walk
from sitemap_reader.options.limits import Limits
from tests.discovery.test_core import BASE, Bodies, Harness, index, urlset

OLD = datetime(2001, 1, 1, tzinfo=UTC)
SINCE = datetime(2020, 1, 1, tzinfo=UTC)
URL = BASE + "/child.xml"
LIMITS = Limits(max_depth=3, max_sitemaps=10, max_html_depth=2, max_html_pages=5)

BODY = {"from_body": True}
DEPTH = "deeper than max_depth=3"
OVER = "over max_sitemaps=10"
HTML_DEEP = "deeper than max_html_depth=2"
HTML_MANY = "over max_html_pages=5"
OLDER = Skipped("older", "index lastmod older than since")
OLDER_SKIP = Skip(OLDER, ("children-older", f"child sitemaps older than since: {URL}"))
A = dict[str, Any]

#: (scenario, kind, depth, lastmod, walk options, run state, the skip or None)
CASES: list[tuple[str, str, int, datetime | None, A, A, Skip | None]] = [
    ("read", "sitemap", 1, None, {}, {}, None),
    ("stopped run", "sitemap", 1, None, {}, {"stopped": True}, Skip(STOPPED)),
    ("visited", "sitemap", 1, None, {}, {"visited": {URL}}, Skip(VISITED)),
    ("visited, normalized", "sitemap", 1, None, {},
     {"url": "HTTPS://Site.Example/child.xml", "visited": {URL}}, Skip(VISITED)),
    ("robots.txt", "sitemap", 1, None, {}, {"url": BASE + "/robots.txt"},
     Skip(Skipped("robots-txt", "robots.txt is not a sitemap"))),
    ("robots.txt in a folder", "sitemap", 1, None, {}, {"url": BASE + "/a/robots.txt"}, None),
    ("read_depth lists", "sitemap", 2, None, {"read_depth": 1}, {},
     Skip(Skipped("not-read", "not read (read_depth=1)"))),
    ("read_depth reads", "sitemap", 1, None, {"read_depth": 1}, {}, None),
    ("max_depth", "sitemap", 4, None, {}, {},
     Skip(Skipped("limit-depth", DEPTH), ("limit-depth", f"child sitemaps not fetched: {DEPTH}"),
          bound=True)),
    ("max_sitemaps", "sitemap", 1, None, {}, {"sitemaps": 10},
     Skip(Skipped("limit-sitemaps", OVER),
          ("limit-sitemaps", f"child sitemaps not fetched: {OVER}"), bound=True)),
    ("follow filters", "sitemap", 1, None, {"follow": ["other"]}, {},
     Skip(Skipped("follow", "not matched by follow"))),
    ("follow keeps", "sitemap", 1, None, {"follow": ["child"]}, {}, None),
    ("follow, robots.txt's", "sitemap", 0, None, {"follow": ["other"]}, {}, None),
    ("follow, probes", "guess", 1, None, {"follow": ["other"]}, {}, None),
    ("since skips", "sitemap", 1, OLD, {"since": SINCE}, BODY, OLDER_SKIP),
    ("since untrusted", "sitemap", 1, OLD, {"since": SINCE, "trust_index_lastmod": False},
     BODY, None),
    ("since, newer", "sitemap", 1, SINCE, {"since": SINCE}, BODY, None),
    ("since, no lastmod", "sitemap", 1, None, {"since": SINCE}, BODY, None),
    ("since, not from a body", "sitemap", 1, OLD, {"since": SINCE}, {}, None),
    ("since before stop", "sitemap", 1, OLD, {"since": SINCE}, {**BODY, "stopped": True},
     OLDER_SKIP),
    ("html too deep", "html", 2, None, {}, BODY,
     Skip(Skipped("limit-html-depth", HTML_DEEP),
          ("limit-html-depth", f"HTML sitemap pages not read: {HTML_DEEP}"))),
    ("html too many", "html", 1, None, {}, {**BODY, "html_queued": 5},
     Skip(Skipped("limit-html-pages", HTML_MANY),
          ("limit-html-pages", f"HTML sitemap pages not read: {HTML_MANY}"))),
    ("html within", "html", 1, None, {}, {**BODY, "html_queued": 4}, None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "depth", "lastmod", "walk", "run", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_skip_reason(
    kind: str,
    depth: int,
    lastmod: datetime | None,
    walk: dict[str, Any],
    run: dict[str, Any],
    expected: Skip | None,
) -> None:
    """The skip rule, one scenario per row (see the ids), as a pure function."""
    if "follow" in walk:
        walk = {**walk, "follow": tuple(re.compile(p) for p in walk["follow"])}
    run = dict(run)
    url = run.pop("url", URL)
    got = skip_reason(url, kind, depth, lastmod, walk=Walk(**walk), limits=LIMITS, **run)
    assert got == expected


@pytest.mark.parametrize(
    ("kind", "depth", "expected"),
    [("sitemap", 0, ("sitemap", 1)), ("home", 0, ("html", 0)), ("html", 1, ("html", 2)),
     ("html-guess", 0, ("html", 1)), ("listed", 2, ("sitemap", 3)), ("robots", 0, ("sitemap", 1))],
)  # fmt: skip
def test_child_of(kind: str, depth: int, expected: tuple[str, int]) -> None:
    """An HTML page names HTML pages (the home page's at depth 0); others name sitemaps."""
    assert child_of(SitemapNode(URL, kind=kind, depth=depth)) == expected


@pytest.mark.parametrize(
    ("url", "kind", "on", "expected"),
    [(BASE + "/a.xml", "sitemap", True, True), (BASE + "/a.XML.gz?x=1", "sitemap", True, True),
     (BASE + "/a.xml", "sitemap", False, False), (BASE + "/a.html", "sitemap", True, False),
     (BASE + "/a.xml", "html", True, False)],
)  # fmt: skip
def test_listed_sitemap(url: str, kind: str, on: bool, expected: bool) -> None:
    """A urlset loc ending in .xml/.xml.gz is a listed sitemap, with the option, outside HTML."""
    assert listed_sitemap(url, kind, Walk(follow_urlset_sitemaps=on)) is expected


# -- the part alone -------------------------------------------------------------------------


def part(**options: Any) -> tuple[Children, Job]:
    """A Children part on a fresh run, and a job of an index of the one site target."""
    state = RunState([classify(BASE + "/index.xml")], Options.of(**options), observer=None,
                     run=None, now=None, clock=lambda: 0.0)  # fmt: skip
    scheduling = Scheduling(state)
    children = Children(state, scheduling)
    target = state.targets[0]
    root = SitemapNode(target.url)
    site = Site(0, target, root, None, RobotsAudit("bot"))
    state.sites.append(site)
    return children, scheduling.new_job(site, root)


def test_a_read_child_is_a_scheduled_job() -> None:
    """A child that is read: a job (scheduled), a node under its parent, visited, counted."""
    children, job = part()
    actions: list[Action] = []
    child = children.add(job, URL, "sitemap", 1, None, actions)
    assert child is not None and child.node in job.node.children
    assert [type(a) for a in actions] == [Schedule]
    assert children.state.visited == {URL} and job.site.sitemaps == 1
    assert children.add(job, URL, "sitemap", 1, None, actions) is None  # already visited


def test_skipped_children_are_kept_up_to_a_bound() -> None:
    """Skipped children stay in the tree up to MAX_SKIPPED_NODES per parent; beyond, the
    parent says so once (a bound's own problem stands for the rest)."""
    children, job = part()
    actions: list[Action] = []
    for _ in range(MAX_SKIPPED_NODES + 5):
        children.add(job, BASE + "/robots.txt", "sitemap", 1, None, actions)
    assert len(job.node.children) == MAX_SKIPPED_NODES
    assert sum(isinstance(a, Done) for a in actions) == MAX_SKIPPED_NODES
    assert [(p.code, p.count) for p in job.node.problems] == [("children-skipped", 5)]
    assert children.state.stats.sitemaps_skipped == MAX_SKIPPED_NODES + 5


def test_a_bound_says_so_once_per_child_and_no_more() -> None:
    """Children over max_depth: the limit-depth problem counts every one; no extra note."""
    children, job = part(max_depth=0)
    actions: list[Action] = []
    for n in range(MAX_SKIPPED_NODES + 5):
        children.add(job, f"{BASE}/c{n}.xml", "sitemap", 1, None, actions)
    assert [(p.code, p.count) for p in job.node.problems] == [
        ("limit-depth", MAX_SKIPPED_NODES + 5)
    ]


def test_a_child_not_read_is_listed_not_skipped() -> None:
    """read_depth: the child is in the tree, counted as not read, not as skipped."""
    children, job = part(read_depth=0)
    actions: list[Action] = []
    assert children.add(job, URL, "sitemap", 1, None, actions) is None
    stats = children.state.stats
    assert (stats.sitemaps_not_read, stats.sitemaps_skipped) == (1, 0)
    assert job.node.children[0].not_read and job.node.problems == []


def test_an_html_page_named_by_a_page_counts_in_the_html_budget() -> None:
    """An HTML page a home page names becomes a job and counts in max_html_pages."""
    children, job = part()
    job.node.kind = "home"
    actions: list[Action] = []
    children.named(job, BASE + "/plan", None, actions)
    children.named(job, BASE + "/plan", None, actions)  # visited: not counted again
    assert job.site.pages.queued == 1 and job.node.children[0].kind == "html"


# -- on the harness ---------------------------------------------------------------------------


def test_since_leaves_older_index_children_unread() -> None:
    """since: an index child dated before it is skipped and said on the index."""
    body = index("/old.xml", "/new.xml").replace(
        b"<loc>" + BASE.encode() + b"/old.xml</loc>",
        b"<loc>" + BASE.encode() + b"/old.xml</loc><lastmod>2001-01-01</lastmod>",
    )
    bodies: Bodies = {"/index.xml": body, "/old.xml": urlset("/o"), "/new.xml": urlset("/n")}
    core = Discovery([classify(BASE + "/index.xml")], Options.of(since=SINCE))
    harness = Harness(core, bodies)
    harness.run()
    assert BASE + "/old.xml" not in harness.fetched
    assert [r.url for r in harness.records] == [BASE + "/n"]
    root = core.run.tree[0]
    assert [p.code for p in root.problems] == ["children-older"]
    assert root.children[0].skipped == OLDER
    assert core.stats.sitemaps_older == 1


def test_max_sitemaps_is_said_on_the_index() -> None:
    """More children than max_sitemaps: the rest are skipped, the index says why."""
    bodies: Bodies = {"/index.xml": index("/a.xml", "/b.xml", "/c.xml"), "/a.xml": urlset("/a")}
    core = Discovery([classify(BASE + "/index.xml")], Options.of(max_sitemaps=2))
    Harness(core, bodies).run()
    root = core.run.tree[0]
    assert [c.skipped and c.skipped.reason for c in root.children] == [
        None,
        "over max_sitemaps=2",
        "over max_sitemaps=2",
    ]
    assert [(p.code, p.count) for p in root.problems] == [("limit-sitemaps", 2)]


class FakeClock:
    """A clock that only moves when the caller's function "takes" time."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_slow_follow_function_ends_the_run_at_its_deadline() -> None:
    """follow= a function taking 0.3 s a call, deadline=3, an index of 40 children: the
    deadline is read between two calls, so at most 11 calls run (3 s / 0.3 s, and the one
    that crosses it), the run stops at the deadline and the rest are skipped as stopped
    (before: all 40 calls, 12 s, one body never interrupted)."""
    clock, calls = FakeClock(), []

    def follow(url: str) -> bool:
        calls.append(url)
        clock.now += 0.3
        return False

    paths = [f"/c{n}.xml" for n in range(40)]
    core = Discovery(
        [classify(BASE + "/index.xml")], Options.of(follow=follow, deadline=3), clock=clock
    )
    Harness(core, {"/index.xml": index(*paths)}).run()
    assert len(calls) <= 11
    assert core.stats.stopped is not None and core.stats.stopped.option == "deadline"
    skipped = [c.skipped for c in core.run.tree[0].children]
    assert skipped.count(STOPPED) == 40 - len(calls)
