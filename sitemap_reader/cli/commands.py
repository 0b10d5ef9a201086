"""The three commands, ``dump``, ``tree`` and ``demo``, each on one :class:`SitemapReader`.

Each handler takes the parsed arguments and returns the exit code. The crawl runs in a
task that SIGINT and SIGTERM cancel (:func:`interruptible`); what was gathered until then
is still summarised. A ticker redraws the progress line and flushes stdout a few times a
second, so a consumer at the other end of a pipe sees records while discovery goes on.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import signal
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import IO, Any, Final

from sitemap_reader._safe_text import printable
from sitemap_reader._words import plural
from sitemap_reader.cli.args import PROG
from sitemap_reader.cli.flags import options_from
from sitemap_reader.cli.hints import guard_lines, html_hint, scope_lines, state_lines
from sitemap_reader.cli.output import AtomicFile, RecordWriter, check_not_own, json_text
from sitemap_reader.cli.summary import (
    FLAG,
    Outcome,
    Progress,
    progress_wanted,
    summary_lines,
    tree_lines,
    verdict_lines,
    wants_colour,
)
from sitemap_reader.crawl import Run, SitemapReader
from sitemap_reader.delivery.parquet import check_parquet, record_writer
from sitemap_reader.delivery.writers import DescriptorText
from sitemap_reader.discovery.model import Stopped
from sitemap_reader.discovery.robots import SUMMARY_CODES
from sitemap_reader.discovery.targets import classify
from sitemap_reader.discovery.ways import WAY_CODES
from sitemap_reader.errors import DiscoveryError, UsageError
from sitemap_reader.options import Options
from sitemap_reader.records import UrlRecord

EXIT_OK: Final = 0
EXIT_NOTHING: Final = 1
EXIT_USAGE: Final = 2
#: The stop of a run whose reader of stdout went away (``| head``): it ends quietly.
OUTPUT_CLOSED: Final = Stopped("output-closed")
#: Seconds between progress redraws and stdout flushes.
TICK: Final = 0.2


def run_dump(args: argparse.Namespace) -> int:
    """``sitemap-reader dump TARGET...``."""
    return _guarded(args, lambda: _dump(args, checked_targets(args.targets)))


def run_tree(args: argparse.Namespace) -> int:
    """``sitemap-reader tree TARGET``."""
    return _guarded(args, lambda: _tree(args, checked_targets(args.targets)[0]))


def run_demo(args: argparse.Namespace) -> int:
    """``sitemap-reader demo [dump|tree|check|report|serve]``: serve the demo site, read it."""
    if args.json and args.action not in ("tree", "check"):
        return _usage(args, "--json goes with 'demo tree' or 'demo check'")
    if args.port and args.action != "serve":
        return _usage(args, "--port goes with 'demo serve'")
    if args.action == "serve":
        return asyncio.run(_serve_demo(args))
    if args.action in ("check", "report"):
        return _inspect_demo(args)
    return _guarded(args, lambda: _demo(args))


async def _serve_demo(args: argparse.Namespace) -> int:
    """Serve the demo site until SIGINT or SIGTERM; its URL on stdout (exit 0)."""
    from sitemap_reader import demo

    try:
        async with demo.serve(port=args.port) as base:
            print(base + "/", flush=True)
            _say(args, f"demo site running at {base}/ (Ctrl-C stops it)")
            await interruptible(asyncio.ensure_future(_forever()))
    except OSError as exc:
        return _usage(args, f"cannot serve on port {args.port}: {exc.strerror or exc}")
    return EXIT_OK


async def _forever() -> None:
    await asyncio.Event().wait()


def _inspect_demo(args: argparse.Namespace) -> int:
    """``demo check`` and ``demo report``: the command, on the demo site in a thread."""
    from sitemap_reader import demo

    inspector = args.inspectors.get(args.action)
    if inspector is None:
        return _usage(args, f"'demo {args.action}' is not available here")
    if args.action == "report" and not args.output:
        return _usage(args, "'demo report' needs -o FILE")
    with demo.serve_in_thread() as base:
        _say(args, f"demo site running at {base}/ (it stops when the run ends)")
        args.targets = [base + "/"]
        code: int = inspector(args)
        return code


def _guarded(args: argparse.Namespace, command: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """Run an async command; a bad target or output path is a usage error (exit 2)."""
    try:
        return asyncio.run(command())
    except UsageError as exc:
        return _usage(args, str(exc))


def checked_targets(targets: list[str]) -> list[str]:
    """The targets, once each was read by the one target rule (else UsageError: "no
    such file" for one written as a path), before any output is opened."""
    for text in targets:
        classify(text)
    return list(targets)


async def _demo(args: argparse.Namespace) -> int:
    from sitemap_reader import demo  # the aiohttp server side: only needed here

    async with demo.serve() as base:
        target = base + "/"
        _say(args, f"demo site running at {target} (it stops when the run ends)")
        if args.action == "tree":
            return await _tree(args, target)
        return await _dump(args, [target])


# --------------------------------------------------------------------------- dump


class Pump:
    """Moves the records of a run into the writer, a batch at a time, and counts them.

    What is delivered (which records, how many, in what order) is the reader's
    :class:`~sitemap_reader.options.groups.Delivery`; the pump only writes, and stops
    the run when its output goes away or fails.
    """

    def __init__(
        self, args: argparse.Namespace, stream: IO[str], *, flush_batches: bool = False
    ) -> None:
        self.format = args.format
        # The text formats go straight to the descriptor (no buffer to fail later), so
        # that on a full disk ``written`` is the whole records the output holds.
        self.direct = DescriptorText.over(stream) if args.format != "parquet" else None
        self.stream: IO[str] = self.direct or stream  # type: ignore[assignment]
        self.flush_batches = flush_batches
        self.written = 0
        self.outcome = Outcome()
        self.write_error: OSError | None = None  # the output failed (a full disk...)
        csv_raw = bool(getattr(args, "csv_raw", False))
        self.writer: RecordWriter | None = None
        try:  # the CSV header is written here
            self.writer = record_writer(args.format, self.stream, csv_raw=csv_raw)
        except OSError as exc:
            self.failed(exc)

    async def read(self, reader: SitemapReader, targets: list[str]) -> None:
        """Write every record the reader delivers for the targets.

        With ``flush_batches`` (an ``-o`` file) each batch is handed to the OS before the
        next is asked for, so a full disk shows before the reader saves its state.
        """
        async with contextlib.aclosing(reader.batches(targets)) as batches:
            async for batch in batches:
                if not self._write(batch):
                    break

    def _write(self, batch: list[UrlRecord]) -> bool:
        """Write one batch in one call (the writers encode a batch at a time); False once
        the output cannot take more. Only our own writes are caught here: an OSError from
        the reader is not ours."""
        if self.writer is None:
            return False
        try:
            self.writer.write_batch(batch)
            self.written += len(batch)
            if self.flush_batches:
                self.stream.flush()
        except BrokenPipeError:
            self.outcome.stopped = OUTPUT_CLOSED
            return False
        except OSError as exc:
            if self.direct is not None:  # the records of this batch that went out whole
                self.written += self.direct.records_out(self.format)
            self.failed(exc)
            return False
        return True

    def failed(self, exc: OSError) -> None:
        """The output cannot be written: stop, and say so once the crawl ends."""
        if self.write_error is None:
            self.write_error = exc
            self.outcome.stopped = Stopped("output-failed")

    def flush(self) -> bool:
        """Push buffered lines downstream; False when the reader of stdout went away or
        the output cannot be written."""
        if self.write_error is not None:
            return False
        try:
            self.stream.flush()
        except BrokenPipeError:
            self.outcome.stopped = OUTPUT_CLOSED
            return False
        except OSError as exc:
            self.failed(exc)
            return False
        return True


async def _dump(args: argparse.Namespace, targets: list[str]) -> int:
    check_parquet(args.format, args.output)
    check_not_own(args.output, targets, getattr(args, "state", None))  # before any opening
    options = reader_options(args)
    sink = _open_output(args.output)
    stream = sink.stream if sink is not None else _utf8_stdout()
    pump = Pump(args, stream, flush_batches=sink is not None)
    if sink is not None and sink.in_place:
        pump.outcome.output = sink.path  # written as the records come, whatever follows
    code, error = EXIT_OK, None
    try:
        async with SitemapReader(options) as reader:
            try:
                signum = await _crawl(args, reader, pump.read(reader, targets), pump.flush, stream)
            except DiscoveryError as exc:
                signum, error = None, str(exc)
            run = reader.last_run
        code, pump.outcome.stopped = _exit_status(signum, error, pump.outcome.stopped)
        if pump.flush() and sink is not None and code == EXIT_OK:
            _commit(sink, pump)
    finally:
        if sink is not None:
            sink.abort()  # a no-op once committed; removes the temporary file otherwise
    pump.outcome.written = pump.written
    pump.outcome.requested = args.output
    if pump.write_error is not None:
        code = _write_failed(args, pump, kept=sink is None or sink.in_place)
    await _report(args, run, pump.outcome, error, options)
    return code


def _open_output(path: str | None) -> AtomicFile | None:
    if path is None:
        return None
    try:
        return AtomicFile(path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _commit(sink: AtomicFile, pump: Pump) -> None:
    close = getattr(pump.writer, "close", None)
    try:
        if close is not None:  # a writer with a footer (parquet)
            close()
        sink.commit()
    except OSError as exc:
        pump.failed(exc)
    else:
        pump.outcome.output = sink.path


def _write_failed(args: argparse.Namespace, pump: Pump, *, kept: bool) -> int:
    """The one line for an output that could not be written; the exit status (1).

    With ``-o FILE`` the temporary file is gone, so nothing was written; on stdout or a
    FILE written in place (``kept``), whatever reached it before the failure stays there.
    """
    exc = pump.write_error
    assert exc is not None
    name = args.output or "standard output"
    _tell(f"cannot write {name}: {exc.strerror or exc}")
    if not kept:
        pump.outcome.written = 0
    return EXIT_NOTHING


# --------------------------------------------------------------------------- tree


async def _tree(args: argparse.Namespace, target: str) -> int:
    found: list[Run] = []
    options = reader_options(args)
    async with SitemapReader(options) as reader:

        async def walk() -> None:
            found.append(await reader.tree(target))

        signum = await _crawl(args, reader, walk(), lambda: True, None)
        run = found[0] if found else reader.last_run
    error = run.error if run is not None else None
    code, stopped = _exit_status(signum, error, None)
    if run is not None:
        lines = [
            *tree_lines(run.tree, run.stats.stopped, verbose=args.verbose > 0),
            *verdict_lines(run),
        ]
        text = json_text(run.to_dict(), indent=2) if args.json else "\n".join(lines)
        try:
            print(text, flush=True)
        except BrokenPipeError:
            raise  # a closed stdout (| head): main() ends quietly
        except OSError as exc:
            stopped = Stopped("output-failed")
            _tell(f"cannot write standard output: {exc.strerror or exc}")
            code = EXIT_NOTHING
    outcome = Outcome(written=None, stopped=stopped)
    await _report(args, run, outcome, error, options, verdicts=bool(args.json))
    return code


# --------------------------------------------------------------------------- shared


def reader_options(args: argparse.Namespace) -> Options:
    """The :class:`Options` the command's flags ask for.

    ``dump`` saves an incremental state once, when the run ends normally: with ``-o`` the
    records only exist once the file is committed, and on stdout a killed run may lose
    what was still buffered; either way a run that did not finish is repeated, never
    lost.
    """
    more: dict[str, object] = {}
    if getattr(args, "state", None) is not None:
        more["state_commit"] = "run"
    return options_from(args, more)


async def _crawl(
    args: argparse.Namespace,
    reader: SitemapReader,
    work: Coroutine[Any, Any, None],
    flush: Callable[[], bool],
    stdout: IO[str] | None,
) -> int | None:
    """Run ``work`` with a progress ticker; returns the signal that stopped it, if any."""
    show = not (args.quiet or args.no_progress) and progress_wanted(sys.stderr, stdout)
    progress = Progress(sys.stderr) if show else None
    task = asyncio.ensure_future(work)

    def tick() -> None:
        if progress is not None and reader.stats is not None:
            progress.update(reader.stats)
        if not flush():
            task.cancel()  # stdout is gone: stop fetching

    try:
        async with _ticking(tick):
            return await interruptible(task)
    finally:
        if progress is not None:
            progress.close()


async def interruptible(task: asyncio.Future[None]) -> int | None:
    """Await ``task``, cancelling it on SIGINT or SIGTERM; the signal number, or None.

    The handlers go away after the first signal, so a second Ctrl-C during the shutdown
    takes Python's default path (KeyboardInterrupt) at once. A task cancelled for another
    reason (stdout closed) ends quietly too.
    """
    loop = asyncio.get_running_loop()
    caught: list[int] = []
    handled: list[signal.Signals] = []

    def on_signal(signum: signal.Signals) -> None:
        caught.append(signum)
        task.cancel()
        for sig in handled:
            loop.remove_signal_handler(sig)

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # e.g. on Windows
            loop.add_signal_handler(sig, on_signal, sig)
            handled.append(sig)
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # we were cancelled ourselves, not just the task
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
    return caught[0] if caught else None


@contextlib.asynccontextmanager
async def _ticking(tick: Callable[[], None]) -> AsyncIterator[None]:
    """Call ``tick`` every :data:`TICK` seconds while the block runs."""

    async def ticker() -> None:
        while True:
            await asyncio.sleep(TICK)
            tick()

    task = asyncio.create_task(ticker())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def _exit_status(
    signum: int | None, error: str | None, stopped: Stopped | None
) -> tuple[int, Stopped | None]:
    """The exit code and the command's own stop once the crawl ended."""
    if signum is not None:
        return 128 + signum, Stopped("asked", signal=signal.Signals(signum).name)
    if error is not None:
        return EXIT_NOTHING, stopped
    return EXIT_OK, stopped


async def _report(
    args: argparse.Namespace,
    run: Run | None,
    outcome: Outcome,
    error: str | None,
    options: Options,
    *,
    verdicts: bool = True,
) -> None:
    """The summary on stderr; when nothing was discovered, the one-line reason instead
    (then what to try, and the summary with -v). After a closed pipe (``| head``) nothing
    at all: the reader of the output went away on purpose. ``verdicts``: whether the
    verdict lines are said here (not when the output holds them: ``tree``)."""
    if outcome.stopped == OUTPUT_CLOSED:
        return
    if run is not None:
        for line in [*scope_lines(run, options.walk.scope), *guard_lines(run), *state_lines(run)]:
            _tell(line)
    if error is not None:
        _tell(f"nothing discovered: {error}")
        for line in verdict_lines(run) if run is not None and verdicts else ():
            _tell(line)
        hint = await html_hint(run, options) if run is not None else None
        if hint is not None:
            _tell(hint)
        if not args.verbose:
            return
    if args.quiet or run is None:
        return
    lines = summary_lines(
        run.stats, run.tree, outcome, verbose=args.verbose > 0, colour=wants_colour(sys.stderr)
    )
    politeness = politeness_lines(run, obey=bool(getattr(args, "obey_robots", False)))
    lines.extend(map(printable, politeness))
    if error is None and verdicts:
        lines.extend(verdict_lines(run))
    print("\n".join(lines), file=sys.stderr, flush=True)


def politeness_lines(run: Run, *, obey: bool) -> list[str]:
    """Summary lines of the robots audit, the crawl delays honoured, the ways in the run
    took, and the children left unread."""
    stats = run.stats
    lines: list[str] = []
    if stats.urls_disallowed:
        fate = (
            f"dropped ({FLAG('obey_robots')})"
            if obey
            else 'their records say "robots": "disallowed"'
        )
        listed = plural(stats.urls_disallowed, "URL")
        lines.append(f"robots.txt: disallows {listed} the sitemaps list; {fate}")
    for node in run.nodes():
        if node.kind == "robots":
            lines.extend(
                f"robots.txt: {p.message}" for p in node.problems if p.code in SUMMARY_CODES
            )
        if node.kind == "robots" and node.crawl_delay is not None:
            host = (node.final_url or node.url).split("/")[2]
            lines.append(
                f"crawl delay: {node.crawl_delay:g} s between requests to {host} "
                f"(robots.txt asks it; {FLAG('crawl_delay')} to not wait)"
            )
    if stats.sitemaps_not_read:
        read_depth = FLAG("read_depth")
        lines.append(f"not read: {plural(stats.sitemaps_not_read, 'child sitemap')} ({read_depth})")
    lines.extend(
        f"{root.url.split('/')[2]}: {problem.message}"
        for root in run.tree
        for problem in root.problems
        if problem.code in WAY_CODES
    )
    if stats.sitemaps_older:
        lines.append(
            f"not fetched: {plural(stats.sitemaps_older, 'child sitemap')} whose index lastmod "
            f"is older than {FLAG('since')} (their URLs may be newer: "
            f"{FLAG('trust_index_lastmod')} reads them)"
        )
    return lines


def _say(args: argparse.Namespace, message: str) -> None:
    if not args.quiet:
        _tell(message)


def _tell(message: str) -> None:
    """``sitemap-reader: MESSAGE`` on stderr; site text or a name the user typed in it is
    shown through :func:`printable`."""
    print(f"{PROG}: {printable(message)}", file=sys.stderr, flush=True)


def _usage(args: argparse.Namespace, message: str) -> int:
    print(f"{PROG} {args.action}: error: {printable(message)}", file=sys.stderr, flush=True)
    return EXIT_USAGE


def _utf8_stdout() -> IO[str]:
    """stdout, encoding UTF-8 whatever the locale says (JSON Lines are UTF-8)."""
    stream = sys.stdout
    if isinstance(stream, io.TextIOWrapper) and stream.encoding.lower() not in ("utf-8", "utf8"):
        stream.reconfigure(encoding="utf-8")
    return stream
