"""The batch writers give the reference bytes: msgspec's path against to_dict + json_text.

:mod:`sitemap_reader.delivery.writers` encodes a batch of plain records in C and falls back to the
reference path (a record at a time) wherever the bytes could differ. These tests hold the
two to each other on the real corpus, on hostile text and on records Hypothesis makes,
and check that the fast path is really taken where it should be (else they would prove
nothing).
"""

from __future__ import annotations

import io
import math
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_reader.delivery import writers
from sitemap_reader.delivery.writers import (
    CsvWriter,
    JsonlWriter,
    TxtWriter,
    csv_row,
    csv_text,
    json_line,
    jsonl_text,
)
from sitemap_reader.parse.parser import parse
from sitemap_reader.records import Alternate, Image, RareFields, UrlRecord
from sitemap_reader.records.scoring import REVISIT_SECONDS, Verdict, sitemap_builder
from tests.parse.test_fuzz import fuzz_settings
from tests.shared_data import CORPUS, REALDATA

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def reference_jsonl(batch: list[UrlRecord]) -> str:
    return "".join(json_line(r) for r in batch)


def reference_csv(batch: list[UrlRecord], raw: bool) -> str:
    return "".join(csv_row(r, raw=raw) for r in batch)


def assert_same(batch: list[UrlRecord]) -> None:
    """Both writers give the reference bytes for ``batch``."""
    assert jsonl_text(batch) == reference_jsonl(batch)
    for raw in (False, True):
        assert csv_text(batch, raw=raw) == reference_csv(batch, raw)


def crawled(body: bytes, url: str) -> list[UrlRecord]:
    """A body's records as the crawler builds them (revisit and robots set)."""
    from sitemap_reader.parse.parser import SitemapParser

    build = sitemap_builder(NOW, Verdict(), audit=lambda u: "allowed")
    parser = SitemapParser(url, build=build)
    items = parser.feed(body) + parser.close()
    return [item for item in items if isinstance(item, UrlRecord)]


def corpus_files() -> list[Path]:
    found = [p for p in sorted(REALDATA.rglob("*")) if p.is_file() and p.name != "MANIFEST.tsv"]
    found += [p for p in sorted(CORPUS.rglob("*")) if p.is_file()]
    return found


def test_corpus_records_written_alike() -> None:
    """Every record of the real corpus, bare and crawled, written alike by both paths."""
    files = corpus_files()
    if not files:
        pytest.skip("no shared corpus here")
    plain = 0
    for path in files:
        body = path.read_bytes()
        url = f"https://corpus.example/{path.name}"
        for batch in (parse(body, url).urls, crawled(body, url)):
            assert_same(batch)
            plain += sum(1 for r in batch if not (r.alternates or r.images or r.videos or r.news))
    assert plain > 10_000  # the fast path saw real records


def test_fast_path_taken_on_plain_records() -> None:
    """A batch of plain crawled records takes msgspec's path (not the reference)."""
    body = b"<urlset>" + b"".join(
        b"<url><loc>https://e.com/%d</loc><lastmod>2024-01-%02dT10:00:00Z</lastmod>"
        b"<changefreq>daily</changefreq><priority>0.%d</priority></url>" % (n, 1 + n % 28, n % 10)
        for n in range(500)
    )
    batch = crawled(body + b"</urlset>", "https://e.com/s.xml")
    assert len(batch) == 500
    assert writers._fast_jsonl(batch) == reference_jsonl(batch)


HOSTILE_TEXT = [
    '}, {"url": "x',
    "a\u2028b\u2029c\x85d\x9b\x7f",
    "\x00\x01\x08\x0c\n\r\t\x1f",
    '"quoted" \\ back\\slash\\',
    "\udc80 lone surrogate",
    "=HYPERLINK(1)",
    "+1",
    "-1",
    "@x",
    "\tx",
    "ü straße 東京 😀",
    "",
]


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_hostile_text_written_alike(text: str) -> None:
    """Site text that breaks lines, escapes, formulas or UTF-8: the same bytes both ways."""
    batch = [
        UrlRecord("https://e.com/" + text, sitemap=text, title=text or None, score=0.5),
        UrlRecord(text, sitemap="https://e.com/s.xml", robots=text, source=text),
        UrlRecord("https://e.com/b", title=text, mobile=True, removed=True, revisit=86400.0),
    ]
    assert_same(batch)


def test_extended_records_keep_their_place() -> None:
    """Records with extensions take the reference path in place, between plain runs."""
    plain = UrlRecord("https://e.com/a", score=0.25)
    fat = UrlRecord(
        "https://e.com/b",
        alternates=(Alternate("de", "https://e.com/de/b"),),
        images=(Image("https://e.com/i.png", title="t"),),
    )
    batch = [plain, fat, plain, plain, fat]
    assert_same(batch)
    assert jsonl_text(batch).count("\n") == 5


@pytest.mark.parametrize(
    "value", [1e-05, 5e-324, -1e-07, 1e16, 1e22, -3e20, math.nan, math.inf, -math.inf, 0.0, -0.0]
)
def test_floats_python_writes_otherwise(value: float) -> None:
    """Floats msgspec writes unlike repr (tiny, huge, NaN, infinite) take the reference."""
    batch = [
        UrlRecord("https://e.com/a", priority=value, score=value),
        UrlRecord("https://e.com/b"),
    ]
    assert_same(batch)


@pytest.mark.parametrize(
    "zone",
    [
        UTC,
        None,
        timezone(timedelta(hours=2)),
        timezone(timedelta(seconds=30)),
        timezone(timedelta(0), "GMT"),
        timezone(timedelta(hours=-5, minutes=-30, microseconds=7)),
    ],
)
def test_lastmod_zones(zone: timezone | None) -> None:
    """A lastmod in any zone (or none) is written as isoformat writes it."""
    when = datetime(2024, 3, 5, 14, 30, 7, 120, tzinfo=zone)
    assert_same([UrlRecord("https://e.com/a", lastmod=when), UrlRecord("https://e.com/b")])


texts = st.text(alphabet=st.characters(codec=None), max_size=12)
floats = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True))
zones = st.one_of(
    st.none(),
    st.just(UTC),
    st.timedeltas(min_value=timedelta(hours=-23), max_value=timedelta(hours=23)).map(timezone),
)
lastmods = st.one_of(st.none(), st.builds(lambda d, z: d.replace(tzinfo=z), st.datetimes(), zones))
records = st.builds(
    UrlRecord,
    url=texts,
    lastmod=lastmods,
    changefreq=st.one_of(st.none(), st.sampled_from(sorted(REVISIT_SECONDS)), texts),
    priority=floats,
    score=st.floats(allow_nan=True, allow_infinity=True),
    sitemap=st.one_of(st.none(), texts),
    revisit=st.one_of(st.none(), st.floats(min_value=-1e18, max_value=1e18)),
    removed=st.booleans(),
    title=st.one_of(st.none(), texts),
    mobile=st.booleans(),
    robots=st.one_of(st.none(), st.sampled_from(["allowed", "disallowed"])),
    source=st.one_of(st.none(), st.just("html")),
    alternates=st.one_of(st.just(()), st.just((Alternate("de", "https://e.com/de"),))),
)


@fuzz_settings(300)
@given(st.lists(records, max_size=8))
def test_any_records_written_alike(batch: list[UrlRecord]) -> None:
    """Hypothesis: any batch of records gives the reference bytes in JSONL and CSV."""
    assert_same(batch)


def test_writers_write_a_batch_in_one_call() -> None:
    """Each writer writes a batch as whole lines in one write; CSV starts with its header."""
    batch = [UrlRecord("https://e.com/a"), UrlRecord("https://e.com/b", title="T")]
    for cls in (JsonlWriter, TxtWriter, CsvWriter):
        stream = io.StringIO()
        writer = cls(stream)
        header = stream.getvalue()
        writer.write_batch(batch)
        writer.write_batch([])
        writer.write(batch[0])
        text = stream.getvalue()[len(header) :]
        assert text.count("\n") == 3, cls
    assert stream.getvalue().startswith("url,lastmod,changefreq,")


def test_rare_fields_written_alike() -> None:
    """A feed's title and the mobile flag ride the fast path in their key order."""
    build = sitemap_builder(NOW, Verdict())
    rare = RareFields("T", True)
    record = build("https://e.com/a", NOW, "daily", 0.5, None, (), (), (), None, rare)
    assert_same([record, record])
    assert '"title": "T", "mobile": true, "revisit": 86400}' in jsonl_text([record])


#: A child process that writes records onto a file with a file size limit (a full disk:
#: EFBIG as ENOSPC), through DescriptorText; it prints what records_out says.
_FULL_DISK_CHILD = """
import resource, signal, sys
from sitemap_reader.delivery.writers import DescriptorText, make_writer
from sitemap_reader.records import UrlRecord
fmt, path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
with open(path, "w", encoding="utf-8") as file:
    out = DescriptorText.over(file)
    writer = make_writer(fmt, out)
    title = "line one, " + chr(10) + "line " + chr(34) + "two" + chr(34)
    records = [UrlRecord(f"https://e.com/{i}", title=title) for i in range(2000)]
    written = 0
    try:
        for start in range(0, 2000, 300):
            writer.write_batch(records[start:start + 300])
            written += 300
    except OSError:
        print(written + out.records_out(fmt))
"""


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "txt"])
def test_records_out_counts_the_whole_records_a_full_disk_kept(tmp_path: Path, fmt: str) -> None:
    """Records written through DescriptorText until the disk is full (a file size limit):
    the count of batches written plus records_out() of the refused one is exactly the
    whole records the file holds, CSV rows whose quoted title holds a line break
    included (the CLI's "N written" on a full disk)."""
    import csv
    import json
    import subprocess
    import sys

    path = tmp_path / f"out.{fmt}"
    limit = 20_777  # ends mid-record, mid-batch
    done = subprocess.run(
        [sys.executable, "-c", _FULL_DISK_CHILD, fmt, str(path), str(limit)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    said = int(done.stdout)
    data = path.read_text(encoding="utf-8")
    assert len(data.encode()) == limit
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(data)))[:-1]  # the last row is cut
        assert rows[0][0] == "url" and len(rows) - 1 == said
        assert rows[-1][0] == f"https://e.com/{said - 1}" and "\n" in rows[-1][12]
    else:
        lines = data.split("\n")[:-1]  # the last piece is cut (or empty)
        assert len(lines) == said
        if fmt == "jsonl":
            assert json.loads(lines[-1])["url"] == f"https://e.com/{said - 1}"
