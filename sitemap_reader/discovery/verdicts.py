"""The verdict of each target once its run ended (:func:`verdict_of`): what it gave, and
if nothing, why, with the nodes that decided. Sans-I/O; read off the site's tree.

In order: a site the run's stop cut short is ``stopped``; a site whose sitemaps listed
URLs is ``ok``, or ``partial`` when some sitemap failed (a block among them is in the
evidence). A site that gave no URL is ``blocked`` when bot protection answered anywhere
(never ``absent``: an answer that was a wall says nothing of the site), ``refused`` when
our own guard kept it (or, with URLs, the robots.txt rules we obey), ``unreachable`` when
its own host could not be reached, ``empty`` when a sitemap was read and listed nothing, ``broken``
when sitemaps (or the server) failed, and ``absent`` only when every place we looked
answered that there is no sitemap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sitemap_reader.discovery.job import Site
from sitemap_reader.discovery.model import HTML_KINDS, SitemapNode
from sitemap_reader.discovery.rules import found_sitemap
from sitemap_reader.records.outcomes import Evidence, Stopped, Verdict, VerdictKind

#: Evidence kept per verdict (the first nodes that decided it, in tree order).
SHOWN = 5


def verdicts(sites: Sequence[Site], stopped: Stopped | None, obey: bool) -> dict[str, Verdict]:
    """The verdict of every target of a run, by the target as given."""
    return {site.target.text: verdict_of(site, stopped, obey) for site in sites}


def verdict_of(site: Site, stopped: Stopped | None, obey: bool) -> Verdict:
    """One target's verdict (see the module docstring); ``obey``: robots.txt rules drop
    what they disallow."""
    nodes = list(site.root.walk())
    urls = sum(n.urls for n in nodes if n.kind != "robots")
    blocks = [n for n in nodes if n.block is not None]

    def told(kind: VerdictKind, evidence: Iterable[Evidence] = ()) -> Verdict:
        return Verdict(site.target.text, kind, urls, tuple(evidence)[:SHOWN], site.ladder)

    cut = [n for n in nodes if _cut(n)] if stopped is not None else []
    if cut:
        assert stopped is not None
        return told("stopped", [Evidence(n.url, n.status, stopped.kind) for n in cut])
    # The home page is a way in (html="fallback"), not a sitemap: its 404 fails nothing.
    failed = [n for n in nodes if n.failed and n.kind not in ("robots", "home")]
    if urls:
        if obey and all(n.disallowed >= n.urls for n in nodes if n.urls):
            return told("refused", [_why(n, "robots-disallowed") for n in nodes if n.urls])
        return told("partial", map(_failure, failed)) if failed else told("ok")
    if blocks:
        return told("blocked", map(_blocked, blocks))
    guarded = [n for n in nodes if any(p.code == "blocked" and p.fatal for p in n.problems)]
    if guarded:  # our own guard: nothing was sent, so nothing is unreachable
        return told("refused", map(_failure, guarded))
    if site.unreachable is not None:
        return told("unreachable", [Evidence(site.root.url, None, "connect", (site.unreachable,))])
    # An HTML page at a site map's usual path that listed nothing (a parked domain's page
    # answers every path) is no site map.
    read = [n for n in nodes if found_sitemap(n) and (n.urls or n.kind not in HTML_KINDS)]
    if read and not failed:
        return told("empty", [Evidence(n.url, n.status, "no-url") for n in read])
    if failed or _server_failing(site.root):
        return told("broken", map(_failure, failed or [site.root]))
    return told(
        "absent",
        [_why(n, "not-found") for n in nodes if n.kind != "robots"]
        or [_why(site.root, "no-sitemap")],
    )


def _cut(node: SitemapNode) -> bool:
    """A node the run's stop left unread or cut short (neither read whole nor failed)."""
    if node.skipped is not None:
        return node.skipped.code == "stopped"
    if not node.failed or node.kind == "robots":
        return False
    return node.format != "unknown" and not any(p.fatal for p in node.problems)


def _server_failing(root: SitemapNode) -> bool:
    """robots.txt answered with a server error (5xx) or a rate limit with no block's
    signature (429, after our retries): nothing can be said of the sitemaps' absence."""
    status = root.status or 0
    return root.kind == "robots" and (500 <= status < 600 or status == 429)


def _failure(node: SitemapNode) -> Evidence:
    fatal = [p for p in node.problems if p.fatal]
    code = fatal[0].code if fatal else "not-a-sitemap" if node.format == "unknown" else "failed"
    return Evidence(node.final_url or node.url, node.status, code, (node.reason or code,))


def _blocked(node: SitemapNode) -> Evidence:
    block = node.block
    assert block is not None
    return Evidence(
        node.final_url or node.url, node.status, block.rule, (block.words, *block.signals)
    )


def _why(node: SitemapNode, code: str) -> Evidence:
    return Evidence(node.final_url or node.url, node.status, code)
