"""What the command tells humans: the live progress line, the summary, the text tree.

All of it goes to stderr except the tree (``tree`` prints it as its output). The progress
line is drawn by tqdm, and only on a terminal; everything else is plain lines, with colour
only on a terminal and never when ``NO_COLOR`` is set (https://no-color.org).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Final

from tqdm import tqdm

from sitemap_reader._safe_text import printable
from sitemap_reader._words import plural, stop_phrase, verdict_phrase
from sitemap_reader.discovery.model import PROBE_KINDS, Stopped
from sitemap_reader.options.doors import spelling

if TYPE_CHECKING:
    from sitemap_reader.discovery.model import Run, SitemapNode, Stats

MB = 1_000_000
#: The command line names options by their flags.
FLAG = spelling("cli")


def wants_colour(stream: IO[str]) -> bool:
    """Colour only on a terminal, and never with ``NO_COLOR`` set or ``TERM=dumb``."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return _isatty(stream)


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # replaced or closed stream
        return False


def progress_wanted(stderr: IO[str], stdout: IO[str] | None) -> bool:
    """A live line only when stderr is a terminal and the records are not printed on a
    terminal too (the two would scramble each other; curl makes the same choice)."""
    return _isatty(stderr) and (stdout is None or not _isatty(stdout))


class Progress:
    """The live progress line: sitemaps done out of known, URLs, megabytes, URL rate."""

    def __init__(self, stream: IO[str]) -> None:
        self._bar = tqdm(
            total=None,
            file=stream,
            leave=False,
            dynamic_ncols=True,
            bar_format="{n_fmt}/{total_fmt} sitemaps |{bar}| {desc}",
        )

    def update(self, stats: Stats) -> None:
        """Redraw from the reader's live counters."""
        self._bar.set_description_str(progress_text(stats), refresh=False)
        done = stats.sitemaps_ok + stats.sitemaps_failed
        self._bar.total = done + stats.sitemaps_queued
        self._bar.n = done
        self._bar.refresh()

    def close(self) -> None:
        """Erase the line (the summary follows)."""
        self._bar.close()


def progress_text(stats: Stats) -> str:
    """``1,234 URLs (500/s), 3.2 MB (1.1 MB/s)``; once discovery ended and records are
    still being written (``--ranked`` writes them all at the end), a phase line instead."""
    if stats.finished is not None:
        return f"discovery done: {stats.urls_emitted:,} URLs; writing the records"
    seconds = max(stats.seconds, 1e-3)
    text = (
        f"{stats.urls_emitted:,} URLs ({stats.urls_emitted / seconds:,.0f}/s), "
        f"{stats.bytes / MB:.1f} MB ({stats.bytes / MB / seconds:.1f} MB/s)"
    )
    left = eta(stats)
    return text if left is None else f"{text}, ~{_duration(left)} left"


def eta(stats: Stats) -> float | None:
    """Seconds left, from the sitemaps known but not finished (index counts say how many
    there are) at the pace of those finished so far; None before the first is finished,
    or when nothing is left."""
    done = stats.sitemaps_ok + stats.sitemaps_failed
    if done == 0 or stats.sitemaps_queued == 0:
        return None
    return stats.seconds * stats.sitemaps_queued / done


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass(slots=True)
class Outcome:
    """What the command itself did with the records, next to the reader's stats."""

    written: int | None = 0  # None: the command writes no records (tree)
    #: The command's own stop: a signal, its output closed or failed (the reader's stops,
    #: the deadline and the records budget, are in its stats).
    stopped: Stopped | None = None
    output: str | None = None  # the -o file, once it is complete
    requested: str | None = None  # the -o file asked for (left as it was unless complete)


#: "not finished" lines shown in the summary; the rest are counted in one more line (a
#: closed pipe can cut thousands of sitemaps of an index short).
SHOWN_UNFINISHED: Final = 5


def summary_lines(
    stats: Stats,
    nodes: list[SitemapNode],
    outcome: Outcome,
    *,
    verbose: bool = False,
    colour: bool = False,
) -> list[str]:
    """The final summary: counts, then one line per failed sitemap (URL and reason).

    With ``verbose``, every problem of every sitemap follows, one line each. Site text
    (URLs, reasons, messages) is shown through :func:`printable`, before any colour.
    """
    lines: list[tuple[str | None, str]] = []  # (colour, text)
    stopped = outcome.stopped or stats.stopped
    if stopped:
        lines.append(("yellow", stop_phrase(stopped, FLAG)))
    # A stop the user asked for (--max-urls, --deadline, Ctrl-C, a closed pipe, a budget)
    # cuts the sitemaps in flight: they are not finished, not failed. The counts are the
    # lines below: a sitemap cut before it settled is in no stats counter.
    unfinished = list(unfinished_nodes(nodes)) if stopped else []
    cut_urls = {node.final_url or node.url for node in unfinished}
    failed_lines = [(url, why) for url, why in failures(nodes) if url not in cut_urls]
    failed = len(failed_lines)
    cut = f", {len(cut_urls)} not finished" if cut_urls else ""
    unchanged = f", {stats.sitemaps_unchanged} unchanged" if stats.sitemaps_unchanged else ""
    lines.append(
        (
            None,
            f"sitemaps: {stats.sitemaps_ok} ok, {failed} failed{cut}, "
            f"{stats.sitemaps_skipped} skipped{unchanged}",
        )
    )
    removed = f", {stats.urls_removed:,} removed" if stats.urls_removed else ""
    if stats.urls_older:
        removed += f", {stats.urls_older:,} older than {FLAG('since')}"
    lines.append(
        (
            None,
            f"URLs: {stats.urls_emitted:,} emitted, {stats.urls_duplicate:,} duplicate, "
            f"{stats.urls_out_of_scope:,} out of scope{removed}"
            f"{_written(outcome, stats.urls_filtered)}",
        )
    )
    lines.append((None, f"read: {stats.bytes / MB:.2f} MB in {stats.seconds:.2f} s"))
    limits = limit_hits(nodes)
    if limits:
        lines.append(("yellow", f"limits hit: {limits}"))
    lines.extend(("red", f"failed: {url} ({reason})") for url, reason in failed_lines)
    lines.extend((None, text) for text in _unfinished_lines(sorted(cut_urls)))
    if verbose:
        lines.extend((None, text) for text in problem_lines(nodes))
    paint = _painter(colour)
    return [paint(hue, printable(text)) if hue else printable(text) for hue, text in lines]


def _unfinished_lines(urls: list[str]) -> Iterator[str]:
    """``not finished: URL`` for the first :data:`SHOWN_UNFINISHED`, then a count."""
    for url in urls[:SHOWN_UNFINISHED]:
        yield f"not finished: {url}"
    if len(urls) > SHOWN_UNFINISHED:
        yield f"not finished: {len(urls) - SHOWN_UNFINISHED:,} more"


def unfinished_nodes(nodes: list[SitemapNode]) -> Iterator[SitemapNode]:
    """Failed nodes that were only cut short (:attr:`SitemapNode.cut_short`)."""
    for root in nodes:
        yield from (node for node in root.walk() if node.cut_short)


def _written(outcome: Outcome, filtered: int) -> str:
    if outcome.written is None:
        return ""
    if outcome.requested and not outcome.output:
        # None of the records emitted is kept, those in flight to the writer when the run
        # stopped too: a count of the ones the writer had would not add up to the emitted.
        return f"; records not kept: {outcome.requested} left as it was"
    text = f"; {outcome.written:,} written"
    if outcome.output:
        text += f" to {outcome.output}"
    if filtered:
        text += f", {filtered:,} filtered out"
    return text


def failures(nodes: list[SitemapNode]) -> Iterator[tuple[str, str]]:
    """(URL, reason) of each failed sitemap, in tree order. A well-known path that holds
    no sitemap is skipped, not failed; one that was a sitemap and broke is listed."""
    for root in nodes:
        for node in root.walk():
            if node.failed:
                yield node.final_url or node.url, node.reason or "failed"


def limit_hits(nodes: list[SitemapNode]) -> str | None:
    """``limit-bytes x2, limit-depth x1``: every limit the run hit, or None."""
    hits: dict[str, int] = {}
    for root in nodes:
        for node in root.walk():
            for p in node.problems:
                if p.code.startswith("limit-"):
                    hits[p.code] = hits.get(p.code, 0) + p.count
    return ", ".join(f"{code} x{count}" for code, count in sorted(hits.items())) or None


def missed_probe(node: SitemapNode) -> bool:
    """A well-known path (or usual HTML path) probed that holds nothing: not a finding."""
    return (
        node.kind in PROBE_KINDS and node.skipped is not None and node.skipped.code == "not-found"
    )


def problem_lines(nodes: list[SitemapNode]) -> Iterator[str]:
    """One line per problem of every node: ``problem: URL code xN: message`` (a probe
    that found nothing has none: its 404 is the answer it looked for)."""
    for root in nodes:
        for node in root.walk():
            if missed_probe(node):
                continue
            for p in node.problems:
                times = f" x{p.count}" if p.count > 1 else ""
                message = p.message
                yield f"problem: {node.final_url or node.url} {p.code}{times}: {message}"


#: Problems a node recovered from on its own, shown in the text tree only with -v (the
#: JSON tree keeps them): https that cannot connect where http then answered (every
#: ``host:port`` target of a plain-HTTP server has it).
RECOVERED: Final = frozenset({"https-unavailable"})


def tree_lines(
    roots: list[SitemapNode], stopped: Stopped | None = None, *, verbose: bool = False
) -> Iterator[str]:
    """The sitemap tree as indented text: one line per node, its problems below it.

    ``URL  [STATUS FORMAT, N URLs, SIZE]``, then ``! code: message`` per problem (those
    in :data:`RECOVERED` on a node that answered only when ``verbose``). The well-known
    paths probed that held nothing share one line (a probe that finds nothing is not a
    finding); with ``stopped`` (the run's stop), a sitemap the stop cut short is "not
    finished", not failed. Site text is shown through :func:`printable`.
    """
    cut = {id(n) for n in unfinished_nodes(roots)} if stopped else set()
    for root in roots:
        yield from map(printable, _node_lines(root, "", "", cut, verbose))


def _node_lines(
    node: SitemapNode, lead: str, child_lead: str, cut: set[int], verbose: bool
) -> Iterator[str]:
    yield f"{lead}{_node_label(node, id(node) in cut)}"
    shown = [c for c in node.children if not missed_probe(c)]
    missed = [c for c in node.children if missed_probe(c)]
    rows: list[SitemapNode | None] = [*shown, *([None] if missed else [])]
    answered = node.status is not None
    for p in node.problems:
        if p.code in RECOVERED and answered and not verbose:
            continue
        times = f" (x{p.count})" if p.count > 1 else ""
        message = p.message
        yield f"{child_lead}{'│' if rows else ' '}   ! {p.code}{times}: {message}"
    for i, child in enumerate(rows):
        last = i == len(rows) - 1
        branch = child_lead + ("└── " if last else "├── ")
        if child is None:
            yield branch + _missed_line(missed)
            continue
        yield from _node_lines(
            child, branch, child_lead + ("    " if last else "│   "), cut, verbose
        )


def _missed_line(missed: list[SitemapNode]) -> str:
    """``probed 6 well-known paths, none is a sitemap: /sitemap.xml, ... (HTTP 404)``."""
    paths = [(n.final_url or n.url).split("/", 3)[-1] for n in missed]
    reasons = sorted({n.skipped.detail or "" for n in missed if n.skipped is not None})
    noun = "well-known path" if missed[0].kind == "guess" else "usual HTML path"
    why = f" ({', '.join(r for r in reasons if r)})" if any(reasons) else ""
    return f"probed {plural(len(missed), noun)}, none found: /{', /'.join(paths)}{why}"


def _node_label(node: SitemapNode, cut: bool = False) -> str:
    url = node.url
    if node.final_url and node.final_url != node.url:
        url += f" -> {node.final_url}"
    if node.not_read:
        return f"{url}  [not read]"
    if node.skipped is not None:
        return f"{url}  [skipped: {node.skipped}]"
    status = str(node.status) if node.status is not None else "-"
    parts = [f"{status} {node.format or node.kind}"]
    if node.format == "sitemapindex":
        parts.append(plural(len(node.children), "sitemap"))
    elif node.kind != "robots" and node.fetched:
        parts.append(plural(node.urls, "URL"))
    if node.bytes:
        parts.append(_size(node.bytes))
    if cut:
        verdict = "  not finished (the run stopped)"
    elif node.failed:
        verdict = f"  FAILED: {node.reason or ''}"
    else:
        verdict = ""
    return f"{url}  [{', '.join(parts)}]{verdict}"


def _size(count: int) -> str:
    if count < 10_000:
        return f"{count:,} B"
    if count < 10 * MB:
        return f"{count / 1000:,.0f} kB"
    return f"{count / MB:,.1f} MB"


_COLOURS = {"red": "31", "yellow": "33", "bold": "1"}


def _painter(enabled: bool) -> Callable[[str, str], str]:
    def paint(colour: str, text: str) -> str:
        return f"\x1b[{_COLOURS[colour]}m{text}\x1b[0m" if enabled else text

    return paint


def verdict_lines(run: Run) -> list[str]:
    """``verdict: blocked: Cloudflare challenge answered URL (cf-mitigated: challenge,
    HTTP 403)``: one line per target (its name first when there are several)."""
    many = len(run.verdicts) > 1
    return [printable("verdict: " + verdict_phrase(v, named=many)) for v in run.verdicts.values()]
