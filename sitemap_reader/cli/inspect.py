"""The ``check`` and ``report`` commands: a target surveyed (:mod:`.survey`), then shown.

``check`` prints the protocol findings file by file (``FILE`` then ``  line N: code:
message (xCOUNT)``), or JSON with ``--json``, and exits 0 when there is none, 1 otherwise.
``report`` writes one self-contained HTML page (:mod:`.htmlreport`) with ``-o FILE``; it
exits 0, or 1 when nothing could be discovered (the page then says why).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from sitemap_reader.cli.args import PROG
from sitemap_reader.cli.commands import EXIT_NOTHING, EXIT_OK, EXIT_USAGE, reader_options
from sitemap_reader.cli.output import AtomicFile
from sitemap_reader.cli.survey import Survey, shown, survey
from sitemap_reader.cli.usage import check_targets
from sitemap_reader.errors import UsageError
from sitemap_reader.parse.checker import RULES, Finding
from sitemap_reader.safe_text import printable


def run_check(args: argparse.Namespace) -> int:
    """``sitemap-reader check TARGET [--json]``."""
    found = _survey(args)
    if isinstance(found, int):
        return found
    findings = found.all_findings()
    if args.json:
        print(json.dumps(check_json(found), indent=2, ensure_ascii=False), flush=True)
    else:
        print("\n".join(check_lines(found)), flush=True)
    return EXIT_NOTHING if findings else EXIT_OK


def run_report(args: argparse.Namespace) -> int:
    """``sitemap-reader report TARGET -o FILE``."""
    from sitemap_reader.cli.htmlreport import render  # only this command needs it

    try:
        sink = AtomicFile(args.output)
    except OSError as exc:
        return _usage(args, f"cannot write {shown(args.output)}: {exc.strerror or exc}")
    try:
        found = _survey(args)
        if isinstance(found, int):
            return found
        sink.stream.write(render(found, shown(args.targets[0])))
        sink.commit()
    finally:
        sink.abort()
    if not args.quiet:
        total = sum(f.count for f in found.all_findings())
        print(
            f"{PROG}: report of {len(found.files)} files, {found.urls:,} URLs, "
            f"{total:,} findings written to {shown(str(sink.path))}",
            file=sys.stderr,
        )
    return EXIT_NOTHING if found.run.error is not None else EXIT_OK


def _survey(args: argparse.Namespace) -> Survey | int:
    try:
        check_targets(args.targets)
        return asyncio.run(survey(args.targets[0], reader_options(args)))
    except UsageError as exc:
        return _usage(args, str(exc))
    except KeyboardInterrupt:
        return 130


def _usage(args: argparse.Namespace, message: str) -> int:
    print(f"{PROG} {args.action}: error: {message}", file=sys.stderr, flush=True)
    return EXIT_USAGE


def check_lines(found: Survey) -> list[str]:
    """The text report: findings grouped by file, then a one-line verdict."""
    lines: list[str] = []
    by_file: dict[str, list[Finding]] = {}
    for finding in found.all_findings():
        by_file.setdefault(finding.file, []).append(finding)
    for file, items in by_file.items():
        lines.append(printable(file))
        for f in items:
            where = f"line {f.line}: " if f.line is not None else ""
            times = f" (x{f.count:,})" if f.count > 1 else ""
            lines.append(f"  {where}{f.code}: {printable(f.message)}{times}")
    checked = len(found.files)
    if by_file:
        total = sum(f.count for items in by_file.values() for f in items)
        rules = sum(len(v) for v in by_file.values())
        lines.append(
            f"{_plural(total, 'finding')} ({_plural(rules, 'rule')} broken) "
            f"in {len(by_file)} of {_plural(checked, 'file')}"
        )
    else:
        lines.append(
            f"clean: {_plural(checked, 'file')}, {_plural(found.urls, 'URL')} follow the protocol"
        )
    return lines


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def check_json(found: Survey) -> dict[str, Any]:
    """The JSON report: every file with its findings, and the totals."""
    findings = found.all_findings()
    return {
        "targets": list(found.run.targets),
        "clean": not findings,
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
                "findings": [f.to_dict() for f in r.findings],
            }
            for r in found.files
        ],
        "findings": [f.to_dict() for f in found.findings],
        "rules": {f.code: RULES.get(f.code, "") for f in findings},
    }
