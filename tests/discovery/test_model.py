"""sitemap_reader.discovery.model: a run's tree of sitemap nodes and its stats."""

from __future__ import annotations

from sitemap_reader.crawl import SitemapNode, Stats
from sitemap_reader.discovery.model import Skipped
from sitemap_reader.records import Problem


def test_node_verdicts_and_json() -> None:
    """ok / failed / reason follow the documented rules; to_dict nests children."""
    node = SitemapNode("https://e.com/s.xml", format="urlset", complete=True, status=200)
    assert node.ok and not node.failed and node.reason is None
    node.add_problem("body", "body ended early", fatal=True)
    node.add_problem("body", "again", fatal=True)
    assert node.problems == [Problem("body", "body ended early", 2, True)]
    assert node.failed and node.reason == "body ended early"
    robots = SitemapNode("https://e.com/robots.txt", kind="robots", status=404)
    visited = Skipped("visited", "already visited")
    robots.children.append(SitemapNode("https://e.com/x.xml", skipped=visited))
    assert robots.ok and not robots.children[0].failed
    data = robots.to_dict()
    skipped = data["children"][0]["skipped"]
    assert skipped == {"code": "visited", "reason": "already visited"} and data["kind"] == "robots"
    assert [n.url for n in robots.walk()] == ["https://e.com/robots.txt", "https://e.com/x.xml"]
    stats = Stats(urls_emitted=3)
    stats.finished = stats.started + 1.5
    assert stats.to_dict()["seconds"] == 1.5 and stats.to_dict()["urls_emitted"] == 3
