"""A survey of one target for ``check`` and ``report``: the reader's one walk, watched.

The walk is :meth:`SitemapReader.tree` (robots.txt, redirects, the address guard, proxy,
user headers, pacing, deadlines, byte caps, retries): it says which files exist and what
happened to each. The survey rides on it through the core's observer seat
(:class:`~sitemap_reader.discovery.observer.Observer`): each job gets a :class:`_FileTap`
watch that hands every raw chunk the walk read to the protocol checker
(:mod:`sitemap_reader.parse.checker`) as it arrives, each robots.txt body to
:func:`~sitemap_reader.parse.checker.check_robots`, and counts the records the walk
made (lastmod by month, changefreq, priority). Nothing is fetched a second time and
nothing keeps a body or the records: the survey keeps counters and the findings.

Each sitemap's records are counted for it too (:class:`FileCounts`: freshness, values,
robots-blocked examples), and pages with hreflang alternates are remembered (bounded) for
the reciprocity test of the report.

Where the walk stopped reading a body early (a byte or markup bound, the deadline, a
lost connection), the checker is closed as cut short and the file gets a finding that
names the walk's reason, so a cut is never mistaken for a body that ends there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from aiohttp.abc import AbstractResolver

from sitemap_reader._safe_text import printable
from sitemap_reader._words import stop_phrase
from sitemap_reader.crawl import Run, SitemapNode, SitemapReader
from sitemap_reader.discovery.actions import Batch, Checkpoint
from sitemap_reader.discovery.model import HTML_KINDS, PROBE_KINDS, Stopped
from sitemap_reader.discovery.observer import Observer, Watch
from sitemap_reader.discovery.rules import is_robots
from sitemap_reader.options import Options
from sitemap_reader.options.doors import spelling
from sitemap_reader.options.limits import REPORT_EXAMPLES, REPORT_MAX_HREFLANG_PAGES, Limits
from sitemap_reader.parse.checker import BodyChecker, Finding, SiteCheck, check_robots
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.robots import sitemaps_from_robots
from sitemap_reader.parse.scope import host_of
from sitemap_reader.records import Problem, UrlRecord

#: The audit's words are the command line's: options are named by their flags.
CLI = spelling("cli")

#: Fatal problem codes of the walk that mean "stopped reading before the body's end"
#: (besides every ``limit-*``): the deadline, a lost connection, a read error, a crash.
READ_STOPS = frozenset(("timeout", "body", "read", "internal"))


def label_of(node: SitemapNode) -> str:
    """How a file is named in findings: its final URL, its path, or ``-`` for stdin."""
    if node.kind == "stdin":
        return "-"
    if node.kind == "file":
        return printable(node.url)
    return node.final_url or node.url


@dataclass(slots=True)
class Freshness:
    """The lastmods of some records: the newest, the oldest, how many had none."""

    newest: datetime | None = None
    oldest: datetime | None = None
    dated: int = 0
    undated: int = 0

    def add(self, lastmod: datetime | None) -> None:
        """Count one record's lastmod."""
        if lastmod is None:
            self.undated += 1
            return
        self.dated += 1
        self._span(lastmod)

    def _span(self, moment: datetime) -> None:
        if self.newest is None or moment > self.newest:
            self.newest = moment
        if self.oldest is None or moment < self.oldest:
            self.oldest = moment

    def merge(self, other: Freshness) -> None:
        """Add another set of records' freshness to this one."""
        self.dated += other.dated
        self.undated += other.undated
        for moment in (other.newest, other.oldest):
            if moment is not None:
                self._span(moment)

    @property
    def total(self) -> int:
        """Records counted."""
        return self.dated + self.undated


@dataclass(slots=True)
class FileCounts:
    """One sitemap's records as the walk made them: kept, duplicates, robots-blocked
    (with examples), freshness, and the changefreq and priority values seen."""

    kept: int = 0
    duplicates: int = 0
    disallowed: int = 0
    blocked_examples: list[str] = field(default_factory=list)
    fresh: Freshness = field(default_factory=Freshness)
    changefreqs: Counter[str] = field(default_factory=Counter)
    priorities: Counter[str] = field(default_factory=Counter)


@dataclass(slots=True)
class FileReport:
    """One robots.txt, sitemap or HTML page of the survey: the walk's verdict and the
    checker's, and what its records said."""

    node: SitemapNode
    listed_by: str | None = None
    uncompressed: int | None = None
    findings: list[Finding] = field(default_factory=list)
    counts: FileCounts = field(default_factory=FileCounts)
    #: The target whose walk reached it (freshness per target).
    target: str = ""

    @property
    def url(self) -> str:
        """The file's name in findings (see :func:`label_of`)."""
        return label_of(self.node)

    @property
    def seconds(self) -> float | None:
        """The walk's time for this file (request to last byte)."""
        return self.node.seconds

    @property
    def last_modified(self) -> str | None:
        """The Last-Modified header the walk saw."""
        return self.node.last_modified


@dataclass(slots=True)
class Survey:
    """What ``check`` and ``report`` show: the run, every file, counters over the URLs."""

    run: Run
    files: list[FileReport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # site-wide (no sitemap found...)
    lastmod_months: Counter[str] = field(default_factory=Counter)
    changefreqs: Counter[str] = field(default_factory=Counter)
    priorities: Counter[str] = field(default_factory=Counter)
    urls: int = 0
    duplicates: int = 0
    #: The records robots.txt disallows for us, and the first few of them.
    disallowed: int = 0
    blocked_examples: list[str] = field(default_factory=list)
    #: hreflang: alternates per language, pages with alternates, and the pages (up to
    #: ``REPORT_MAX_HREFLANG_PAGES``) with the URLs of their alternates (reciprocity).
    hreflang: Counter[str] = field(default_factory=Counter)
    hreflang_pages: int = 0
    alternates_of: dict[str, frozenset[str]] = field(default_factory=dict)
    #: Sitemap targets their host's robots.txt vouches for: normalized URL -> host.
    vouched_targets: dict[str, str] = field(default_factory=dict)

    def all_findings(self) -> list[Finding]:
        """Every finding: site-wide first, then file by file in tree order."""
        out = list(self.findings)
        for report in self.files:
            out.extend(report.findings)
        return out

    def ignore(self, codes: Iterable[str]) -> None:
        """Drop the findings of these rules (``check --ignore CODE``)."""
        dropped = set(codes)
        if dropped:
            self.findings = [f for f in self.findings if f.code not in dropped]
            for report in self.files:
                report.findings = [f for f in report.findings if f.code not in dropped]

    def count(self, record: UrlRecord, counts: FileCounts) -> None:
        """Add one record to the distributions, the run's and its file's."""
        self.urls += 1
        counts.kept += 1
        if record.lastmod is not None:
            self.lastmod_months[record.lastmod.strftime("%Y-%m")] += 1
        counts.fresh.add(record.lastmod)
        freq = record.changefreq or "(none)"
        self.changefreqs[freq] += 1
        counts.changefreqs[freq] += 1
        prio = "(none)" if record.priority is None else f"{record.priority:.1f}"
        self.priorities[prio] += 1
        counts.priorities[prio] += 1
        if record.robots == "disallowed":
            self._blocked(record.url, counts)
        if record.alternates:
            self._alternates(record)

    def _blocked(self, url: str, counts: FileCounts) -> None:
        self.disallowed += 1
        counts.disallowed += 1
        for examples in (counts.blocked_examples, self.blocked_examples):
            if len(examples) < REPORT_EXAMPLES:
                examples.append(url)

    def _alternates(self, record: UrlRecord) -> None:
        self.hreflang_pages += 1
        for alternate in record.alternates:
            self.hreflang[alternate.hreflang.lower()] += 1
        if len(self.alternates_of) < REPORT_MAX_HREFLANG_PAGES:
            self.alternates_of[record.url] = frozenset(a.url for a in record.alternates)

    def reciprocity(self) -> tuple[int, int, int, list[tuple[str, str]]]:
        """hreflang links between pages: (checked, not returned, pointing at a page no
        sitemap lists with alternates, examples of the not returned ones)."""
        checked = missing = unlisted = 0
        examples: list[tuple[str, str]] = []
        pages = self.alternates_of
        for page, others in pages.items():
            for other in others:
                if other == page:
                    continue
                back = pages.get(other)
                if back is None:
                    unlisted += 1
                    continue
                checked += 1
                if page not in back:
                    missing += 1
                    if len(examples) < REPORT_EXAMPLES:
                        examples.append((page, other))
        return checked, missing, unlisted, examples

    def freshness(self, target: str | None = None) -> Freshness:
        """The freshness of every record of the run (or of one target's)."""
        total = Freshness()
        for report in self.files:
            if target is None or report.target == target:
                total.merge(report.counts.fresh)
        return total


@dataclass(slots=True)
class _Checked:
    """What the tap found in one file."""

    findings: list[Finding]
    uncompressed: int | None = None


class _Tap(Observer):
    """The survey's seat in the walk: one :class:`_FileTap` per job."""

    def __init__(self, survey: Survey, limits: Limits, examples: int) -> None:
        self.survey = survey
        self.limits = limits
        self.site = SiteCheck(examples=examples)
        #: Findings by node (``id``: every node lives in the run's tree to the end).
        self.checked: dict[int, _Checked] = {}
        #: Sitemaps a robots.txt lists, or an index so listed lists (by normalized URL):
        #: the host of that robots.txt, whose every URL they may list.
        self.vouched: dict[str, str] = {}
        #: What each sitemap's records said, by node.
        self.counts: dict[int, FileCounts] = {}
        #: Nodes whose body the run's stop (the deadline, a budget) cut short.
        self.cut: set[int] = set()

    def watch(self, node: SitemapNode) -> Watch:
        """The tap of one job."""
        return _FileTap(self, node)

    def vouch(self, node: SitemapNode) -> str | None:
        """The host whose robots.txt vouches for ``node`` (see :attr:`vouched`)."""
        if node.kind == "robots":
            return host_of(node.final_url or node.url)
        return self.vouched.get(normalize_url(node.url) or node.url)

    def checker(self, node: SitemapNode) -> BodyChecker:
        """A checker for the body of ``node`` (its final URL is known by now)."""
        label = label_of(node)
        base = label if node.kind not in ("file", "stdin") else None
        vouched = self.vouch(node)
        checker = self.site.checker(label, base=base, limits=self.limits, vouched_host=vouched)
        if base is None:
            checker.base = None  # a local file has no location: no host or location rule
        return checker


class _FileTap(Watch):
    """Feeds one job's bytes to the checker and its records to the counters."""

    __slots__ = ("checker", "counts", "node", "tap")

    #: The records that other sitemaps emitted first come too: duplicates per file.
    tracks_duplicates = True

    def __init__(self, tap: _Tap, node: SitemapNode) -> None:
        self.tap = tap
        self.node = node
        self.checker: BodyChecker | None = None
        self.counts = tap.counts.setdefault(id(node), FileCounts())

    def begin(self, etag: str | None, last_modified: str | None) -> None:
        """A response with a body: a fresh checker (a retried body starts over)."""
        self.checker = None

    def feed(self, chunk: bytes) -> None:
        """A raw chunk, exactly as the walk read it (an HTML page's is not a sitemap's)."""
        if self.node.kind in HTML_KINDS:
            return
        if self.checker is None:
            self.checker = self.tap.checker(self.node)
        self.checker.feed(chunk)

    def child(self, url: str, lastmod: datetime | None) -> None:
        """A child of an index: vouched for by the robots.txt that vouches for the index
        (a robots.txt's own children are vouched for in :meth:`robots`: not its guesses)."""
        host = self.tap.vouch(self.node) if self.node.kind != "robots" else None
        if host is not None:
            self.tap.vouched[normalize_url(url) or url] = host

    def robots(self, body: bytes) -> None:
        """The robots.txt body the walk parsed: its findings; it vouches for what it lists."""
        node = self.node
        found = check_robots(body, label_of(node), self.tap.site.examples)
        self.tap.checked[id(node)] = _Checked(found)
        base = node.final_url or node.url
        host = host_of(base)
        if host is not None:
            for url in sitemaps_from_robots(body, base, max_bytes=self.tap.limits.max_robots_bytes):
                self.tap.vouched[url] = host

    def observe(self, batch: Batch, duplicates: Batch, uniform: bool) -> Batch:
        """Count the records the walk made (and the file's duplicates)."""
        count, counts = self.tap.survey.count, self.counts
        for record in batch:
            count(record, counts)
        counts.duplicates += len(duplicates)
        return batch

    def settle(self, node: SitemapNode, complete: bool) -> Checkpoint | None:
        """The job ended: close the checker, as cut short when the walk stopped early."""
        if not node.fetched or node.kind in HTML_KINDS:
            return None
        checker = self.checker or self.tap.checker(node)  # an empty body is checked too
        self.checker = None
        stop = _read_stop(node)
        if stop is None and _cut_by_stop(node):
            self.tap.cut.add(id(node))  # named once the run's stop reason is known
            findings = checker.close(complete=False)
        else:
            findings = checker.close(complete=stop is None)
        if stop is not None and not any(f.code == "check-limit" for f in findings):
            code = "check-limit" if stop.code.startswith("limit-") else "fetch-failed"
            message = f"read stopped: {stop.message}; the rest was not checked"
            findings.append(Finding(code, label_of(node), None, message))
        self.tap.checked[id(node)] = _Checked(findings, checker.bytes_out)
        return None


def _cut_by_stop(node: SitemapNode) -> bool:
    """A body that ended incomplete without any fatal problem: the run's stop (the
    deadline, a budget) ended the reading; the body itself did not break."""
    if node.complete or node.format in (None, "unknown"):
        return False
    return not any(p.fatal for p in node.problems)


def _read_stop(node: SitemapNode) -> Problem | None:
    """The walk's reason for ending this body before its end, if it did."""
    for problem in node.problems:
        if problem.fatal and (problem.code.startswith("limit-") or problem.code in READ_STOPS):
            return problem
    return None


async def survey(
    targets: Sequence[str],
    options: Options,
    *,
    resolver: AbstractResolver | None = None,
    examples: int = 1,
) -> Survey:
    """Walk ``targets`` with :class:`SitemapReader` (its ``options``, ``resolver``), with
    the checker and the counters riding on the walk; ``examples`` occurrences are kept
    per rule and file.

    A target given as a sitemap URL is first looked up in its host's robots.txt (and in
    the indexes that lists, one level down), so a file cross-submitted there gets the
    verdict it gets when the walk starts at the domain."""
    result = Survey(Run(targets=tuple(targets)))
    tap = _Tap(result, options.limits, examples)
    if options.walk.robots:
        result.vouched_targets = await _vouched(options, targets, resolver)
        tap.vouched.update(result.vouched_targets)
    async with SitemapReader(options, resolver=resolver) as reader:
        result.run = run = await reader.tree(list(targets), observer=tap)
    stopped = run.stats.stopped
    result.files = [FileReport(n, up, target=t) for n, up, t in _with_parents(run)]
    for report in result.files:
        key = id(report.node)
        _verdict(report, tap.checked.get(key), stopped, key in tap.cut)
        report.counts = tap.counts.get(key, report.counts)
    if run.error is not None and not any(r.findings for r in result.files):
        # When a file says why (a 404 is its fetch-failed), the target's verdict is not
        # said again; a run stopped before anything answered found no absence either.
        code = "no-sitemap" if stopped is None else "fetch-failed"
        named = ", ".join(map(printable, targets))
        result.findings.append(Finding(code, named, None, run.error))
    site = tap.site
    nested = site.nesting((r.listed_by, r.url) for r in result.files if r.listed_by is not None)
    for report in result.files:
        report.findings.extend(site.duplicates(report.url))
        report.findings.extend(f for f in nested if f.file == report.url)
    result.duplicates = sum(
        f.count for r in result.files for f in r.findings if f.code == "duplicate-url"
    )
    return result


def _sitemap_target(target: str) -> bool:
    """A URL with a path that is not a robots.txt: a sitemap given as the target."""
    if "://" not in target or is_robots(target):
        return False
    rest = target.split("://", 1)[1]
    return "/" in rest.rstrip("/")


async def _vouched(
    options: Options, targets: Sequence[str], resolver: AbstractResolver | None
) -> dict[str, str]:
    """The targets given as sitemap URLs that their host's robots.txt lists, or that an
    index it lists names: normalized URL -> that host. One small walk per host: its
    robots.txt, the sitemaps it lists, their children listed but not read."""
    wanted: dict[str, list[str]] = {}
    for target in filter(_sitemap_target, targets):
        origin = "/".join(target.split("/", 3)[:3])
        wanted.setdefault(origin + "/robots.txt", []).append(normalize_url(target) or target)
    found: dict[str, str] = {}
    if not wanted:
        return found
    # Only what robots.txt lists vouches: no well-known path is probed for it.
    light = options.replace(
        read_depth=0, since=None, trust_index_lastmod=True, html=None, guess=False
    )
    async with SitemapReader(light, resolver=resolver) as scout:
        for robots_url, keys in wanted.items():
            run = await scout.tree(robots_url)
            listed = {normalize_url(n.url) or n.url for n in run.nodes() if n.kind == "sitemap"}
            host = host_of(robots_url)
            found.update((key, host) for key in keys if key in listed and host is not None)
    return found


def _verdict(
    report: FileReport, checked: _Checked | None, stopped: Stopped | None, cut: bool
) -> None:
    """A file's findings: the checker's, or why it could not be read (the run's stop,
    named as such, when that is what ended or prevented the reading). An HTML page has
    none: the protocol's rules are not its rules."""
    node = report.node
    if node.kind in HTML_KINDS:
        return
    if checked is not None:
        report.findings.extend(checked.findings)
        report.uncompressed = checked.uncompressed
        if cut:
            how = "stopped early" if stopped is None else stop_phrase(stopped, CLI)
            message = f"read {how}; the rest was not checked"
            report.findings.append(Finding("fetch-failed", report.url, None, message))
        return
    if node.kind == "robots":
        return
    if stopped is not None and (
        _skipped_by_stop(node) or (node.status is None and not node.problems)
    ):
        message = f"not read: the run {stop_phrase(stopped, CLI)}"
    else:
        message = node.reason or "not read"
    report.findings.append(Finding("fetch-failed", report.url, None, message))


def _skipped_by_stop(node: SitemapNode) -> bool:
    return node.skipped is not None and node.skipped.code == "stopped"


def _with_parents(run: Run) -> Iterator[tuple[SitemapNode, str | None, str]]:
    """Every node the walk attempted (or the run's stop left unread), with the name of
    the sitemap that listed it and its target. The pages of the HTML way in are there
    too (as ``tree --html`` shows them)."""
    stopped = run.stats.stopped

    def walk(
        node: SitemapNode, up: SitemapNode | None, target: str
    ) -> Iterator[tuple[SitemapNode, str | None, str]]:
        parent_url = None
        if up is not None and up.kind != "robots":
            parent_url = label_of(up)
        attempted = node.fetched or node.status is not None or bool(node.problems)
        empty_probe = node.kind in PROBE_KINDS and node.format in (None, "unknown")
        left = stopped is not None and _skipped_by_stop(node) and node.kind == "sitemap"
        if (node.skipped is None and attempted and not empty_probe) or left:
            yield node, parent_url, target
        for child in node.children:
            yield from walk(child, node, target)

    for target, root in zip(run.targets, run.tree, strict=False):
        yield from walk(root, None, target)


def utc_now() -> datetime:
    """Now, in UTC (the report's time stamp)."""
    return datetime.now(UTC)
