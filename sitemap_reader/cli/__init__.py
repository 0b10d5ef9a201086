"""The ``sitemap-reader`` command line: ``dump``, ``tree``, ``check``, ``report``, ``demo``.

Theory of operation. :func:`main` parses the arguments (``args``: a usage error exits 2
with a message naming the problem), then runs one command (``commands``) in a fresh event
loop. A command owns one :class:`~sitemap_reader.crawl.SitemapReader` and streams its
records through a filter into a writer (``output``).

- stdout carries records only (JSONL, CSV or URLs), or the tree for ``tree``. ``-o FILE``
  writes a temporary file beside FILE and renames it over FILE when the run ends well, so
  FILE is either its previous self or complete, never half-written.
- stderr carries everything for humans (``report``): a live progress line when stderr is
  a terminal, warnings, and the final summary.
- SIGINT and SIGTERM cancel the crawl; the summary is still printed and the lines already
  written stay whole. A closed stdout (``| head``) ends the crawl quietly.
- Exit codes: 0 when discovery ran (some sitemaps may have failed: see the summary), 1 when
  nothing could be discovered, 2 for usage errors (a bare ``sitemap-reader`` prints the
  help), 128+N after signal N (130 for Ctrl-C).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from collections.abc import Sequence

from sitemap_reader.cli.args import build_parser
from sitemap_reader.cli.commands import EXIT_OK, EXIT_USAGE, run_demo, run_dump, run_tree

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``sitemap-reader`` with ``argv`` (default: the process arguments); the exit code.

    >>> main(["demo", "--json"])  # a usage error: the message goes to stderr
    2
    """
    from sitemap_reader.cli.audit import run_check, run_report
    from sitemap_reader.cli.distributed import add_commands  # enqueue, worker, status

    parser = build_parser(run_dump, run_tree, run_demo, run_check, run_report, (add_commands,))
    given = sys.argv[1:] if argv is None else list(argv)
    if not given:  # a bare `sitemap-reader`: the help, as a usage error (exit 2)
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    args = parser.parse_args(given)
    _configure_logging(args.verbose, args.quiet)
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:  # a second Ctrl-C while shutting down: leave at once
        code = 128 + signal.SIGINT
    except BrokenPipeError:  # stdout closed while writing outside the crawl (the tree)
        code = EXIT_OK
    _silence_closed_stdout()
    return code


def _configure_logging(verbose: int, quiet: bool) -> None:
    """Library log messages on stderr: warnings by default, more with -v, errors with -q."""
    level = (
        logging.ERROR if quiet else (logging.WARNING, logging.INFO, logging.DEBUG)[min(verbose, 2)]
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("sitemap-reader: %(levelname)s: %(message)s"))
    logger = logging.getLogger("sitemap_reader")
    logger.addHandler(handler)
    logger.setLevel(level)


def _silence_closed_stdout() -> None:
    """After ``| head`` closed stdout (or it failed: a full disk): point it at devnull so
    the exit flush cannot fail again with a traceback-like message.

    This is the recipe of the Python documentation (signal module, "Note on SIGPIPE").
    """
    try:
        sys.stdout.flush()
    except OSError:
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
    except ValueError:
        pass
