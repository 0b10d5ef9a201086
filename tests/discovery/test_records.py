"""The record gate (discovery/records.py): scope, dedupe, the robots audit's count, the
shaper's hold, obey_robots, since, the URL budget, repeats to merge, HTML pages held;
the part alone, then on the harness."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sitemap_reader.discovery import Discovery, Emit, SitemapNode, Stop, classify
from sitemap_reader.discovery.actions import Action
from sitemap_reader.discovery.children import Children
from sitemap_reader.discovery.job import Job, Site
from sitemap_reader.discovery.model import Stopped
from sitemap_reader.discovery.records import RecordGate
from sitemap_reader.discovery.robots_audit import RobotsAudit
from sitemap_reader.discovery.run_state import RunState
from sitemap_reader.discovery.scheduling import Scheduling
from sitemap_reader.options import Options
from sitemap_reader.parse.robots import parse_robots
from sitemap_reader.parse.scope import Scope
from sitemap_reader.records import SitemapRef, UrlRecord
from sitemap_reader.records.scoring import UNIFORM_MIN_RECORDS
from tests.discovery.test_core import BASE, NS, Bodies, Harness

RULES = parse_robots(b"User-agent: *\nDisallow: /private/\n", BASE + "/robots.txt")


def gate(*, merge: bool = False, **options: Any) -> tuple[RecordGate, Job]:
    """A gate on a fresh run, and a job of a sitemap of the one site target."""
    state = RunState([classify(BASE + "/")], Options.of(**options), observer=None, run=None,
                     now=datetime(2024, 1, 1, tzinfo=UTC), clock=lambda: 0.0)  # fmt: skip
    scheduling = Scheduling(state)
    part = RecordGate(state, Children(state, scheduling), merge=merge)
    target = state.targets[0]
    root = SitemapNode(target.url, kind="robots")
    site = Site(0, target, root, Scope("site", ["site.example"]), RobotsAudit("bot"))
    state.sites.append(site)
    node = SitemapNode(BASE + "/s.xml", final_url=BASE + "/s.xml")
    return part, scheduling.new_job(site, node)


def records(job: Job, *paths: str) -> list[UrlRecord]:
    """Records of ``paths`` (on BASE unless absolute), built by the job's own builder."""
    build = job.shaper.build
    urls = [p if "://" in p else BASE + p for p in paths]
    return [build(u, None, None, None, job.node.url, (), (), (), None, None) for u in urls]


def emitted(actions: list[Action]) -> list[str]:
    """The paths of the records the actions emit."""
    return [r.url.removeprefix(BASE) for a in actions if isinstance(a, Emit) for r in a.records]


def test_scope_and_dedupe_are_counted() -> None:
    """Out-of-scope and duplicate records are counted, the rest held until the job ends
    (fewer than the lastmod vote needs), then sent in order."""
    part, job = gate()
    items = records(job, "/a", "https://other.example/x", "/b", "/a")
    assert part.emit(job, list(items)) == []
    stats = part.state.stats
    assert (stats.urls_out_of_scope, stats.urls_duplicate, job.node.urls) == (1, 1, 4)
    actions: list[Action] = []
    part.release(job, actions)
    assert emitted(actions) == ["/a", "/b"] and stats.urls_emitted == 2


def test_a_child_sitemap_goes_to_the_children() -> None:
    """A SitemapRef among the items becomes a child job of the sitemap, not a record."""
    part, job = gate()
    actions = part.emit(job, [SitemapRef(BASE + "/child.xml", None, job.node.url)])
    assert [c.url for c in job.node.children] == [BASE + "/child.xml"]
    assert emitted(actions) == [] and part.state.stats.sitemaps_queued == 1


def test_disallowed_records_are_counted_as_built() -> None:
    """Records built after robots.txt was read carry the verdict; the gate counts them on
    the node and in the stats, and obey_robots drops them on the way out."""
    for obey in (False, True):
        part, job = gate(obey_robots=obey)
        job.site.audit.read(RULES, [BASE + "/"])
        paths = [f"/private/{n}" if n % 4 == 0 else f"/p/{n}" for n in range(UNIFORM_MIN_RECORDS)]
        actions = part.emit(job, list(records(job, *paths)))
        assert (job.node.disallowed, part.state.stats.urls_disallowed) == (8, 8)
        kept = [p for p in paths if not (obey and p.startswith("/private/"))]
        assert emitted(actions) == kept


def test_a_listed_page_gets_the_verdict_of_now() -> None:
    """A listed loc kept as a page, built before robots.txt was read: rebuilt with the
    verdict robots.txt gives now, counted on the listed node."""
    part, job = gate()
    (record,) = records(job, "/private/page.xml")
    assert record.robots is None
    job.page = record
    job.site.audit.read(RULES, [BASE + "/"])
    actions: list[Action] = []
    part.kept_as_page(job, actions)
    (sent,) = [r for a in actions if isinstance(a, Emit) for r in a.records]
    assert sent.robots == "disallowed" and sent == UrlRecord(
        record.url, score=record.score, sitemap=record.sitemap, revisit=record.revisit,
        robots="disallowed",
    )  # fmt: skip
    assert job.node.disallowed == 1 and record.robots is None  # a new object


def test_the_url_budget_stops_the_run_at_the_record() -> None:
    """max_urls: exactly that many records go out, and the run stops."""
    part, job = gate(max_urls=5)
    actions = part.emit(job, list(records(job, *(f"/{n}" for n in range(UNIFORM_MIN_RECORDS)))))
    assert emitted(actions) == ["/0", "/1", "/2", "/3", "/4"]
    budget = Stopped("budget", "max_urls", 5)
    assert [a.stopped for a in actions if isinstance(a, Stop)] == [budget]
    assert part.state.stopped == budget


def test_since_drops_older_records() -> None:
    """since: records with an older lastmod are left out and counted; undated ones stay."""
    part, job = gate(since=datetime(2020, 1, 1, tzinfo=UTC))
    build = job.shaper.build
    old = datetime(2001, 1, 1, tzinfo=UTC)
    batch = [build(f"{BASE}/{n}", old if n % 2 else None, None, None, None, (), (), (), None, None)
             for n in range(UNIFORM_MIN_RECORDS)]  # fmt: skip
    actions = part.emit(job, list(batch))
    assert len(emitted(actions)) == UNIFORM_MIN_RECORDS // 2
    assert part.state.stats.urls_older == UNIFORM_MIN_RECORDS // 2


def test_repeats_go_out_to_merge() -> None:
    """merge=True: the in-scope copies of URLs emitted before go out as repeats."""
    part, job = gate(merge=True)
    part.state.seen.add(BASE + "/a")
    actions = part.emit(job, list(records(job, "/a", "/b")))
    repeats = [r.url for a in actions if isinstance(a, Emit) for r in a.repeats]
    assert repeats == [BASE + "/a"]


# -- on the harness ---------------------------------------------------------------------------


def test_html_pages_leave_out_the_links_they_all_share() -> None:
    """HTML sitemap pages are held until the site is idle; a link every page shows is
    navigation, left out (said on the page that first had it: the others' copies were
    duplicates)."""
    home = "<footer><a href='/plan-du-site'>Plan du site</a></footer>"
    plan = "<main><a href='/a'>a</a><a href='/shared'>s</a><a href='/plan-du-site/2'>2</a></main>"
    two = "<main><a href='/b'>b</a><a href='/shared'>s</a></main>"
    bodies: Bodies = {
        "/robots.txt": 404,
        "/": home.encode(),
        "/plan-du-site": plan.encode(),
        "/plan-du-site/2": two.encode(),
    }
    core = Discovery([classify(BASE + "/")], Options.of(html="always", guess=False))
    harness = Harness(core, bodies)
    harness.run()
    assert [r.url.removeprefix(BASE) for r in harness.records] == ["/a", "/b"]
    assert {r.source for r in harness.records} == {"html"}
    pages = [n for n in core.run.nodes() if n.kind == "html"]
    shared = [[p.message for p in n.problems if p.code == "html-shared"] for n in pages]
    assert shared == [[f"a link every HTML sitemap page shares left out: {BASE}/shared"], []]


def test_a_sitemap_is_audited_by_its_sites_robots_txt() -> None:
    """robots.txt's rules reach the records of the sitemaps it lists, and only its origin."""
    robots = f"User-agent: *\nDisallow: /private/\nSitemap: {BASE}/s.xml\n"
    urls = (BASE + "/private/1", BASE + "/2", "https://other.example/private/x")
    entries = "".join(f"<url><loc>{u}</loc></url>" for u in urls)
    bodies: Bodies = {
        "/robots.txt": robots.encode(),
        "/s.xml": f"<urlset {NS}>{entries}</urlset>".encode(),
    }
    core = Discovery([classify(BASE + "/")], Options.of(scope="any"))
    harness = Harness(core, bodies)
    harness.run()
    verdicts = {r.url: r.robots for r in harness.records}
    assert verdicts == {
        BASE + "/private/1": "disallowed",
        BASE + "/2": "allowed",
        "https://other.example/private/x": None,
    }
    assert core.run.tree[0].children[0].disallowed == 1 == core.stats.urls_disallowed
