"""``sitemap-reader report``: one self-contained HTML page of a survey.

No network and no script: the styles are inline, the charts are inline SVG bars drawn
here. Sections, each a ``<section id=...>``: summary, tree (every file with status,
format, URL count, bytes and findings), lastmod (URLs by month), changefreq, priority,
duplicates, slowest, largest, findings. Every value from the site is HTML-escaped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from html import escape
from typing import Final

from sitemap_reader.cli.survey import FileReport, Survey, utc_now
from sitemap_reader.cli.usage import plain_reason
from sitemap_reader.frame import CHANGEFREQ_ORDER

#: Rows of the slowest / largest tables.
TOP_FILES: Final = 10
#: Months shown in the lastmod chart (the most recent ones).
MONTHS: Final = 36

_STYLE: Final = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px}
table{border-collapse:collapse;width:100%} td,th{padding:3px 8px;border-bottom:1px solid #e3e6ec;
text-align:left;vertical-align:top} th{background:#f3f5f8} td.n{text-align:right}
.bad{color:#b3261e;font-weight:600} .ok{color:#1b7a3a} .muted{color:#6b7280}
.cards{display:flex;gap:12px;flex-wrap:wrap} .card{border:1px solid #e3e6ec;border-radius:6px;
padding:8px 14px;min-width:120px} .card b{display:block;font-size:20px}
svg text{font:11px system-ui,sans-serif;fill:#1d2330}
"""


def render(found: Survey, target: str) -> str:
    """The whole HTML document."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>sitemap-reader report: {escape(target)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Sitemap report: {escape(target)}</h1>",
        f'<p class="muted">made {utc_now():%Y-%m-%d %H:%M} UTC by sitemap-reader</p>',
        _summary(found),
        _tree(found.files),
        _section("lastmod", "URLs by lastmod month", _months(found.lastmod_months)),
        _section("changefreq", "changefreq", _bars(_ordered_freqs(found.changefreqs))),
        _section("priority", "priority", _bars(sorted(found.priorities.items()))),
        _duplicates(found),
        _top("slowest", "Slowest sitemaps", found.files, "seconds"),
        _top("largest", "Largest sitemaps", found.files, "bytes"),
        _findings(found),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _section(ident: str, title: str, body: str) -> str:
    return f'<section id="{ident}"><h2>{escape(title)}</h2>{body}</section>'


def _summary(found: Survey) -> str:
    stats = found.run.stats
    findings = found.all_findings()
    cards = [
        ("sitemaps ok", stats.sitemaps_ok),
        ("sitemaps failed", stats.sitemaps_failed),
        ("URLs listed", found.urls),
        ("duplicates", found.duplicates),
        ("findings", sum(f.count for f in findings)),
        ("MB read", f"{stats.bytes / 1e6:.2f}"),
    ]
    html = "".join(
        f'<div class="card"><b>{value if isinstance(value, str) else f"{value:,}"}</b>'
        f"{escape(label)}</div>"
        for label, value in cards
    )
    error = found.run.error
    error = f'<p class="bad">{escape(plain_reason(error))}</p>' if error else ""
    return _section("summary", "Summary", f'<div class="cards">{html}</div>{error}')


def _tree(files: list[FileReport]) -> str:
    rows = [
        "<tr><th>file</th><th>kind</th><th>status</th><th>format</th><th>URLs</th>"
        "<th>bytes</th><th>findings</th></tr>"
    ]
    for report in files:
        node = report.node
        indent = node.depth * 18
        state = "ok" if node.ok else "bad"
        count = sum(f.count for f in report.findings)
        codes = ", ".join(sorted({f.code for f in report.findings}))
        rows.append(
            f'<tr><td style="padding-left:{indent + 8}px">{escape(report.url)}</td>'
            f"<td>{escape(node.kind)}</td>"
            f'<td class="{state}">{escape(str(node.status or "-"))}</td>'
            f"<td>{escape(node.format or '-')}</td>"
            f'<td class="n">{node.urls:,}</td><td class="n">{node.bytes:,}</td>'
            f'<td class="{"bad" if count else "ok"}">{count:,} {escape(codes)}</td></tr>'
        )
    return _section("tree", "Sitemap tree", f"<table>{''.join(rows)}</table>")


def _months(months: Counter[str]) -> str:
    recent = sorted(months.items())[-MONTHS:]
    return _bars(recent) if recent else '<p class="muted">no lastmod values</p>'


def _ordered_freqs(freqs: Counter[str]) -> list[tuple[str, int]]:
    order = [*CHANGEFREQ_ORDER, "(none)"]
    return [(name, freqs[name]) for name in order if freqs.get(name)]


def _bars(items: Iterable[tuple[str, int]]) -> str:
    """A horizontal bar chart as inline SVG: one labelled bar per item."""
    items = list(items)
    if not items:
        return '<p class="muted">no data</p>'
    top = max(count for _, count in items) or 1
    height, label_w, bar_w = 18, 110, 520
    rows = []
    for i, (label, count) in enumerate(items):
        y = i * height
        width = max(1, round(bar_w * count / top))
        rows.append(
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{escape(label)}</text>'
            f'<rect x="{label_w}" y="{y + 3}" width="{width}" height="{height - 5}" '
            f'fill="#3b6fd8"></rect>'
            f'<text x="{label_w + width + 6}" y="{y + 13}">{count:,}</text>'
        )
    total_h = len(items) * height + 4
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{label_w + bar_w + 80}" '
        f'height="{total_h}" role="img">{"".join(rows)}</svg>'
    )


def _duplicates(found: Survey) -> str:
    per_file = [
        (r.url, sum(f.count for f in r.findings if f.code == "duplicate-url")) for r in found.files
    ]
    rows = "".join(
        f'<tr><td>{escape(url)}</td><td class="n">{count:,}</td></tr>'
        for url, count in per_file
        if count
    )
    body = f"<p>{found.duplicates:,} URLs listed again after their first listing.</p>" + (
        f"<table><tr><th>file</th><th>duplicates</th></tr>{rows}</table>" if rows else ""
    )
    return _section("duplicates", "Duplicates", body)


def _top(ident: str, title: str, files: list[FileReport], key: str) -> str:
    sitemaps = [r for r in files if r.node.kind != "robots" and r.node.fetched]
    if key == "seconds":
        ranked = sorted(sitemaps, key=lambda r: r.seconds or 0.0, reverse=True)
    else:
        ranked = sorted(sitemaps, key=lambda r: r.node.bytes, reverse=True)
    rows = "".join(
        f'<tr><td>{escape(r.url)}</td><td class="n">{(r.seconds or 0.0):.3f}</td>'
        f'<td class="n">{r.node.bytes:,}</td><td class="n">{(r.uncompressed or 0):,}</td>'
        f"<td>{escape(r.last_modified or '-')}</td></tr>"
        for r in ranked[:TOP_FILES]
    )
    head = (
        "<tr><th>sitemap</th><th>seconds</th><th>bytes</th><th>uncompressed</th>"
        "<th>Last-Modified</th></tr>"
    )
    return _section(ident, title, f"<table>{head}{rows}</table>")


def _findings(found: Survey) -> str:
    items = found.all_findings()
    if not items:
        return _section("findings", "Findings", '<p class="ok">none: the protocol is followed</p>')
    rows = "".join(
        f'<tr><td>{escape(f.file)}</td><td class="n">{f.line or ""}</td>'
        f'<td class="bad">{escape(f.code)}</td><td class="n">{f.count:,}</td>'
        f"<td>{escape(f.message)}</td></tr>"
        for f in items
    )
    head = "<tr><th>file</th><th>line</th><th>code</th><th>count</th><th>first example</th></tr>"
    return _section("findings", "Findings", f"<table>{head}{rows}</table>")
