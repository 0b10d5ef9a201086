"""The ``check`` and ``report`` commands: a target surveyed (:mod:`.survey`), then shown.

``check`` prints the protocol findings file by file, worst first (``FILE`` then ``  line
N: SEVERITY CODE: message (xCOUNT)``), or JSON with ``--json``, and exits by the worst
severity found (:func:`check_exit`).
``report`` writes one self-contained HTML page (:mod:`.htmlreport`) with ``-o FILE``; it
exits 0, or 1 when nothing could be discovered (the page then says why).
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import sys
from typing import Any

from sitemap_reader._safe_text import printable
from sitemap_reader._words import plural, stop_phrase
from sitemap_reader.audit.survey import Survey, survey
from sitemap_reader.cli.args import PROG
from sitemap_reader.cli.commands import (
    EXIT_NOTHING,
    EXIT_OK,
    EXIT_USAGE,
    checked_targets,
    reader_options,
)
from sitemap_reader.cli.hints import guard_lines, html_hint, scope_lines
from sitemap_reader.cli.output import AtomicFile, check_not_own
from sitemap_reader.cli.summary import FLAG, verdict_lines
from sitemap_reader.delivery.writers import json_text
from sitemap_reader.errors import UsageError
from sitemap_reader.parse.checker import RULES, SEVERITIES, Finding

#: ``check``'s exit codes: nothing at or above ``--fail-on`` (clean, or notices only by
#: default); warnings (or notices with ``--fail-on notice``); errors; and "could not be
#: checked" (nothing discovered: the target unreachable, no sitemap anywhere).
EXIT_CHECK_CLEAN = 0
EXIT_CHECK_WARNINGS = 1
EXIT_CHECK_ERRORS = 2
EXIT_CHECK_UNCHECKED = 3


def run_check(args: argparse.Namespace) -> int:
    """``sitemap-reader check TARGET... [--json] [--fail-on LEVEL] [--ignore CODE]...``."""
    unknown = sorted(set(args.ignore) - RULES.keys())
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(RULES), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else " (see the README)"
        return _usage(args, f"--ignore: no rule {printable(unknown[0])!r}{hint}")
    found = _survey(args)
    if isinstance(found, int):
        return found
    found.ignore(args.ignore)
    text = json_text(check_json(found), indent=2) if args.json else "\n".join(check_lines(found))
    try:
        print(text, flush=True)
    except BrokenPipeError:
        raise  # a closed stdout (| head): main() ends quietly
    except OSError as exc:
        _tell(f"cannot write standard output: {exc.strerror or exc}")
        return EXIT_NOTHING
    _hints(args, found)
    return check_exit(found, args.fail_on)


def _hints(args: argparse.Namespace, found: Survey) -> None:
    """On stderr, what to try next: all URLs out of scope (even with -q), ``--html``."""
    options = reader_options(args)
    run = found.run
    for line in [*scope_lines(run, options.walk.scope), *guard_lines(run), *verdict_lines(run)]:
        _tell(line)
    if found.run.error is not None:
        hint = asyncio.run(html_hint(found.run, options))
        if hint is not None:
            _tell(hint)


def _tell(message: str) -> None:
    print(f"{PROG}: {printable(message)}", file=sys.stderr, flush=True)


def check_exit(found: Survey, fail_on: str = "warning") -> int:
    """The exit code of ``check``: by the worst severity at or above ``fail_on``."""
    if found.run.error is not None:
        return EXIT_CHECK_UNCHECKED
    counts = severity_counts(found.all_findings())
    if counts["error"]:
        return EXIT_CHECK_ERRORS
    worst = next((level for level in SEVERITIES if counts[level]), None)
    if worst is None or SEVERITIES.index(worst) > SEVERITIES.index(fail_on):
        return EXIT_CHECK_CLEAN
    return EXIT_CHECK_WARNINGS


def severity_counts(findings: list[Finding]) -> dict[str, int]:
    """Occurrences by severity, every severity present (worst first)."""
    counts = dict.fromkeys(SEVERITIES, 0)
    for finding in findings:
        counts[finding.severity] += finding.count
    return counts


def run_report(args: argparse.Namespace) -> int:
    """``sitemap-reader report TARGET -o FILE``: exit 0, 1 when nothing could be
    discovered (the page says why) or FILE could not be written (it is left as it was)."""
    from sitemap_reader.audit.report import render  # only this command needs it

    try:
        check_not_own(args.output, args.targets)  # before anything is opened
        sink = AtomicFile(args.output)
    except UsageError as exc:
        return _usage(args, str(exc))
    except OSError as exc:
        return _usage(args, f"cannot write {printable(args.output)}: {exc.strerror or exc}")
    try:
        found = _survey(args)
        if isinstance(found, int):
            return found
        sink.stream.write(render(found, printable(args.targets[0])))
        sink.commit()
    except OSError as exc:
        kept = "" if sink.in_place else f" ({printable(args.output)} left as it was)"
        _tell(f"cannot write {printable(args.output)}: {exc.strerror or exc}{kept}")
        return EXIT_NOTHING
    finally:
        sink.abort()
    if not args.quiet:
        total = sum(f.count for f in found.all_findings())
        stopped = found.run.stats.stopped
        said = stop_phrase(stopped, FLAG) if stopped else ""
        cut = f" ({said}: not every file was read to the end)" if stopped else ""
        _tell(
            f"report of {plural(len(found.files), 'file')}, {plural(found.urls, 'URL')}, "
            f"{plural(total, 'finding')} written to {sink.path}{cut}"
        )
    _hints(args, found)
    return EXIT_NOTHING if found.run.error is not None else EXIT_OK


def _survey(args: argparse.Namespace) -> Survey | int:
    try:
        checked_targets(args.targets)
        examples = getattr(args, "examples", 1)
        return asyncio.run(survey(args.targets, reader_options(args), examples=examples))
    except UsageError as exc:
        return _usage(args, str(exc))
    except KeyboardInterrupt:
        return 130


def _usage(args: argparse.Namespace, message: str) -> int:
    print(f"{PROG} {args.action}: error: {message}", file=sys.stderr, flush=True)
    return EXIT_USAGE


#: Node kinds without a URL, and the rules that need one (not applied to them).
LOCAL = ("file", "stdin")
LOCAL_RULES = ("out-of-location", "other-host")


def _weight(finding: Finding) -> tuple[int, int]:
    return SEVERITIES.index(finding.severity), finding.line or 0


def check_lines(found: Survey) -> list[str]:
    """The text report: findings grouped by file, worst first, then a one-line verdict."""
    lines: list[str] = []
    by_file: dict[str, list[Finding]] = {}
    findings = found.all_findings()
    for finding in findings:
        by_file.setdefault(finding.file, []).append(finding)
    for file, items in by_file.items():
        lines.append(printable(file))
        for f in sorted(items, key=_weight):
            where = f"line {f.line}: " if f.line is not None else ""
            times = f" (x{f.count:,})" if f.count > 1 else ""
            lines.append(f"  {where}{f.severity} {f.code}: {printable(f.message)}{times}")
            for line, message in f.examples[1:]:  # --examples N
                where = f"line {line}: " if line is not None else ""
                lines.append(f"    {where}{printable(message)}")
    checked = len(found.files)
    if any(r.node.kind in LOCAL for r in found.files):
        lines.append(f"local files have no URL: {', '.join(LOCAL_RULES)} were not applied")
    if by_file:
        counts = severity_counts(findings)
        weights = ", ".join(plural(n, level) for level, n in counts.items() if n)
        rules = len({f.code for f in findings})
        files = len({f.file for f in findings} & {r.url for r in found.files})
        where = f"in {files} of {plural(checked, 'file')}" if checked else "no file checked"
        lines.append(f"{weights} ({plural(rules, 'rule')} broken) {where}")
    else:
        lines.append(
            f"clean: {plural(checked, 'file')}, {plural(found.urls, 'URL')} follow the protocol"
        )
    return lines


def check_json(found: Survey) -> dict[str, Any]:
    """The JSON report: every file with its findings, and the totals."""
    findings = found.all_findings()
    return {
        "targets": list(found.run.targets),
        "verdicts": [v.to_dict() for v in found.run.verdicts.values()],
        "clean": not findings,
        "severities": severity_counts(findings),
        "urls": found.urls,
        "files": [
            {
                "url": r.url,
                "kind": r.node.kind,
                "status": r.node.status,
                "format": r.node.format,
                "urls": r.node.urls,
                "bytes": r.node.bytes,
                "uncompressed": r.uncompressed,
                "seconds": None if r.seconds is None else round(r.seconds, 3),
                "last_modified": r.last_modified,
                "rules_not_applied": list(LOCAL_RULES) if r.node.kind in LOCAL else [],
                "findings": [f.to_dict() for f in r.findings],
            }
            for r in found.files
        ],
        "findings": [f.to_dict() for f in found.findings],
        "rules": {f.code: RULES[f.code].meaning for f in findings},
    }
