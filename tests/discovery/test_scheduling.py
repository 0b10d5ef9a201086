"""Jobs and their tickets (discovery/scheduling.py): made, found, revived once, closed."""

from __future__ import annotations

import pytest

from sitemap_reader.discovery import Discovery, Done, Emit, Schedule, SitemapNode, classify
from sitemap_reader.discovery.actions import Action
from sitemap_reader.discovery.scheduling import Scheduling
from tests.discovery.test_core import BASE, NS


def scheduling() -> Scheduling:
    """Scheduling of a fresh run over the site target (its site made by ``start``)."""
    core = Discovery([classify(BASE + "/")])
    core.start()
    return core.scheduling


def test_a_ticket_from_another_process_is_revived() -> None:
    """A ticket of an earlier run (a resumed JOBDIR) is rebuilt into a job and handled."""
    old = Discovery([classify(BASE + "/")])
    (schedule,) = old.start()
    assert isinstance(schedule, Schedule)
    ticket = dict(schedule.ticket)
    ticket.update(kind="sitemap", url=BASE + "/s.xml", depth=1, hosts=["other.example"])
    new = Discovery([classify(BASE + "/")])
    new.start()
    new.response(ticket, url=BASE + "/s.xml", status=200)
    body = f"<urlset {NS}><url><loc>https://other.example/x</loc></url></urlset>".encode()
    actions = new.body(ticket, body) + new.end(ticket)
    emitted = [r.url for a in actions if isinstance(a, Emit) for r in a.records]
    assert emitted == ["https://other.example/x"]  # the scope came with the ticket
    assert new.run.tree[0].children[0].url == BASE + "/s.xml"


def test_a_ticket_is_revived_once() -> None:
    """The same foreign ticket twice: one job, one node, counted once."""
    part = scheduling()
    ticket = {"run": "elsewhere", "job": 7, "url": BASE + "/s.xml", "kind": "sitemap", "target": 0}
    first, again = part.find(ticket), part.find(dict(ticket))
    assert first is not None and first is again
    assert len(part.state.sites[0].root.children) == 1
    assert part.state.stats.sitemaps_queued == 1


@pytest.mark.parametrize(
    "ticket",
    [
        {"run": "elsewhere", "url": BASE + "/s.xml", "kind": "sitemap", "target": 0},
        {"run": "elsewhere", "job": 1, "url": BASE + "/s.xml", "kind": "sitemap", "target": 5},
        {"run": "elsewhere", "job": 1, "url": BASE + "/s.xml", "kind": "file", "target": 0},
        {"run": "elsewhere", "job": 1, "url": 3, "kind": "sitemap", "target": 0},
    ],
    ids=["no number", "no such target", "a local file", "no URL"],
)
def test_a_ticket_that_names_no_job(ticket: dict[str, object]) -> None:
    """Tickets that cannot be a job of this run are ignored (no node, no count)."""
    part = scheduling()
    assert part.find(ticket) is None
    assert part.state.sites[0].root.children == []


def test_a_closed_job_is_forgotten() -> None:
    """push, then close: the job is scheduled, found by its ticket, then finished,
    forgotten by number, and its node is Done."""
    part = scheduling()
    site = part.state.sites[0]
    node = SitemapNode(BASE + "/s.xml")
    actions: list[Action] = []
    job = part.push(site, node, actions)
    ticket = job.ticket(part.state.token)
    assert actions == [Schedule(ticket, "site.example")] and part.find(ticket) is job
    assert site.sitemaps == 1 and part.state.stats.sitemaps_queued == 1
    done = part.close(job)
    assert done == Done(node, ticket)
    assert job.finished and job.id not in part.jobs and part.find(ticket) is None
