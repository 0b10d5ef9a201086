"""options/worker.py: the Redis workers' knobs, declared once; the worker's flags derived."""

from __future__ import annotations

import argparse

import pytest

from sitemap_reader.cli.args import build_parser
from sitemap_reader.cli.distributed import add_commands
from sitemap_reader.cli.flags import group_from
from sitemap_reader.errors import UsageError
from sitemap_reader.options.worker import WorkerLimits


def _worker_args(*flags: str) -> argparse.Namespace:
    parser = build_parser(lambda a: 0, lambda a: 0, lambda a: 0, more=(add_commands,))
    return parser.parse_args(["worker", "--redis", "redis://127.0.0.1:1", "-o", "out", *flags])


def test_the_defaults_and_what_they_follow() -> None:
    """Given nothing: a 30 s lease, 10 s before a retry and a 1 s poll; a short lease
    shortens both (a retry waits no longer than a lease, a poll a third of it)."""
    limits = WorkerLimits()
    assert (limits.lease, limits.retry_delay, limits.poll, limits.heartbeat) == (30, 10, 1, 10)
    short = WorkerLimits(lease=1.5)
    assert (short.retry_delay, short.poll) == (1.5, 0.5)


def test_the_flags_are_derived_from_the_declarations() -> None:
    """Each CLI knob is a flag of worker, typed by its converter; the Python-only ones
    are not flags."""
    limits = group_from(_worker_args("--lease", "12", "--max-deliveries", "5"), WorkerLimits)
    assert (limits.lease, limits.max_deliveries, limits.retry_delay) == (12, 5, 10)
    with pytest.raises(SystemExit):
        _worker_args("--poll", "2")


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (("--lease", "-1"), "--lease: expected seconds, a number > 0, got '-1'"),
        (("--redis-wait", "-5"), "--redis-wait: expected seconds, a number >= 0"),
        (("--max-deliveries", "0"), "--max-deliveries: expected a whole number >= 1"),
    ],
)
def test_a_bad_value_is_a_usage_error_naming_the_flag(
    flags: tuple[str, ...], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refused value exits 2 naming the flag (before: --redis-wait -5 reached the worker,
    --retry-delay above the lease was clamped without a word)."""
    with pytest.raises(SystemExit) as exited:
        _worker_args(*flags)
    assert exited.value.code == 2 and said in capsys.readouterr().err


def test_a_retry_delay_above_the_lease_is_refused_by_its_flag() -> None:
    """A combination only the group can judge is refused naming the flag."""
    with pytest.raises(UsageError, match="--retry-delay: at most the lease"):
        group_from(_worker_args("--lease", "30", "--retry-delay", "40"), WorkerLimits)
