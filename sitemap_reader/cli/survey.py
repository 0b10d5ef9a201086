"""A survey of one target for ``check`` and ``report``: the tree, then every file once more.

The walk itself is :meth:`SitemapReader.tree` (robots.txt, redirects, the address guard,
budgets, retries): it says which files exist and what happened to each. The survey then
reads every file the walk fetched a second time, streaming it through the protocol
checker (:mod:`sitemap_reader.check`) and :class:`~sitemap_reader.SitemapParser`, and
times it. Nothing keeps a body or the records: the survey keeps counters (lastmod by
month, changefreq, priority) and the findings.

The second read costs one more download per file; once the discovery core hands bodies
to observers, the survey can ride on the walk instead (the checker is sans-I/O for that).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp

from sitemap_reader.check import BodyChecker, Finding, SiteCheck, check_robots
from sitemap_reader.cli.usage import plain_reason
from sitemap_reader.crawl import Run, SitemapNode, SitemapReader
from sitemap_reader.discovery.ways import HTML_KINDS
from sitemap_reader.limits import Limits
from sitemap_reader.parse.parser import SitemapParser
from sitemap_reader.records import UrlRecord

CHUNK = 64 * 1024


@dataclass(slots=True)
class FileReport:
    """One robots.txt or sitemap of the survey: the walk's verdict and the second read."""

    node: SitemapNode
    parent: str | None = None
    seconds: float | None = None
    last_modified: str | None = None
    uncompressed: int | None = None
    findings: list[Finding] = field(default_factory=list)

    label: str | None = None

    @property
    def url(self) -> str:
        """The file's URL after redirects (or its path; ``-`` for standard input)."""
        return self.label or self.node.final_url or self.node.url

    @property
    def source(self) -> str:
        """Where to read the file again: its final URL or its path."""
        return self.node.final_url or self.node.url


@dataclass(slots=True)
class Survey:
    """What ``check`` and ``report`` show: the run, every file, counters over the URLs."""

    run: Run
    stdin_path: str | None = None  # the temporary copy of standard input, shown as "-"
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

    def count(self, record: UrlRecord) -> None:
        """Add one record to the distributions."""
        self.urls += 1
        if record.lastmod is not None:
            self.lastmod_months[record.lastmod.strftime("%Y-%m")] += 1
        self.changefreqs[record.changefreq or "(none)"] += 1
        prio = "(none)" if record.priority is None else f"{record.priority:.1f}"
        self.priorities[prio] += 1


@dataclass(slots=True)
class _Context:
    session: aiohttp.ClientSession
    site: SiteCheck
    survey: Survey
    limits: Limits


async def survey(target: str, options: dict[str, Any]) -> Survey:
    """Walk ``target`` with :class:`SitemapReader` (``options`` are its keywords), then read
    every fetched file through the checker and the parser."""
    async with _local_copy(target) as actual:
        async with SitemapReader(**options) as reader:
            run = await reader.tree(actual)
            user_agent = reader.user_agent
        result = Survey(run, stdin_path=actual if actual != target else None)
        if run.error is not None:
            result.findings.append(Finding("no-sitemap", target, None, plain_reason(run.error)))
        limits = options.get("limits") or Limits()
        timeout = aiohttp.ClientTimeout(
            total=options.get("timeout") or limits.sitemap_timeout,
            sock_connect=limits.connect_timeout,
        )
        headers = {"User-Agent": user_agent, "Accept-Encoding": "gzip"}
        async with aiohttp.ClientSession(
            timeout=timeout, headers=headers, auto_decompress=False
        ) as session:
            context = _Context(session, SiteCheck(), result, limits)
            pairs = list(_with_parents(run))
            result.files = [FileReport(node, parent) for node, parent in pairs]
            for report in result.files:
                if report.node.url == result.stdin_path:
                    report.label = "-"
            # One file after the other, in tree order: "first in FILE" of a duplicate is
            # then the first file in the tree, and each file's time is its own.
            for report in result.files:
                await _read(context, report)
        site = context.site
        nested = site.nesting((r.parent, r.url) for r in result.files if r.parent is not None)
        for report in result.files:
            report.findings.extend(site.duplicates(report.url))
            report.findings.extend(f for f in nested if f.file == report.url)
        result.duplicates = sum(
            f.count for r in result.files for f in r.findings if f.code == "duplicate-url"
        )
        return result


def _with_parents(run: Run) -> Iterator[tuple[SitemapNode, str | None]]:
    """Every node worth reading again, with the URL of the sitemap that listed it."""

    def walk(
        node: SitemapNode, parent: SitemapNode | None
    ) -> Iterator[tuple[SitemapNode, str | None]]:
        parent_url = None
        if parent is not None and parent.kind != "robots":
            parent_url = parent.final_url or parent.url
        attempted = node.fetched or node.status is not None or bool(node.problems)
        empty_probe = node.kind == "guess" and node.format in (None, "unknown")
        html = node.kind in HTML_KINDS  # a page for people: the protocol's rules do not apply
        if node.skipped is None and attempted and not empty_probe and not html:
            yield node, parent_url
        for child in node.children:
            yield from walk(child, node)

    for root in run.tree:
        yield from walk(root, None)


async def _read(context: _Context, report: FileReport) -> None:
    node = report.node
    if not node.fetched and node.kind != "robots":
        reason = node.reason or "not read"
        report.findings.append(Finding("fetch-failed", report.url, None, reason))
        return
    if node.kind == "robots" and node.status != 200:
        return  # no robots.txt: nothing to check in it
    started = time.monotonic()
    try:
        if node.kind == "robots":
            body = await _robots_body(context, report)
            report.findings.extend(check_robots(body, report.url))
        else:
            await _read_sitemap(context, report)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        text = plain_reason(str(exc) or type(exc).__name__)
        report.findings.append(Finding("fetch-failed", report.url, None, f"second read: {text}"))
    report.seconds = time.monotonic() - started


async def _robots_body(context: _Context, report: FileReport) -> bytes:
    """A robots.txt, up to the robots size cap."""
    cap = context.limits.max_robots_bytes
    parts: list[bytes] = []
    size = 0
    async for chunk in _chunks(context, report):
        parts.append(chunk)
        size += len(chunk)
        if size >= cap:
            break
    return b"".join(parts)[:cap]


async def _read_sitemap(context: _Context, report: FileReport) -> None:
    url = report.url
    remote = "://" in url
    checker: BodyChecker = context.site.checker(url, base=url if remote else None)
    parser = SitemapParser(url if remote else None, limits=context.limits)
    if not remote:
        checker.base = None
    count = context.survey.count
    async for chunk in _chunks(context, report):
        checker.feed(chunk)
        for item in parser.feed(chunk):
            if isinstance(item, UrlRecord):
                count(item)
    for item in parser.close():
        if isinstance(item, UrlRecord):
            count(item)
    report.findings.extend(checker.close())
    report.uncompressed = checker.bytes_out


async def _chunks(context: _Context, report: FileReport) -> AsyncIterator[bytes]:
    """The raw body of a file: from disk, or over HTTP (no redirects: it is the final URL)."""
    url = report.source
    if "://" not in url:
        with open(url, "rb") as handle:
            while chunk := handle.read(CHUNK):
                yield chunk
        return
    async with context.session.get(url, allow_redirects=False) as response:
        report.last_modified = response.headers.get("Last-Modified")
        if response.status != 200:
            raise aiohttp.ClientError(f"HTTP {response.status}")
        async for chunk in response.content.iter_chunked(CHUNK):
            yield chunk


class _local_copy:
    """``-`` (standard input) becomes a temporary file, so it can be read twice."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.path: str | None = None

    async def __aenter__(self) -> str:
        if self.target.strip() != "-":
            return self.target
        cap = Limits().max_decompressed_bytes
        data = sys.stdin.buffer.read(cap + 1)[:cap]
        fd, self.path = tempfile.mkstemp(prefix="sitemap-reader-", suffix=".stdin")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return self.path

    async def __aexit__(self, *exc: object) -> None:
        if self.path is not None:
            os.unlink(self.path)


def utc_now() -> datetime:
    """Now, in UTC (the report's time stamp)."""
    return datetime.now(UTC)
