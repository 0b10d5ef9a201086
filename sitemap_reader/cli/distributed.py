"""The commands of distributed discovery: ``enqueue``, ``worker`` and ``status``.

They need the ``distributed`` extra (the ``redis`` package); without it each command
says which extra to install and exits 2, while the rest of the command line works. The
arguments are defined here too, so the core parser (:mod:`.args`) only calls
:func:`add_commands`. See :mod:`sitemap_reader.distributed` for the queue's guarantees.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from types import ModuleType
from typing import Any, Final

from sitemap_reader._safe_text import printable, redact_url
from sitemap_reader.cli.args import (
    FORMATS,
    PROG,
    add_command,
    add_format_flag,
    positive_int,
)
from sitemap_reader.cli.commands import EXIT_NOTHING, EXIT_OK, EXIT_USAGE, interruptible
from sitemap_reader.cli.flags import add_option_flags, group_from, options_from
from sitemap_reader.cli.output import make_writer
from sitemap_reader.discovery.targets import canonical_spelling
from sitemap_reader.distributed.config import check_redis_url
from sitemap_reader.errors import SitemapReaderError, UsageError, missing_extra
from sitemap_reader.options.worker import WorkerLimits

#: What ``worker --state`` sets the ``state`` option to: the state lives in Redis.
REDIS_STATE: Final = "redis"


_ENQUEUE_EXAMPLES = """\
examples:
  sitemap-reader enqueue --redis redis://queue:6379 example.com example.org
  sitemap-reader enqueue --redis redis://queue:6379 -i domains.txt
  zcat domains.txt.gz | sitemap-reader enqueue --redis redis://queue:6379 -i -

A target already enqueued once is not queued again (--again queues the targets that
are done or failed once more, for a new incremental round).
"""

_WORKER_EXAMPLES = """\
examples:
  sitemap-reader worker --redis redis://queue:6379 -o out/
  sitemap-reader worker --redis redis://queue:6379 -o out/ --drain --state

Each target's records go to one file in DIR (named after the target), written to a
temporary file and renamed into place; the target is acknowledged only then. Start
any number of workers, on any number of machines, against the same Redis.
"""

_STATUS_EXAMPLES = """\
examples:
  sitemap-reader status --redis redis://queue:6379
  sitemap-reader status --redis redis://queue:6379 --json | jq .queued
"""


# --------------------------------------------------------------------------- arguments


def add_commands(commands: Any) -> None:
    """Add ``enqueue``, ``worker`` and ``status`` to the subcommands of the parser."""
    sub = add_command(commands, "enqueue", "add targets to a Redis queue", _ENQUEUE_EXAMPLES)
    _add_redis_options(sub)
    sub.add_argument("targets", nargs="*", metavar="TARGET", help="targets (as for dump)")
    sub.add_argument(
        "-i",
        "--input",
        action="append",
        default=[],
        metavar="FILE",
        help="read targets from FILE, one a line (- for stdin; # starts a comment)",
    )
    sub.add_argument(
        "--again", action="store_true", help="queue targets that are done or failed once more"
    )
    sub.set_defaults(run=run_enqueue, action="enqueue")

    sub = add_command(
        commands, "worker", "discover queued targets, one file each", _WORKER_EXAMPLES
    )
    _add_redis_options(sub)
    _add_worker_options(sub)
    _add_record_options(sub)
    add_option_flags(sub, skip=("state",))  # the worker keeps its state in Redis; what it
    # delivers (ranked, top, include, max_urls...) is per target
    sub.set_defaults(run=run_worker, action="worker")

    sub = add_command(commands, "status", "show what a Redis queue holds", _STATUS_EXAMPLES)
    _add_redis_options(sub)
    sub.add_argument("--json", action="store_true", help="print the status as JSON")
    sub.set_defaults(run=run_status, action="status")


def _add_redis_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("queue")
    group.add_argument(
        "--redis",
        required=True,
        type=_redis_url,
        metavar="URL",
        help="the Redis server (redis://[:password@]host:port/db, rediss://, unix://)",
    )
    group.add_argument(
        "--namespace",
        default="sitemap-reader",
        metavar="NAME",
        help="prefix of the queue's keys (sitemap-reader): several queues on one Redis",
    )


def _redis_url(text: str) -> str:
    """``--redis``: a malformed URL is a usage error, its password hidden."""
    try:
        return check_redis_url(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_worker_options(parser: argparse.ArgumentParser) -> None:
    add_option_flags(parser, {"worker": WorkerLimits})
    group = parser.add_argument_group("worker")
    group.add_argument(
        "-o", "--output-dir", required=True, metavar="DIR", help="one output file per target here"
    )
    group.add_argument(
        "--drain",
        action="store_true",
        help="exit 0 once nothing is queued and nothing is in flight on any worker",
    )
    group.add_argument(
        "--parallel", type=positive_int, default=4, metavar="N", help="targets at once (4)"
    )
    group.add_argument(
        "--records-stream",
        action="store_true",
        help="also append every record to the Redis stream {NAMESPACE}:records "
        "(once per URL and target; an 'end' entry marks each target complete)",
    )


def _add_record_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("output (per target, as for dump)")
    add_format_flag(group, FORMATS[:-1])
    group = parser.add_argument_group("incremental runs (state kept in Redis, per target)")
    group.add_argument(
        "--state",
        action="store_const",
        const=REDIS_STATE,
        default=argparse.SUPPRESS,
        help="remember each target's run in Redis (--changed-only, --removed as for dump)",
    )


# --------------------------------------------------------------------------- handlers


def run_enqueue(args: argparse.Namespace) -> int:
    """``sitemap-reader enqueue --redis URL TARGET... [-i FILE]``."""
    return _with_extra(args, _enqueue)


def run_worker(args: argparse.Namespace) -> int:
    """``sitemap-reader worker --redis URL -o DIR [--drain]``."""
    return _with_extra(args, _worker)


def run_status(args: argparse.Namespace) -> int:
    """``sitemap-reader status --redis URL [--json]``."""
    return _with_extra(args, _status)


def _with_extra(
    args: argparse.Namespace,
    command: Callable[[argparse.Namespace, ModuleType], Coroutine[Any, Any, int]],
) -> int:
    """Run a command that needs redis: usage errors exit 2, an unreachable Redis 1."""
    try:
        import redis.exceptions

        from sitemap_reader import distributed
    except ImportError:
        return _error(
            args,
            str(missing_extra("this command needs the 'distributed' extra", "distributed")),
            EXIT_USAGE,
        )
    try:
        return asyncio.run(command(args, distributed))
    except UsageError as exc:
        return _error(args, str(exc), EXIT_USAGE)
    except SitemapReaderError as exc:  # the queue vanished, Redis away past --redis-wait
        return _error(args, str(exc), EXIT_NOTHING)
    except redis.exceptions.ConnectionError as exc:
        return _error(args, f"cannot reach Redis at {_shown(args)}: {exc}", EXIT_NOTHING)
    except redis.exceptions.RedisError as exc:
        return _error(args, f"Redis at {_shown(args)}: {exc}", EXIT_NOTHING)


def _shown(args: argparse.Namespace) -> str:
    """The Redis URL as it may be printed: no password, no control characters."""
    return printable(redact_url(args.redis))


async def _enqueue(args: argparse.Namespace, dist: ModuleType) -> int:
    targets = [*args.targets, *(t for name in args.input for t in _read_lines(name))]
    given = len(targets)
    if not targets:
        raise UsageError("no target given (TARGET... or -i FILE)")
    if "-" in targets:
        raise UsageError("'-' (standard input) cannot be a queued target; use -i - for a list")
    # One spelling per site (the reader's rule), and a bad target is a usage error
    # before anything is queued.
    targets = list(dict.fromkeys(canonical_spelling(target) for target in targets))
    queue = dist.TargetQueue.from_url(args.redis, args.namespace)
    try:
        new, again = await queue.enqueue(targets, again=args.again)
    finally:
        await queue.close()
    known = given - new - again
    line = f"{new} new target{'s' if new != 1 else ''} queued"
    if args.again:
        line += f", {again} queued again"
    print(f"{line}, {known} already known", flush=True)
    return EXIT_OK


def _read_lines(name: str) -> Iterator[str]:
    """The targets of a list file (UTF-8, a BOM allowed): a line that is not UTF-8 is a
    usage error naming it, never a guess at what the bytes meant."""
    try:
        raw = sys.stdin.buffer if name == "-" else open(name, "rb")  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"cannot read {printable(name)}: {exc.strerror or exc}") from exc
    with raw:
        for number, data in enumerate(raw, 1):
            try:
                line = data.decode("utf-8-sig" if number == 1 else "utf-8").strip()
            except UnicodeDecodeError:
                raise UsageError(f"{printable(name)} line {number} is not UTF-8") from None
            if line and not line.startswith("#"):
                yield line


async def _worker(args: argparse.Namespace, dist: ModuleType) -> int:
    options = options_from(args)
    limits = group_from(args, WorkerLimits)
    output = dist.Output(
        args.output_dir, fmt=args.format, writer=lambda stream: make_writer(args.format, stream)
    )
    worker = dist.Worker(
        args.redis,
        output,
        options,
        namespace=args.namespace,
        limits=limits,
        parallel=args.parallel,
        records_stream=args.records_stream,
    )
    _say(
        args,
        f"worker {worker.consumer} on {_shown(args)} ({printable(args.namespace)}), "
        f"output in {printable(args.output_dir)}",
    )
    task = asyncio.ensure_future(worker.run(drain=args.drain))
    signum = await interruptible(task)
    report = worker.report
    _say(
        args,
        f"worker {worker.consumer}: {report.done} targets done, {report.urls:,} URLs, "
        f"{report.failed_tries} failed tries, {report.dead} dead-lettered, "
        f"{report.duplicates} duplicates dropped, {report.lost} taken over",
    )
    for line in report.errors[:20]:
        _say(args, f"  dead-lettered: {line}")
    if signum is not None:
        return 128 + signum
    task.result()  # a Redis error ends the worker: raise it here
    return EXIT_OK


async def _status(args: argparse.Namespace, dist: ModuleType) -> int:
    queue = dist.TargetQueue.from_url(args.redis, args.namespace)
    try:
        status = await queue.status()
    finally:
        await queue.close()
    data = status.to_dict()
    if args.json:  # JSON escapes control characters itself
        print(json.dumps(data, indent=2), flush=True)
        return EXIT_OK
    for line in status_lines(data):
        print(line)
    sys.stdout.flush()
    return EXIT_OK


def status_lines(data: dict[str, Any]) -> list[str]:
    """The human form of ``status`` (queue-supplied text escaped)."""
    lines = [
        f"queued     {data['queued']:>10,}",
        f"in flight  {data['in_flight']:>10,}",
    ]
    workers = data["workers"]
    live = {name for name, info in workers.items() if _alive(info)}
    for name, count in sorted(data["in_flight_by_worker"].items()):
        info = workers.get(name, {})
        if name not in live:
            note = "  (no heartbeat: stopped or killed; taken over soon)"
        elif _blocked(info):
            note = f"  (event loop blocked for {time.time() - info['loop']:.0f} s)"
        else:
            note = ""
        lines.append(f"  {printable(name):<40} {count:>6,}{note}")
    lines += [
        f"done       {data['done']:>10,}",
        f"failed     {data['failed']:>10,}",
        f"retrying   {data['retrying']:>10,}",
        f"known      {data['known']:>10,}",
        f"workers    {len(live):>10,}"
        + (f"  ({len(workers) - len(live)} gone)" if len(workers) > len(live) else ""),
    ]
    for entry in data["dead_letters"]:
        target, error = printable(entry.get("t", "")), printable(entry.get("error", ""))
        lines.append(f"  dead: {target}: {error}")
    return lines


def _alive(info: dict[str, Any]) -> bool:
    """A worker is alive while its last heartbeat is younger than its lease."""
    seen, lease = info.get("seen"), info.get("lease")
    if not isinstance(seen, int | float) or not isinstance(lease, int | float):
        return False
    return time.time() - seen <= lease


def _blocked(info: dict[str, Any]) -> bool:
    """A live worker whose event loop has not run for a lease: it holds its targets (its
    heartbeat thread beats) but makes no progress on them."""
    loop, lease = info.get("loop"), info.get("lease")
    if not isinstance(loop, int | float) or not isinstance(lease, int | float):
        return False
    return time.time() - loop > lease


def _say(args: argparse.Namespace, message: str) -> None:
    if not args.quiet:
        print(f"{PROG}: {message}", file=sys.stderr, flush=True)


def _error(args: argparse.Namespace, message: str, code: int) -> int:
    print(f"{PROG} {args.action}: error: {message}", file=sys.stderr, flush=True)
    return code
