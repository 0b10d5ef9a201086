"""The lines that tell a user what to try next, shared by every command.

- :func:`scope_lines`: every URL the sitemaps listed was out of scope (the sitemaps name
  another host than the one typed, ``localhost`` against ``127.0.0.1``): a warning that
  says so and how to keep them (``--scope any``), shown even with ``-q``: a run that
  wrote nothing and exits 0 would otherwise be silent.
- :func:`guard_lines`: a sitemap or robots.txt was refused by the address guard (a
  private or loopback address): which flag lets it be read.
- :func:`html_hint`: nothing was discovered, the HTML way in is off and probing is on
  (no ``--no-guess``): one small run with it on (the home page and the pages it links
  as a site map, at most one record) says whether ``--html`` would find something.
"""

from __future__ import annotations

from sitemap_reader._words import listing, plural
from sitemap_reader.cli.summary import FLAG
from sitemap_reader.crawl import Run, SitemapReader
from sitemap_reader.options import Options


def _host(url: str) -> str:
    return url.split("/", 3)[2] if "://" in url else url.split("/", 1)[0]


def _is_site(target: str) -> bool:
    """A domain or a site URL (no path): where a home page is."""
    rest = target.split("://", 1)[-1]
    return "/" not in rest.rstrip("/") and target != "-"


def scope_lines(run: Run, scope: str) -> list[str]:
    """The warning of a run whose every listed URL was out of scope (else nothing)."""
    stats = run.stats
    if stats.urls_emitted or not stats.urls_out_of_scope or scope == "any":
        return []
    typed = sorted({_host(target) for target in run.targets})
    hosts = sorted(
        {
            _host(node.final_url or node.url)
            for node in run.nodes()
            if node.kind not in ("robots", "file", "stdin") and node.fetched
        }
        - set(typed)
    )
    where = f"; the sitemaps are on {listing(hosts)}" if hosts else ""
    return [
        f"warning: all {plural(stats.urls_out_of_scope, 'URL')} the sitemaps list are out of "
        f"the {scope} scope of {listing(typed)}{where}: --scope any keeps them"
    ]


def guard_lines(run: Run) -> list[str]:
    """The hint of a run the address guard refused something in (else nothing)."""
    refused = sum(
        1 for node in run.nodes() if any(p.code == "blocked" and p.fatal for p in node.problems)
    )
    if not refused:
        return []
    return [
        f"refused: {plural(refused, 'file')} on a private or loopback address "
        f"({FLAG('allow_private')} reads them)"
    ]


def state_lines(run: Run) -> list[str]:
    """The warning of a run whose state file had lost what names some sitemaps' removed
    URLs (else nothing): with ``--removed`` they cannot come, so it is said even with -q."""
    lost = run.stats.sitemaps_state_lost
    if not lost:
        return []
    them = "it" if lost == 1 else "them"
    return [
        f"state: the state file's record of {plural(lost, 'sitemap')} was damaged: the URLs "
        f"that left {them} cannot be named as removed (-v says which; the record is rewritten)"
    ]


async def html_hint(run: Run, options: Options) -> str | None:
    """ "try --html" when nothing was discovered, the HTML way in was off and a small run
    with it on finds an HTML site map for a site target; else None. Not with
    ``--no-guess``: who turned probing off gets no probe of the home page either."""
    if run.error is None or options.walk.html is not None or not options.walk.guess:
        return None
    targets = [t for t in run.targets if _is_site(t)]
    if not targets:
        return None
    trial = options.replace(
        html="fallback", guess=False, max_urls=1, since=None, trust_index_lastmod=True
    )
    async with SitemapReader(trial) as reader:
        found = await reader.tree(targets)
    pages = [n.final_url or n.url for n in found.nodes() if n.kind == "html" and n.fetched]
    if not pages:
        return None
    return f"try --html: the home page links a site map ({listing(pages, 1)})"
