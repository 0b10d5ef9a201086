"""Small policy helpers of the discovery core: URL shapes and the run's verdict."""

from __future__ import annotations

from collections.abc import Sequence

from sitemap_reader._words import stop_phrase
from sitemap_reader.discovery.job import Site
from sitemap_reader.discovery.model import SitemapNode, Stopped
from sitemap_reader.records import UrlRecord

Batch = list[UrlRecord]


def server_of(url: str) -> str:
    """The scheduler's host key: ``host[:port]`` of an absolute URL."""
    return url.split("/", 3)[2] if "://" in url else ""


def is_robots(url: str) -> bool:
    """True for a robots.txt URL (at the root of its origin): never a sitemap."""
    path = url.split("?", 1)[0]
    return path.count("/") == 3 and path.endswith("/robots.txt")


def target_errors(
    sites: Sequence[Site], probing: bool, stopped: Stopped | None = None
) -> dict[str, str]:
    """Each target for which nothing was discovered, with one line saying why
    (``probing``: the well-known paths are probed when robots.txt lists none; ``stopped``:
    why the run stopped early, which is then the reason for what was not read)."""
    return {
        site.target.text: _why_nothing(site, probing, stopped)
        for site in sites
        if not any(found_sitemap(n) for n in site.root.walk())
    }


def run_error(sites: Sequence[Site], failed: dict[str, str]) -> str | None:
    """None when anything was discovered, else the reasons of every target, joined."""
    if len(failed) < len(sites) or not sites:
        return None
    return "; ".join(f"{target}: {why}" for target, why in failed.items())


def found_sitemap(node: SitemapNode) -> bool:
    """True when the node was read and is a sitemap (whatever it held, however it ended)."""
    return (
        node.kind not in ("robots", "home")
        and node.skipped is None
        and node.format not in (None, "unknown")
    )


def _sitemaps(count: int) -> str:
    return "1 sitemap" if count == 1 else f"{count} sitemaps"


def _why_nothing(site: Site, probing: bool, stopped: Stopped | None) -> str:
    root = site.root
    if site.unreachable is not None:
        return site.unreachable
    if stopped is not None and _cut_by_stop(root):
        # The stop came before anything could answer: nothing else about the site is known.
        if root.status is None:
            what = "robots.txt" if root.kind == "robots" else "the sitemap"
        else:
            what = "any sitemap"
        return f"{stop_phrase(stopped)} before {what} answered"
    if root.kind != "robots":
        return root.reason or "not a sitemap"
    prefix = f"{root.reason}; " if root.failed and root.reason else ""
    listed = [c for c in root.children if c.kind == "sitemap"]
    probed = sum(1 for c in root.children if c.kind == "guess")
    if listed:
        first = listed[0]
        also = f", nor any of the {probed} well-known paths probed then" if probed else ""
        return (
            f"{prefix}robots.txt lists {_sitemaps(len(listed))}, none could be read "
            f"({first.url}: {first.reason}){also}"
        )
    if not probing:
        return f"{prefix}no sitemap listed in robots.txt (probing well-known paths is off)"
    return (
        f"{prefix}no sitemap found: robots.txt lists none and none of the "
        f"{len(root.children)} well-known paths is a sitemap"
    )


def _cut_by_stop(root: SitemapNode) -> bool:
    """True when the run's stop left the site unanswered: its first file never got a
    status, or every sitemap it led to was skipped by the stop before it answered."""
    if root.status is None and not root.fetched:
        return True
    children = [c for c in root.children if c.kind in ("sitemap", "guess")]
    return bool(children) and all(c.status is None for c in children)
