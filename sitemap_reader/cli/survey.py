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

from sitemap_reader.cli.usage import plain_reason
from sitemap_reader.crawl import Run, SitemapNode, SitemapReader
from sitemap_reader.discovery.actions import Batch, Checkpoint
from sitemap_reader.discovery.observer import Observer, Watch
from sitemap_reader.discovery.ways import HTML_KINDS
from sitemap_reader.limits import Limits
from sitemap_reader.options import Options
from sitemap_reader.parse.checker import BodyChecker, Finding, SiteCheck, check_robots
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.robots import sitemaps_from_robots
from sitemap_reader.parse.scope import host_of
from sitemap_reader.records import Problem, UrlRecord
from sitemap_reader.safe_text import printable

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
class FileReport:
    """One robots.txt or sitemap of the survey: the walk's verdict and the checker's."""

    node: SitemapNode
    listed_by: str | None = None
    uncompressed: int | None = None
    findings: list[Finding] = field(default_factory=list)

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

    def count(self, record: UrlRecord) -> None:
        """Add one record to the distributions."""
        self.urls += 1
        if record.lastmod is not None:
            self.lastmod_months[record.lastmod.strftime("%Y-%m")] += 1
        self.changefreqs[record.changefreq or "(none)"] += 1
        prio = "(none)" if record.priority is None else f"{record.priority:.1f}"
        self.priorities[prio] += 1


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

    __slots__ = ("checker", "node", "tap")

    def __init__(self, tap: _Tap, node: SitemapNode) -> None:
        self.tap = tap
        self.node = node
        self.checker: BodyChecker | None = None

    def begin(self, etag: str | None, last_modified: str | None) -> None:
        """A response with a body: a fresh checker (a retried body starts over)."""
        self.checker = None

    def feed(self, chunk: bytes) -> None:
        """A raw chunk, exactly as the walk read it."""
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
        """Count the records the walk made."""
        count = self.tap.survey.count
        for record in batch:
            count(record)
        return batch

    def settle(self, node: SitemapNode, complete: bool) -> Checkpoint | None:
        """The job ended: close the checker, as cut short when the walk stopped early."""
        if not node.fetched:
            return None
        checker = self.checker or self.tap.checker(node)  # an empty body is checked too
        self.checker = None
        stop = _read_stop(node)
        findings = checker.close(complete=stop is None)
        if stop is not None and not any(f.code == "check-limit" for f in findings):
            code = "check-limit" if stop.code.startswith("limit-") else "fetch-failed"
            message = f"read stopped: {stop.message}; the rest was not checked"
            findings.append(Finding(code, label_of(node), None, message))
        self.tap.checked[id(node)] = _Checked(findings, checker.bytes_out)
        return None


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
    per rule and file."""
    result = Survey(Run(targets=tuple(targets)))
    tap = _Tap(result, options.limits, examples)
    async with SitemapReader(options, resolver=resolver) as reader:
        result.run = run = await reader.tree(list(targets), observer=tap)
    if run.error is not None:
        reason = plain_reason(run.error)
        named = ", ".join(map(printable, targets))
        result.findings.append(Finding("no-sitemap", named, None, reason))
    result.files = [FileReport(node, parent) for node, parent in _with_parents(run)]
    for report in result.files:
        _verdict(report, tap.checked.get(id(report.node)))
    site = tap.site
    nested = site.nesting((r.listed_by, r.url) for r in result.files if r.listed_by is not None)
    for report in result.files:
        report.findings.extend(site.duplicates(report.url))
        report.findings.extend(f for f in nested if f.file == report.url)
    result.duplicates = sum(
        f.count for r in result.files for f in r.findings if f.code == "duplicate-url"
    )
    return result


def _verdict(report: FileReport, checked: _Checked | None) -> None:
    """A file's findings: the checker's, or why it could not be read."""
    node = report.node
    if checked is not None:
        report.findings.extend(checked.findings)
        report.uncompressed = checked.uncompressed
    elif node.kind != "robots":
        reason = node.reason or "not read"
        report.findings.append(Finding("fetch-failed", report.url, None, plain_reason(reason)))


def _with_parents(run: Run) -> Iterator[tuple[SitemapNode, str | None]]:
    """Every node the walk attempted, with the name of the sitemap that listed it."""

    def walk(node: SitemapNode, up: SitemapNode | None) -> Iterator[tuple[SitemapNode, str | None]]:
        parent_url = None
        if up is not None and up.kind != "robots":
            parent_url = label_of(up)
        attempted = node.fetched or node.status is not None or bool(node.problems)
        empty_probe = node.kind == "guess" and node.format in (None, "unknown")
        html = node.kind in HTML_KINDS  # a page for people: the protocol's rules do not apply
        if node.skipped is None and attempted and not empty_probe and not html:
            yield node, parent_url
        for child in node.children:
            yield from walk(child, node)

    for root in run.tree:
        yield from walk(root, None)


def utc_now() -> datetime:
    """Now, in UTC (the report's time stamp)."""
    return datetime.now(UTC)
