"""The run description the crawler builds while it works: sitemap nodes, stats, the run.

These are plain mutable dataclasses because the traversal fills them in as responses
arrive; callers read them (the CLI polls :class:`Stats` for a progress bar) and turn them
into JSON with ``to_dict()``. They hold no I/O objects, so a finished :class:`Run` can be
kept, printed or pickled.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

from sitemap_reader.discovery.blocks import Block
from sitemap_reader.records import Problem
from sitemap_reader.records.outcomes import Skipped as Skipped
from sitemap_reader.records.outcomes import Stopped as Stopped
from sitemap_reader.records.outcomes import Verdict

JsonDict = dict[str, Any]

#: Node kinds: the robots.txt of a site target; a sitemap (listed by robots.txt, given as
#: the target, or a child of an index), a probed well-known path, a local file, stdin; and
#: the opt-in ways in (``discovery.ways``): a urlset loc read as a sitemap (``listed``),
#: the home page, an HTML sitemap page, a usual path probed for one (``html-guess``).
NodeKind = Literal[
    "robots", "sitemap", "guess", "file", "stdin", "listed", "home", "html", "html-guess"
]
NODE_KINDS: tuple[NodeKind, ...] = get_args(NodeKind)
#: Kinds whose body is a sitemap (XML, text, RSS/Atom) or a local file of one.
SITEMAP_KINDS: tuple[NodeKind, ...] = ("sitemap", "guess", "listed", "file", "stdin")
#: Node kinds of the HTML way in: the home page read for its links, an HTML sitemap page,
#: and a usual path probed for one.
HTML_KINDS: tuple[NodeKind, ...] = ("home", "html", "html-guess")
#: Kinds whose miss (no body of the kind looked for) is a skip, not a failure.
PROBE_KINDS: tuple[NodeKind, ...] = ("guess", "html-guess", "listed")
#: Every node kind the opt-in ways in add.
WAY_KINDS: tuple[NodeKind, ...] = (*HTML_KINDS, "listed")
#: Kinds a ticket of another process may name (rebuilt into a job): all but local files.
REVIVABLE_KINDS: tuple[NodeKind, ...] = ("robots", "sitemap", "guess", *WAY_KINDS)
#: The only changes of a node's kind, each made where it is decided: a usual path that
#: held an HTML sitemap page, a listed loc whose body is a sitemap, a sitemap target whose
#: body sniffed as HTML (``html`` on). The part of a job is chosen by its kind at each
#: event, so each pair shares its handling of a body (``core.Discovery``).
KIND_CHANGES: frozenset[tuple[NodeKind, NodeKind]] = frozenset(
    {("html-guess", "html"), ("listed", "sitemap"), ("sitemap", "html")}
)


@dataclass(slots=True, eq=False)
class SitemapNode:
    """One robots.txt, sitemap or probe of a run, with what happened to it.

    ``url`` is the URL as requested (or the file path); ``final_url`` the URL after
    redirects; ``format`` the parser's verdict (None when no body was parsed); ``status``
    the HTTP status of the final response; ``bytes`` the raw bytes received (before
    gunzip); ``urls`` the page URLs the body held (before scope and dedupe filtering);
    ``skipped`` says why the node was not fetched (None when it was). ``lastmod`` is the
    lastmod its index gave it; ``unchanged`` says why an incremental run found it
    unchanged since the last run (304, index lastmod, same content), None otherwise.
    ``crawl_delay`` (a robots.txt) is the delay it asked for, as honoured (capped);
    ``disallowed`` (a sitemap) counts its URLs that robots.txt disallows for us.
    ``last_modified`` is the response's ``Last-Modified`` header as sent; ``seconds`` the
    download time, from the first request to the end of the body (when the driver
    measured it: the aiohttp reader does).
    """

    url: str
    kind: str = "sitemap"
    depth: int = 0
    final_url: str | None = None
    format: str | None = None
    status: int | None = None
    bytes: int = 0
    urls: int = 0
    complete: bool = False
    skipped: Skipped | None = None
    problems: list[Problem] = field(default_factory=list)
    children: list[SitemapNode] = field(default_factory=list)
    lastmod: datetime | None = None
    unchanged: str | None = None
    crawl_delay: float | None = None
    disallowed: int = 0
    last_modified: str | None = None
    seconds: float | None = None
    #: The bot protection that answered instead of the site (see ``discovery.blocks``).
    block: Block | None = None

    @property
    def not_read(self) -> bool:
        """True for a child left unread on purpose (``read_depth``: listed, not fetched)."""
        return self.skipped is not None and self.skipped.code == "not-read"

    @property
    def fetched(self) -> bool:
        """True when a body was read and parsed (whatever came of it)."""
        return self.format is not None

    @property
    def ok(self) -> bool:
        """True when the body parsed as a sitemap to its end, without a fatal problem.

        A robots.txt node is ok unless it failed for good (5xx, network): a missing
        robots.txt (4xx) is a normal answer.
        """
        if self.skipped is not None or any(p.fatal for p in self.problems):
            return False
        if self.kind == "robots":
            return True
        return self.format not in (None, "unknown") and self.complete

    @property
    def failed(self) -> bool:
        """True when the node was attempted and did not yield a complete sitemap.

        Skipped nodes and well-known paths that turned out not to exist are not failures.
        """
        return self.skipped is None and not self.ok

    @property
    def cut_short(self) -> bool:
        """True for a failed node that was only cut short by a stop of the run: attempted,
        incomplete, without a fatal problem (a body that really broke, or a fetch that
        failed, always records one) and not judged "not a sitemap"."""
        if not self.failed or self.skipped is not None or self.kind == "robots":
            return False
        return self.format != "unknown" and not any(p.fatal for p in self.problems)

    @property
    def reason(self) -> str | None:
        """A one-line reason for a failure or a skip (None when the node is fine)."""
        if self.skipped is not None:
            return f"skipped: {self.skipped}"
        fatal = [p for p in self.problems if p.fatal]
        if fatal:
            return fatal[0].message
        if self.format == "unknown":
            return "not a sitemap"
        if not self.ok:
            return "incomplete"
        return None

    def add_problem(self, code: str, message: str, *, fatal: bool = False) -> None:
        """Record a problem; repeats of a code are counted on the first one."""
        for i, old in enumerate(self.problems):
            if old.code == code:
                self.problems[i] = Problem(code, old.message, old.count + 1, old.fatal or fatal)
                return
        self.problems.append(Problem(code, message, 1, fatal))

    def walk(self) -> Iterator[SitemapNode]:
        """This node and every descendant, depth first, in discovery order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def to_dict(self) -> JsonDict:
        """The JSON shape of ``sitemap-reader tree --json``."""
        return {
            "url": self.url,
            "kind": self.kind,
            "depth": self.depth,
            "final_url": self.final_url,
            "format": self.format,
            "status": self.status,
            "bytes": self.bytes,
            "urls": self.urls,
            "ok": self.ok,
            "skipped": None if self.skipped is None else self.skipped.to_dict(),
            "problems": [p.to_dict() for p in self.problems],
            "children": [c.to_dict() for c in self.children],
            **({"unchanged": self.unchanged} if self.unchanged is not None else {}),
            **({"crawl_delay": self.crawl_delay} if self.crawl_delay is not None else {}),
            **({"disallowed": self.disallowed} if self.disallowed else {}),
            **({"last_modified": self.last_modified} if self.last_modified else {}),
            **({"seconds": round(self.seconds, 4)} if self.seconds is not None else {}),
            **({"block": self.block.to_dict()} if self.block is not None else {}),
        }


def change_kind(node: SitemapNode, kind: NodeKind) -> None:
    """Give ``node`` its new kind: one of :data:`KIND_CHANGES`, or a bug."""
    if (node.kind, kind) not in KIND_CHANGES:
        raise ValueError(f"a {node.kind} node cannot become {kind}")
    node.kind = kind


@dataclass(slots=True)
class Stats:
    """Counters of a run, updated live while it goes (safe to read at any time).

    ``sitemaps_queued`` is how many sitemaps are known and not finished yet, so a progress
    display can show ``ok + failed`` out of ``ok + failed + queued``. An incremental run
    also counts sitemaps found unchanged (they are among ``sitemaps_ok``), URLs left out
    as unchanged by ``changed_only``, and URLs found removed.
    """

    sitemaps_ok: int = 0
    sitemaps_failed: int = 0
    sitemaps_skipped: int = 0
    sitemaps_queued: int = 0
    urls_emitted: int = 0
    urls_duplicate: int = 0
    urls_out_of_scope: int = 0
    bytes: int = 0
    sitemaps_unchanged: int = 0
    urls_unchanged: int = 0
    urls_removed: int = 0
    #: URLs listed by the sitemaps that the site's robots.txt disallows for us.
    urls_disallowed: int = 0
    #: Child sitemaps listed but left unread on purpose (``read_depth``).
    sitemaps_not_read: int = 0
    #: Records left out as older than ``since``.
    urls_older: int = 0
    #: Child sitemaps not fetched because their index lastmod is older than ``since``.
    sitemaps_older: int = 0
    #: Records left out by ``include`` and ``exclude``.
    urls_filtered: int = 0
    #: Sitemaps whose record in the state file was damaged: the URLs that left them
    #: cannot be named as removed (each a ``state-damaged`` problem where it is in the run).
    sitemaps_state_lost: int = 0
    stopped: Stopped | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None

    @property
    def seconds(self) -> float:
        """Wall time of the run so far (or in total, once it finished)."""
        end = self.finished if self.finished is not None else time.monotonic()
        return end - self.started

    def to_dict(self) -> JsonDict:
        """Counters as JSON; ``stopped`` says what ended the run early, if anything."""
        return {
            "sitemaps_ok": self.sitemaps_ok,
            "sitemaps_failed": self.sitemaps_failed,
            "sitemaps_skipped": self.sitemaps_skipped,
            "urls_emitted": self.urls_emitted,
            "urls_duplicate": self.urls_duplicate,
            "urls_out_of_scope": self.urls_out_of_scope,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "stopped": None if self.stopped is None else self.stopped.to_dict(),
            **self._incremental(),
            **({"urls_disallowed": self.urls_disallowed} if self.urls_disallowed else {}),
            **({"sitemaps_not_read": self.sitemaps_not_read} if self.sitemaps_not_read else {}),
            **({"urls_older": self.urls_older} if self.urls_older else {}),
            **({"sitemaps_older": self.sitemaps_older} if self.sitemaps_older else {}),
            **({"urls_filtered": self.urls_filtered} if self.urls_filtered else {}),
            **(
                {"sitemaps_state_lost": self.sitemaps_state_lost}
                if self.sitemaps_state_lost
                else {}
            ),
        }

    def _incremental(self) -> JsonDict:
        """The counters of an incremental run, only when it had something to count."""
        counts = {
            "sitemaps_unchanged": self.sitemaps_unchanged,
            "urls_unchanged": self.urls_unchanged,
            "urls_removed": self.urls_removed,
        }
        return counts if any(counts.values()) else {}


@dataclass(slots=True)
class Run:
    """One run over one or more targets: a root node per target and the stats.

    ``failed_targets`` holds, once the run ended, each target for which nothing could be
    discovered (unreachable, or no sitemap anywhere) with one line saying why; ``error``
    is set when that is every target (the line :class:`~sitemap_reader.errors.DiscoveryError`
    carries: each target's reason, joined).
    """

    targets: tuple[str, ...]
    tree: list[SitemapNode] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    error: str | None = None
    failed_targets: dict[str, str] = field(default_factory=dict)
    #: Each target's verdict once the run ended (see ``discovery.verdicts``).
    verdicts: dict[str, Verdict] = field(default_factory=dict)

    def nodes(self) -> Iterator[SitemapNode]:
        """Every node of every target, depth first."""
        for root in self.tree:
            yield from root.walk()

    def failures(self) -> list[SitemapNode]:
        """The nodes that failed, in tree order (for a summary: one line each).

        A well-known path that holds no sitemap is marked skipped, not failed, so a
        probe shows up here only when it was a sitemap and then broke."""
        return [n for n in self.nodes() if n.failed]

    def to_dict(self) -> JsonDict:
        """The whole run as JSON."""
        return {
            "targets": list(self.targets),
            "tree": [n.to_dict() for n in self.tree],
            "stats": self.stats.to_dict(),
            "error": self.error,
            **({"failed_targets": self.failed_targets} if self.failed_targets else {}),
            "verdicts": [v.to_dict() for v in self.verdicts.values()],
        }
