"""The argument layer of the command line: the argparse tree and the option types.

Every bad flag, regex, number or date becomes an argparse error, which prints the usage
and a message naming the problem and exits with status 2. Nothing here does I/O.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final, TypeVar

from sitemap_reader.cli.flags import RARE_OPTIONS, add_option_flags
from sitemap_reader.cli.usage import BriefHelp, HelpFormatter, UsageParser
from sitemap_reader.options import GROUPS
from sitemap_reader.options.limits import CHECK_MAX_EXAMPLES
from sitemap_reader.parse import native
from sitemap_reader.parse.domains import list_version

PROG: Final = "sitemap-reader"
#: What ``sitemap-reader demo`` does with the demo site.
DEMO_ACTIONS: Final = ("dump", "tree", "check", "report", "serve")
Handler = Callable[[argparse.Namespace], int]

_DUMP_EXAMPLES = """\
examples:
  sitemap-reader dump example.com > urls.jsonl
  sitemap-reader dump example.com --format txt | head
  sitemap-reader dump example.com | jq -r 'select(.priority >= 0.8) | .url'
  sitemap-reader dump https://example.com/sitemap.xml.gz --since 2024-01-01
  sitemap-reader dump example.com --include /blog/ --exclude '[?]page='
  sitemap-reader dump example.com --ranked --max-urls 1000 --format csv -o t.csv
  gunzip -c sitemap.xml.gz | sitemap-reader dump -

targets: a domain (https, then http), a site URL, a robots.txt URL, a sitemap URL (any
format, gzipped or not), a local file, or - for standard input. Several targets make one
run: read concurrently, deduplicated together, and ranked together with --ranked.

stdout carries the records only. stderr carries a live progress line (when stderr is a
terminal and the records do not go to that same terminal) and a final summary: sitemaps
ok/failed/skipped, URLs emitted/duplicate/out of scope, MB read, seconds, and one line
per failed sitemap. NO_COLOR turns colour off.

exit status: 0 when discovery ran (failed sitemaps are listed in the summary), 1 when
nothing could be discovered for any target, 2 for usage errors, 130 on Ctrl-C (the
records written so far stay whole; with -o the file is left untouched).
"""

_TREE_EXAMPLES = """\
examples:
  sitemap-reader tree example.com
  sitemap-reader tree example.com --since 2026-01-01
  sitemap-reader tree https://example.com/robots.txt --json |
    jq -r '.tree[].children[].url'
"""

_DEMO_EXAMPLES = """\
examples:
  sitemap-reader demo                    # every URL of the demo site, as JSONL
  sitemap-reader demo --ranked --format txt
  sitemap-reader demo tree
  sitemap-reader demo tree --json
  sitemap-reader demo report -o demo.html

The demo site runs on 127.0.0.1, on a free port, for as long as the command runs.
`demo check` lists its protocol findings (it breaks a few rules on purpose, so
it exits 2: errors). `demo serve [--port N]` keeps it running until Ctrl-C and
prints its URL: every page it lists answers with a small HTML page, so a crawler
(the Scrapy and Crawlee examples) can be pointed at it.
"""


def build_parser(
    dump: Handler,
    tree: Handler,
    demo: Handler,
    check: Handler | None = None,
    report: Handler | None = None,
    more: Sequence[Callable[[Any], None]] = (),
) -> argparse.ArgumentParser:
    """The parser of ``sitemap-reader``; each subcommand stores its handler as ``run``.

    ``more`` adds further commands to the subparsers (the distributed ones: their module
    imports this one, so this one does not import it)."""
    parser = UsageParser(
        prog=PROG,
        description="Discover what a website wants crawled: robots.txt, sitemaps, indexes\n"
        "and feeds, streamed as normalized URL records.",
        epilog=_DUMP_EXAMPLES,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    sub = add_command(commands, "dump", "stream the URL records of the targets", _DUMP_EXAMPLES)
    sub.add_argument("targets", nargs="+", metavar="TARGET", help="what to read (see below)")
    _add_output_options(sub)
    _add_crawl_options(sub, state=True, delivery=True)
    sub.set_defaults(run=dump, action="dump", json=False)

    sub = add_command(commands, "tree", "show the sitemap tree of a target", _TREE_EXAMPLES)
    sub.add_argument("targets", nargs=1, metavar="TARGET", help="what to read (as for dump)")
    sub.add_argument("--json", action="store_true", help="print the tree as JSON")
    _add_crawl_options(sub)
    sub.set_defaults(run=tree, action="tree")

    sub = add_command(commands, "demo", "serve the embedded demo site, or read it", _DEMO_EXAMPLES)
    sub.add_argument(
        "action",
        nargs="?",
        choices=DEMO_ACTIONS,
        default="dump",
        help="default: dump; serve keeps the site running until Ctrl-C",
    )
    sub.add_argument(
        "--json", action="store_true", help="with tree or check: print the result as JSON"
    )
    sub.add_argument(
        "--port", type=port, default=0, metavar="N", help="with serve: the port (0: a free one)"
    )
    _add_output_options(sub)
    _add_check_options(sub)
    _add_crawl_options(sub, state=True, delivery=True)
    # demo check / demo report run check's and report's own handlers on the demo site.
    sub.set_defaults(run=demo, targets=[], inspectors={"check": check, "report": report})
    if check is not None:
        _add_check_command(commands, check)
    if report is not None:
        _add_report_command(commands, report)
    for add in more:
        add(commands)
    return parser


_CHECK_EXAMPLES = """\
examples:
  sitemap-reader check example.com
  sitemap-reader check https://example.com/sitemap.xml --json | jq -r '.clean'
  sitemap-reader check example.com --json |
    jq -r '.files[] | "\\(.url): \\(.findings | length)"'

Checks the sitemaps.org protocol to the letter: the sitemap namespace, at most 50,000 URLs
and 50 MB uncompressed per file, the location rule, URLs of at most 2,048 characters,
absolute and entity-escaped, W3C dates, lastmods not in the future, UTF-8, no nested
indexes, absolute robots.txt Sitemap: lines, and URLs listed once across the sitemaps.
Each finding names its severity (error: engines drop the file or its URLs; warning:
breaks the protocol, engines tolerate it; notice: advice), its file, the line of its first
occurrence (--examples N: of its first N) and how often it occurs.

exit status: 0 when nothing at or above --fail-on was found (notices only, by default),
1 with warnings, 2 with errors or for usage errors, 3 when the target could not be
checked (unreachable, no sitemap found).
"""

_REPORT_EXAMPLES = """\
examples:
  sitemap-reader report example.com -o report.html

One self-contained HTML file (no network, no scripts), readable on a phone: every
URL counted (kept, blocked by robots.txt, out of scope, duplicate), the findings
by severity, worst first; freshness per target and per sitemap (newest and
oldest lastmod, share undated) and lastmod by month; changefreq and priority
(uniform values flagged); hreflang coverage and reciprocity; the sitemap tree
with status, format, URL count and bytes; the slowest and the largest files.
"""


def _add_check_command(commands: Any, handler: Handler) -> None:
    sub = add_command(commands, "check", "validate a target's sitemaps", _CHECK_EXAMPLES)
    sub.add_argument("targets", nargs="+", metavar="TARGET", help="what to read (as for dump)")
    sub.add_argument("--json", action="store_true", help="print the findings as JSON")
    _add_check_options(sub)
    _add_crawl_options(sub)
    sub.set_defaults(run=handler, action="check")


def _add_check_options(sub: Any) -> None:
    """The options of ``check`` (and ``demo check``): what fails the run, what to show."""
    sub.add_argument(
        "--fail-on",
        choices=("error", "warning", "notice"),
        default="warning",
        help="the least severity that makes the exit status non-zero (warning)",
    )
    sub.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="CODE",
        help="leave out the findings of this rule (repeatable)",
    )
    sub.add_argument(
        "--examples",
        type=_examples,
        default=1,
        metavar="N",
        help="show up to N occurrences per rule and file, with their lines (1)",
    )


def _add_report_command(commands: Any, handler: Handler) -> None:
    sub = add_command(commands, "report", "write an HTML report of a target", _REPORT_EXAMPLES)
    sub.add_argument("targets", nargs=1, metavar="TARGET", help="what to read (as for dump)")
    sub.add_argument("-o", "--output", metavar="FILE", required=True, help="the HTML file to write")
    _add_crawl_options(sub)
    sub.set_defaults(run=handler, action="report")


def _examples(text: str) -> int:
    """``--examples N``: from 1 to ``CHECK_MAX_EXAMPLES``."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= CHECK_MAX_EXAMPLES:
        raise argparse.ArgumentTypeError(f"a whole number from 1 to {CHECK_MAX_EXAMPLES:,}")
    return value


class _Version(argparse.Action):
    """``--version``: lines as they are written (argparse's own action refills them as one
    paragraph): the version and the parser's active path, the path's reason, the Public
    Suffix List's package."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: object) -> None:
        path = "native" if native.active() else "pure Python"
        print(
            f"{parser.prog} {package_version()}, {path} parser\n"
            f"parser: {native.describe()}\n"
            f"Public Suffix List: publicsuffixlist {list_version()}"
        )
        parser.exit()


def package_version() -> str:
    """The installed version of sitemap-reader."""
    try:
        return version("sitemap-reader")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


def add_command(commands: Any, name: str, summary: str, examples: str) -> argparse.ArgumentParser:
    """One subcommand parser, with the message options every command shares."""
    sub: argparse.ArgumentParser = commands.add_parser(
        name,
        help=summary,
        description=summary[0].upper() + summary[1:] + ".",
        epilog=examples,
        formatter_class=HelpFormatter,
        add_help=False,
    )
    sub.add_argument("-h", "--help", action=BriefHelp, rare=RARE_OPTIONS)
    sub.add_argument("--help-all", action="help", help="show every flag described and exit")
    talk = sub.add_argument_group("messages (all on stderr)")
    talk.add_argument("--no-progress", action="store_true", help="no live progress line")
    talk.add_argument("-q", "--quiet", action="store_true", help="errors only, no summary")
    talk.add_argument(
        "-v", "--verbose", action="count", default=0, help="problems of every sitemap; -vv: debug"
    )
    return sub


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("output")
    group.add_argument(
        "-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of stdout"
    )
    group.add_argument(
        "--csv-raw",
        action="store_true",
        help="csv: cells as the site wrote them; by default a cell of site text that a "
        "spreadsheet would run as a formula (=, +, -, @, tab, CR first) gets a leading '",
    )
    add_format_flag(group, FORMATS)


#: The formats of dump's output (the worker writes all but parquet).
FORMATS = ("jsonl", "csv", "txt", "parquet")


def add_format_flag(group: Any, formats: Sequence[str]) -> None:
    """``--format``: how records are written (``dump``'s, and the worker's per target)."""
    group.add_argument(
        "--format",
        choices=formats,
        default="jsonl",
        help="jsonl (default): one JSON record a line; csv: a header row, extension fields "
        "as JSON text; txt: URLs only"
        + ("; parquet: a Parquet file (-o FILE; needs pyarrow)" if "parquet" in formats else ""),
    )


#: The incremental options: dump's only (tree, check and report read without a state).
STATE_OPTIONS = ("state", "changed_only", "removed")


def _add_crawl_options(
    parser: argparse.ArgumentParser, *, state: bool = False, delivery: bool = False
) -> None:
    """The option flags (derived from the declarations); the incremental ones with
    ``state``, what is delivered (the order, the filters, the records budget) with
    ``delivery`` (a command that writes records)."""
    groups = {name: group for name, group in GROUPS.items() if delivery or name != "delivery"}
    add_option_flags(parser, groups, skip=() if state else STATE_OPTIONS)


# --------------------------------------------------------------------------- option types

_Number = TypeVar("_Number", int, float)


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    return _at_least(int, text, 1, "a whole number >= 1")


def non_negative_int(text: str) -> int:
    """argparse type: a whole number >= 0."""
    return _at_least(int, text, 0, "a whole number >= 0")


def positive_float(text: str) -> float:
    """argparse type: a number > 0 (seconds)."""
    value = _at_least(float, text, 0.0, "a number > 0")
    if value == 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def _at_least(kind: Callable[[str], _Number], text: str, low: _Number, what: str) -> _Number:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not value >= low:  # written so that NaN fails too
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def port(text: str) -> int:
    """argparse type: a TCP port, 0 (any free one) to 65535."""
    value = _at_least(int, text, 0, "a port from 0 to 65535")
    if value > 65_535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    """argparse type: a number >= 0 (seconds)."""
    value = _at_least(float, text, 0.0, "a number >= 0")
    if value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def regex(text: str) -> re.Pattern[str]:
    """argparse type: a Python regular expression, compiled.

    >>> regex("/blog/").search("https://example.com/blog/x") is not None
    True
    """
    try:
        return re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"bad regular expression {text!r}: {exc}") from None
