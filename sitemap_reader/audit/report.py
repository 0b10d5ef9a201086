"""``sitemap-reader report``: one self-contained HTML page of a survey.

No network and no script: the styles are inline and the charts are rows of CSS bars, so
the page reflows to any width (a phone's 390 px too: every table sits in its own
horizontal scroll box, and any text, a 1,500-letter URL in a list too, breaks where it
would overflow; no width depends on what the site wrote). Every value from the site is
shown through :func:`~sitemap_reader._safe_text.printable` and HTML-escaped.

Every URL the sitemaps listed is counted somewhere: kept (the URL card), listed again
(duplicates), out of scope; the kept ones that robots.txt disallows are counted among
them, as Search Console's "blocked by robots.txt". Each chart's bars add up to the URL
card (``data-total`` on the chart, ``data-count`` on each bar: ``make check-report``
adds them up in the rendered page). Sections, each a ``<section id=...>``: summary,
findings (worst first), blocked (robots.txt, out of scope, with examples), freshness
(per target and per sitemap), lastmod, changefreq, priority, hreflang, duplicates, tree,
slowest, largest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from html import escape as html_escape
from typing import Final

from sitemap_reader._safe_text import printable
from sitemap_reader._words import plural, stop_phrase, verdict_phrase
from sitemap_reader.audit.survey import CLI, FileReport, Freshness, Survey, utc_now
from sitemap_reader.delivery.frame import CHANGEFREQ_ORDER
from sitemap_reader.discovery.model import HTML_KINDS
from sitemap_reader.parse.checker import RULES, SEVERITIES, Finding

#: Rows of the slowest / largest tables.
TOP_FILES: Final = 10
#: Months shown one bar each in the lastmod chart; older lastmods get a bar per year.
MONTHS: Final = 24
#: The share of a file's (or the site's) URLs one changefreq or priority value must
#: cover to be flagged uniform: a value on nearly every URL says nothing about any.
UNIFORM_SHARE: Final = 0.95
#: Fewer URLs than this are not flagged uniform (three pages may well share a value).
UNIFORM_MIN_URLS: Final = 20

_STYLE: Final = """
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;padding:16px;max-width:1100px;
color:#1d2330;background:#fff;overflow-wrap:break-word}
h1{font-size:21px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;min-width:100%} td,th{padding:4px 8px;
border-bottom:1px solid #e3e6ec;text-align:left;vertical-align:top}
th{background:#f3f5f8;white-space:nowrap} td.n{text-align:right;white-space:nowrap}
td.u{overflow-wrap:anywhere;word-break:break-all;min-width:12em;max-width:36em}
.error{color:#b3261e;font-weight:600} .warning{color:#9a5b00;font-weight:600}
.notice{color:#3b5b9a} .ok{color:#1b7a3a} .muted{color:#6b7280}
.cards{display:flex;gap:10px;flex-wrap:wrap} .card{border:1px solid #e3e6ec;
border-radius:6px;padding:8px 12px;flex:1 1 140px} .card b{display:block;font-size:20px}
.bars{display:grid;grid-template-columns:minmax(4em,max-content) 1fr minmax(3em,max-content);
gap:3px 8px;align-items:center;max-width:760px}
.bars span{white-space:nowrap} .bars .n{text-align:right}
.bar{height:13px;background:#eef1f6} .bar i{display:block;height:100%;background:#3b6fd8}
.flag{display:inline-block;background:#fff4e0;color:#7a4a00;border-radius:4px;padding:0 6px;
margin:2px 0}
@media (max-width:600px){body{padding:10px;font-size:14px} .card b{font-size:18px}}
"""


def escape(text: str) -> str:
    """Text for the page: control characters and the lone surrogates of a file name that
    is not UTF-8 shown as escapes (:func:`printable`), then HTML-escaped."""
    return html_escape(printable(text))


def render(found: Survey, target: str) -> str:
    """The whole HTML document."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>sitemap-reader report: {escape(target)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Sitemap report: {escape(target)}</h1>",
        f'<p class="muted">made {utc_now():%Y-%m-%d %H:%M} UTC by sitemap-reader</p>',
        _summary(found),
        _findings(found),
        _blocked(found),
        _freshness(found),
        _section("lastmod", "URLs by lastmod", _months(found)),
        _section("changefreq", "changefreq", _values(found, found.changefreqs, "changefreq")),
        _section("priority", "priority", _values(found, found.priorities, "priority")),
        _hreflang(found),
        _duplicates(found),
        _tree(found),
        _top("slowest", "Slowest files", found.files, "seconds"),
        _top("largest", "Largest files", found.files, "bytes"),
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _section(ident: str, title: str, body: str) -> str:
    return f'<section id="{ident}"><h2>{escape(title)}</h2>{body}</section>'


def _table(head: Iterable[str], rows: Iterable[str]) -> str:
    """A table in its own scroll box (a phone scrolls the table, not the page)."""
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    return f'<div class="scroll"><table><tr>{header}</tr>{"".join(rows)}</table></div>'


def _url(url: str) -> str:
    return f'<td class="u">{escape(url)}</td>'


def _n(value: int | str) -> str:
    return f'<td class="n">{value if isinstance(value, str) else f"{value:,}"}</td>'


# --------------------------------------------------------------------------- summary


def severity_counts(findings: Iterable[Finding]) -> dict[str, int]:
    """Occurrences by severity, worst first."""
    counts = dict.fromkeys(SEVERITIES, 0)
    for finding in findings:
        counts[finding.severity] += finding.count
    return counts


def _noun(count: int, noun: str) -> str:
    """``noun`` in the number ``count`` asks for, without the count."""
    return plural(count, noun).split(" ", 1)[1]


def _summary(found: Survey) -> str:
    stats = found.run.stats
    severities = severity_counts(found.all_findings())
    sitemaps = [r for r in found.files if r.node.kind not in ("robots", *HTML_KINDS)]
    pages = [r for r in found.files if r.node.kind in HTML_KINDS and r.node.urls]
    failed = sum(1 for r in sitemaps if r.node.failed)
    cards = [
        ("URLs", found.urls, f'data-urls="{found.urls}"'),
        ("blocked by robots.txt", found.disallowed, ""),
        ("out of scope (not kept)", stats.urls_out_of_scope, ""),
        ("listed again (not kept)", stats.urls_duplicate, ""),
        (_noun(len(sitemaps), "sitemap") + " read", len(sitemaps), ""),
        *([(_noun(len(pages), "HTML page") + " read for links", len(pages), "")] if pages else []),
        ("failed or cut short", failed, ""),
        *((level + ("" if n == 1 else "s"), n, "") for level, n in severities.items()),
    ]
    html = "".join(
        f'<div class="card" {extra}><b>{value:,}</b>{escape(label)}</div>'
        for label, value, extra in cards
    )
    listed = found.urls + stats.urls_out_of_scope + stats.urls_duplicate
    sources = (
        " and ".join(
            words
            for words, present in (("the sitemaps", sitemaps), ("the HTML site map's pages", pages))
            if present
        )
        or "the sitemaps"
    )
    story = (
        f"<p>{sources[0].upper() + sources[1:]} list {plural(listed, 'URL')}: "
        f"{found.urls:,} kept, "
        f"{stats.urls_duplicate:,} listed again, {stats.urls_out_of_scope:,} out of scope. "
        f"Of those kept, robots.txt disallows {found.disallowed:,}. "
        f"Read {stats.bytes / 1e6:.2f} MB in {stats.seconds:.1f} s.</p>"
    )
    notes = []
    if found.run.error:
        notes.append(f'<p class="error">{escape(found.run.error)}</p>')
    many = len(found.run.verdicts) > 1
    for verdict in found.run.verdicts.values():
        hue = "ok" if verdict.kind == "ok" else "warning" if verdict.urls else "error"
        said = escape(printable(verdict_phrase(verdict, named=many)))
        notes.append(f'<p class="{hue}">Verdict: {said}</p>')
    if stats.stopped:
        notes.append(
            f'<p class="warning">{escape(stop_phrase(stats.stopped, CLI))}: '
            "not every file was read</p>"
        )
    return _section("summary", "Summary", f'<div class="cards">{html}</div>{story}{"".join(notes)}')


def _findings(found: Survey) -> str:
    items = sorted(found.all_findings(), key=lambda f: (SEVERITIES.index(f.severity), -f.count))
    if not items:
        return _section("findings", "Findings", '<p class="ok">none: the protocol is followed</p>')
    rows = (
        f'<tr><td class="{f.severity}">{f.severity}</td><td>{escape(f.code)}</td>{_n(f.count)}'
        f'{_url(f.file)}{_n(f.line or "")}<td class="u">{escape(f.message)}</td></tr>'
        for f in items
    )
    head = ("severity", "rule", "count", "file", "line", "first example")
    meaning = "".join(
        f"<li><b>{escape(code)}</b> ({RULES[code].severity}): {escape(RULES[code].meaning)}</li>"
        for code in dict.fromkeys(f.code for f in items)
    )
    return _section("findings", "Findings, worst first", _table(head, rows) + f"<ul>{meaning}</ul>")


def _blocked(found: Survey) -> str:
    stats = found.run.stats
    blocked = "".join(f"<li>{escape(url)}</li>" for url in found.blocked_examples)
    body = (
        f"<p><b>Blocked by robots.txt:</b> {plural(found.disallowed, 'URL')} the sitemaps "
        "list and robots.txt disallows for this crawler (as Search Console's "
        '"Submitted URL blocked by robots.txt").</p>'
        + (f'<ul class="u">{blocked}</ul>' if blocked else "")
    )
    other = [f for f in found.all_findings() if f.code == "other-host"]
    examples = "".join(f"<li>{escape(f.message)}</li>" for f in other[:5])
    body += (
        f"<p><b>Out of scope:</b> {plural(stats.urls_out_of_scope, 'URL')} on hosts the "
        "target's scope does not take (not kept; --scope any keeps them).</p>"
        + (f"<ul>{examples}</ul>" if examples else "")
    )
    return _section("blocked", "Blocked and out of scope", body)


# --------------------------------------------------------------------------- freshness


def _day(moment: datetime | None) -> str:
    return "-" if moment is None else f"{moment:%Y-%m-%d}"


def _share(part: int, whole: int) -> str:
    return "-" if not whole else f"{100 * part / whole:.0f}%"


def _uniform(counts: Counter[str], total: int, what: str) -> str | None:
    """``uniform changefreq: daily`` when one value covers nearly every URL."""
    if total < UNIFORM_MIN_URLS or not counts:
        return None
    value, count = counts.most_common(1)[0]
    if value == "(none)" or count < UNIFORM_SHARE * total:
        return None
    return f"uniform {what}: {value} on {_share(count, total)}"


def _flags(report: FileReport) -> list[str]:
    counts = report.counts
    flags = [p.message for p in report.node.problems if p.code == "uniform-lastmod"]
    flags = ["uniform lastmod: " + m.split(":")[0] for m in flags]
    for values, what in ((counts.changefreqs, "changefreq"), (counts.priorities, "priority")):
        flag = _uniform(values, counts.kept, what)
        if flag:
            flags.append(flag)
    return flags


def _fresh_cells(fresh: Freshness) -> str:
    return (
        f"{_n(fresh.total)}<td>{_day(fresh.newest)}</td><td>{_day(fresh.oldest)}</td>"
        f"{_n(_share(fresh.undated, fresh.total))}"
    )


def _freshness(found: Survey) -> str:
    targets = (
        f"<tr>{_url(target)}{_fresh_cells(found.freshness(target))}</tr>"
        for target in dict.fromkeys(found.run.targets)
    )
    head = ("target", "URLs", "newest lastmod", "oldest lastmod", "undated")
    body = _table(head, targets)
    rows = []
    for report in found.files:
        if report.node.kind == "robots" or not report.counts.kept:
            continue
        flags = "".join(f'<span class="flag">{escape(f)}</span> ' for f in _flags(report))
        rows.append(
            f"<tr>{_url(report.url)}{_fresh_cells(report.counts.fresh)}<td>{flags}</td></tr>"
        )
    if rows:
        body += "<h3>Per sitemap</h3>" + _table(("sitemap", *head[1:], "flags"), rows)
    return _section("freshness", "Freshness", body)


def _months(found: Survey) -> str:
    """A bar per month of the :data:`MONTHS` calendar months up to the newest lastmod,
    one per year before them, then the undated: they add up to every URL counted."""
    first = _months_back(max(found.lastmod_months, default="0000-01"), MONTHS - 1)
    bars: Counter[str] = Counter()
    for month, count in found.lastmod_months.items():
        bars[month if month >= first else month[:4]] += count
    undated = found.urls - sum(found.lastmod_months.values())
    items = [*sorted(bars.items()), *([("undated", undated)] if undated else [])]
    note = (
        f'<p class="muted">A bar per month for the {MONTHS} months up to the newest lastmod, '
        "a bar per year before them; the last bar counts the URLs without a lastmod.</p>"
    )
    return _bars(items, found.urls) + note


def _months_back(month: str, count: int) -> str:
    """``YYYY-MM`` ``count`` months before ``month``."""
    index = int(month[:4]) * 12 + int(month[5:7]) - 1 - count
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def _values(found: Survey, counts: Counter[str], what: str) -> str:
    if what == "changefreq":
        order = [*CHANGEFREQ_ORDER, "(none)"]
        items = [(name, counts[name]) for name in order if counts.get(name)]
        items += [(k, v) for k, v in sorted(counts.items()) if k not in order]
    else:
        items = sorted(counts.items(), key=lambda kv: (kv[0] == "(none)", kv[0]), reverse=False)
    flag = _uniform(counts, found.urls, what)
    note = (
        f'<p><span class="flag">{escape(flag)}: it tells a crawler nothing</span></p>'
        if flag
        else ""
    )
    return _bars(items, found.urls) + note


def _bars(items: list[tuple[str, int]], total: int) -> str:
    """A bar chart in CSS (it reflows): a label, a bar, a count per row."""
    if not items:
        return f'<div class="bars" data-total="{total}"></div><p class="muted">no URLs</p>'
    top = max(count for _, count in items) or 1
    rows = "".join(
        f'<span>{escape(label)}</span><span class="bar" data-count="{count}">'
        f'<i style="width:{100 * count / top:.1f}%"></i></span><span class="n">{count:,}</span>'
        for label, count in items
    )
    return f'<div class="bars" data-total="{total}">{rows}</div>'


# --------------------------------------------------------------------------- hreflang


def _hreflang(found: Survey) -> str:
    if not found.hreflang_pages:
        return _section("hreflang", "hreflang", '<p class="muted">no hreflang alternates</p>')
    langs = (f"<tr><td>{escape(lang)}</td>{_n(n)}</tr>" for lang, n in found.hreflang.most_common())
    checked, missing, unlisted, examples = found.reciprocity()
    sampled = len(found.alternates_of) < found.hreflang_pages
    text = (
        f"<p>{plural(found.hreflang_pages, 'URL')} of {found.urls:,} "
        f"({_share(found.hreflang_pages, found.urls)}) name hreflang alternates.</p>"
        f"<p>Reciprocity: of {plural(checked, 'link')} between listed pages, {missing:,} "
        f"{'is' if missing == 1 else 'are'} not returned (the alternate does not name the "
        f"page back); {plural(unlisted, 'link')} {'points' if unlisted == 1 else 'point'} "
        "at pages no sitemap lists with alternates"
        + (" (on the first pages only)" if sampled else "")
        + ".</p>"
    )
    rows = (f"<tr>{_url(page)}{_url(other)}</tr>" for page, other in examples)
    table = _table(("page", "alternate not naming it back"), rows) if examples else ""
    return _section(
        "hreflang", "hreflang", text + _table(("language", "alternates"), langs) + table
    )


# --------------------------------------------------------------------------- files


def _duplicates(found: Survey) -> str:
    rows = [
        f"<tr>{_url(r.url)}{_n(count)}</tr>"
        for r in found.files
        if (count := sum(f.count for f in r.findings if f.code == "duplicate-url"))
    ]
    again = plural(found.run.stats.urls_duplicate, "URL")
    body = f"<p>{again} listed again after their first listing.</p>"
    return _section(
        "duplicates", "Duplicates", body + (_table(("file", "duplicates"), rows) if rows else "")
    )


def _status(report: FileReport) -> tuple[str, str]:
    """(class, verdict) of a file: the HTTP status coloured by what it means here."""
    node = report.node
    status = node.status
    if node.kind == "robots":
        if status is not None and 400 <= status < 500:
            return "muted", "no robots.txt (everything allowed)"
        return ("ok", "read") if node.ok else ("error", node.reason or "failed")
    if node.skipped is not None:
        return "warning", f"not read: {node.skipped}"
    if node.ok:
        return "ok", "ok"
    if node.cut_short:
        return "warning", "not finished (the run stopped)"
    return "error", node.reason or "failed"


def _tree(found: Survey) -> str:
    rows = []
    for report in found.files:
        node = report.node
        hue, verdict = _status(report)
        count = sum(f.count for f in report.findings)
        codes = ", ".join(sorted({f.code for f in report.findings}))
        status_hue = "ok" if node.status and node.status < 400 else hue
        rows.append(
            f'<tr><td class="u" style="padding-left:{node.depth * 14 + 8}px">'
            f"{escape(report.url)}</td><td>{escape(node.kind)}</td>"
            f'<td class="{status_hue}">{escape(str(node.status or "-"))}</td>'
            f'<td class="{hue}">{escape(verdict)}</td><td>{escape(node.format or "-")}</td>'
            f"{_n(node.urls)}{_n(node.bytes)}"
            f'<td class="{"warning" if count else "ok"}">{count:,} {escape(codes)}</td></tr>'
        )
    head = ("file", "kind", "status", "verdict", "format", "URLs", "bytes", "findings")
    return _section("tree", "Sitemap tree", _table(head, rows))


def _top(ident: str, title: str, files: list[FileReport], key: str) -> str:
    read = [r for r in files if r.node.kind != "robots" and r.node.fetched]
    if key == "seconds":
        ranked = sorted(read, key=lambda r: r.seconds or 0.0, reverse=True)
    else:
        ranked = sorted(read, key=lambda r: r.node.bytes, reverse=True)
    rows = (
        f"<tr>{_url(r.url)}{_n(f'{(r.seconds or 0.0):.3f}')}{_n(r.node.bytes)}"
        f"{_n(r.uncompressed or 0)}<td>{escape(r.last_modified or '-')}</td></tr>"
        for r in ranked[:TOP_FILES]
    )
    head = ("file", "seconds", "bytes", "uncompressed", "Last-Modified")
    return _section(ident, title, _table(head, rows))
