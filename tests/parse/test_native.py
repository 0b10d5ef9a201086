"""The compiled path against its reference: the same records, problems and verdicts.

Both paths of :class:`SitemapParser` (``sitemap_reader/parse/native.py`` and the pure-Python
reader) are fed the same chunks and must say the same: every record (``==``, scores bit for
bit), the problems (code, message, count, fatal), format, completeness, the feed's date,
the entry count, and which records each ``feed()`` call handed out. Bodies: every file of
``../shared`` (other projects' corpus, real sites, the peers' data), the hostile and odd
cases of :mod:`tests.parse.native_cases`, Hypothesis-made documents; each bound has a case
read on the compiled path. The C fast paths are also held to the reference's functions
alone. Skipped, saying why, where the extension is not built.
"""

from __future__ import annotations

import gzip
import random
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitemap_reader.delivery.writers import jsonl_text
from sitemap_reader.discovery.dedupe import UrlSet, url_set
from sitemap_reader.options.limits import Limits
from sitemap_reader.parse import lite, native, normalize
from sitemap_reader.parse.amp import AmpFixer
from sitemap_reader.parse.parser import SitemapParser, parse
from sitemap_reader.records import Alternate, Image, UrlRecord
from tests.parse.native_cases import NS, SMALL, hostile
from tests.parse.test_fuzz import documents, hostile_markup, mutated
from tests.shared_data import CORPUS, REALDATA, SHARED, missing_reason

pytestmark = pytest.mark.skipif(native.CORE is None, reason=native.describe())

NOW = datetime(2025, 6, 1, tzinfo=UTC)
URL = "https://example.com/dir/sitemap.xml"
PEERS = SHARED / "peer-data"
Outcome = tuple[Any, ...]


def outcome(path: str, chunks: Sequence[bytes], limits: Limits | None = None) -> Outcome:
    """Everything a parser on ``path`` says about a body fed in ``chunks``."""
    with native.using("native" if path == "native" else "pure"):
        parser = SitemapParser(URL, limits=limits, now=NOW, pagemaps=True)
    groups: list[list[Any]] = []
    for chunk in chunks:
        groups.append(parser.feed(chunk))
        if parser.done:
            break
    groups.append(parser.close())
    problems = [(p.code, p.message, p.count, p.fatal) for p in parser.problems]
    return (groups, problems, parser.format, parser.complete, parser.lastmod,
            parser.url_count, parser.done)  # fmt: skip


def first_difference(a: Outcome, b: Outcome) -> str:
    """Where two outcomes part (for the assertion message)."""
    names = ("records", "problems", "format", "complete", "lastmod", "count", "done")
    for name, x, y in zip(names, a, b, strict=True):
        if x != y:
            if name == "records":
                flat_x = [r for g in x for r in g]
                flat_y = [r for g in y for r in g]
                for i, (p, q) in enumerate(zip(flat_x, flat_y, strict=False)):
                    if p != q:
                        return f"record {i}: {p!r} != {q!r}"
                if len(flat_x) != len(flat_y):
                    return f"{len(flat_x)} records != {len(flat_y)}"
                return f"grouping per feed(): {[len(g) for g in x]} != {[len(g) for g in y]}"
            return f"{name}: {x!r} != {y!r}"
    return "equal"


def assert_same(chunks: Sequence[bytes], limits: Limits | None = None) -> Outcome:
    """Both paths fed ``chunks``: the same outcome (returned)."""
    pure = outcome("pure", chunks, limits)
    compiled = outcome("native", chunks, limits)
    assert compiled == pure, first_difference(pure, compiled)
    return compiled


def chunked(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)] or [b""]


def chunkings(body: bytes, seed: int) -> Iterator[list[bytes]]:
    """64 KiB pieces; odd sizes for the smaller bodies; random cuts."""
    yield chunked(body, 65536)
    for size in (997, 61, 7):
        if len(body) <= 40_000 * size // 61:
            yield chunked(body, size)
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, 30))) if len(body) > 1 else []
    yield [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


# --------------------------------------------------------------------------- shared data


def shared_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


@pytest.mark.parametrize(
    "folder", [CORPUS, REALDATA / "files", PEERS], ids=["corpus", "realdata", "peer-data"]
)
def test_shared_data_reads_the_same_on_both_paths(folder: Path) -> None:
    """Every file of ``../shared`` (other projects' test files, real sites' sitemaps, the
    peers' data: robots.txt files among them), in 64 KiB pieces, then in odd pieces and
    random cuts for the files small enough: the same outcome on both paths."""
    files = shared_files(folder)
    if not files:
        pytest.skip(missing_reason(folder))
    urls = 0
    for n, path in enumerate(files):
        body = path.read_bytes()
        ways = chunkings(body, n) if len(body) < 300_000 or folder != PEERS else []
        for chunks in [chunked(body, 65536), *ways]:
            try:
                urls += assert_same(chunks)[5]
            except AssertionError as exc:
                raise AssertionError(f"{path}: {exc}") from None
    assert urls > 0


# --------------------------------------------------------------------------- hostile cases


HOSTILE = list(hostile())


@pytest.mark.parametrize(("name", "body", "limits"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_cases_read_the_same_on_both_paths(
    name: str, body: bytes, limits: Limits | None
) -> None:
    """Entities, DOCTYPEs, floods, long tokens, broken and odd markup, feeds, extensions,
    text sitemaps, gzip: the same outcome on both paths, in every chunking."""
    for n, chunks in enumerate(chunkings(body, len(name))):
        try:
            assert_same(chunks, limits)
        except AssertionError as exc:
            raise AssertionError(f"{name}, chunking {n}: {exc}") from None


# --------------------------------------------------------------------------- every bound

HEAD = f'<?xml version="1.0"?>\n<urlset xmlns="{NS}">'
URLS = "".join(f"<url><loc>https://example.com/{i}</loc></url>" for i in range(40))
DOC = (HEAD + URLS + "</urlset>").encode()
LAUGHS = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10 if i else "lol"}">' for i in range(6))

BOUNDS: list[tuple[str, bytes, Limits, str]] = [
    ("token", (HEAD + URLS + "<!--" + "c" * 3000 + "-->" + URLS + "</urlset>").encode(),
     Limits(max_xml_token=1024), "limit-token"),
    ("depth", (HEAD + "<url>" + "<x>" * 30 + "</x>" * 30 + "</url></urlset>").encode(),
     Limits(max_xml_depth=10), "limit-nesting"),
    ("names", (HEAD + "".join(f"<n{i}/>" for i in range(300)) + URLS + "</urlset>").encode(),
     Limits(max_xml_names=50, max_xml_token=1024), "limit-names"),
    ("namespaces", (HEAD + "".join(f'<u xmlns:p{i}="urn:{i}"/>' for i in range(40))
                    + "</urlset>").encode(), Limits(max_xml_namespaces=5), "limit-namespaces"),
    ("decompressed-bytes", gzip.compress(DOC, mtime=0), Limits(max_decompressed_bytes=900),
     "limit-bytes"),
    ("url-count", DOC, Limits(max_urls_per_sitemap=7), "limit-urls"),
    ("entities", (f"<!DOCTYPE urlset [{LAUGHS}]>{HEAD}<url><loc>&l5;</loc></url></urlset>")
     .encode(), Limits(), "xml-entities-forbidden"),
    ("external-entity", (f'<!DOCTYPE urlset [<!ENTITY x SYSTEM "file:///etc/hostname">]>'
                         f"{HEAD}<url><loc>&x;</loc></url></urlset>").encode(), Limits(),
     "xml-entities-forbidden"),
    ("gzip-layers", gzip.compress(gzip.compress(gzip.compress(DOC, mtime=0), mtime=0), mtime=0),
     Limits(), "limit-gzip-layers"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "body", "limits", "code"), BOUNDS, ids=[b[0] for b in BOUNDS])
def test_every_bound_holds_on_the_compiled_path(
    name: str, body: bytes, limits: Limits, code: str
) -> None:
    """Token size, depth, distinct names, namespaces, decompressed bytes, URL count,
    DOCTYPE entity refusal, gzip layers: the compiled path stops with the bound's fatal
    problem, as the reference does, whole and in 7-byte pieces."""
    for chunks in (chunked(body, 65536), chunked(body, 7)):
        got = assert_same(chunks, limits)
        fatal = [p for p in got[1] if p[3]]
        assert [p[0] for p in fatal] == [code], got[1]
        assert got[3] is False and got[6] is True  # incomplete, done


def test_a_doctype_without_a_subset_is_read_natively() -> None:
    """A DOCTYPE naming an external DTD only (no entities can be declared) is read by the
    C core; one with an internal subset is handed to the reference from its first byte."""
    with native.using("native"):
        plain = SitemapParser(URL, now=NOW)
        plain.feed(DOC.replace(b"<urlset", b'<!DOCTYPE urlset SYSTEM "x.dtd"><urlset', 1))
        subset = SitemapParser(URL, now=NOW)
        subset.feed(DOC.replace(b"<urlset", b"<!DOCTYPE urlset [<!ELEMENT u ANY>]><urlset", 1))
    assert isinstance(plain._reader, native.NativeXmlReader)
    assert isinstance(subset._reader, native.NativeXmlReader)
    assert not plain._reader.handed_over and subset._reader.handed_over
    assert len(plain.close()) + len(subset.close()) == 0  # all handed out by feed()
    assert plain.url_count == subset.url_count == 40


# --------------------------------------------------------------------------- generated


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    body=st.one_of(documents(), mutated(), hostile_markup()),
    limits=st.sampled_from([None, SMALL, Limits(max_urls_per_sitemap=3)]),
    layers=st.integers(0, 1),
)
def test_generated_documents_read_the_same_whole_and_split(
    body: bytes, limits: Limits | None, layers: int
) -> None:
    """Hypothesis documents (every root and extension, mutated and hostile markup): the
    same outcome on both paths whole, and, for small ones, cut in two at every byte."""
    for _ in range(layers):
        body = gzip.compress(body, mtime=0)
    whole = assert_same([body], limits)
    if len(body) <= 600:
        for i in range(1, len(body)):
            got = outcome("native", [body[:i], body[i:]], limits)
            assert got[1:] == whole[1:], (i, first_difference(whole, got))
            assert [r for g in got[0] for r in g] == [r for g in whole[0] for r in g], i


# --------------------------------------------------------------------------- fast paths

URL_PARTS = ["http://", "https://", "HTTP://", "a", "z", "0", "_", "-", ".", "/", "/.", "%",
             "%2F", "%2f", "%41", "%7E", "%C3%A9", "%3C", "%20", "?", "#", ":", ":80/",
             ":443/", ":8080", "@", "&", "=", "é", " ", "~", "!", "'", "[", "\\", "|"]  # fmt: skip
DATE_PARTS = ["2024", "-", "01", "12", "13", "00", "29", "02", "T", " ", "t", ":", "23", "24",
              "59", "60", ".", "5", "123456", "1234567", "Z", "z", "+", "-", "05:30", "0001",
              "9999", "+24:00", "x", ",5"]  # fmt: skip
SOUP = [b"&", b"amp;", b"lt;", b"#38;", b"<![CDATA[", b"]]>", b"<", b"!", b"[", b"a", b"&#"]


@settings(max_examples=400, deadline=None)
@given(
    st.tuples(st.sampled_from(["", "https://e.com", "http://a-b.c_d"]),
              st.lists(st.sampled_from(URL_PARTS), max_size=14)).map(lambda t: t[0] + "".join(t[1]))
)  # fmt: skip
def test_the_c_location_test_is_the_references(url: str) -> None:
    """The C normal-form test answers as ``normalize``'s fast path does."""
    want = normalize.fast_url_match(url) is not None and "/." not in url
    assert native.CORE.url_normal(url) == want


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(DATE_PARTS), min_size=1, max_size=12).map("".join))
def test_the_c_lastmod_is_the_references_where_it_answers(text: str) -> None:
    """The C lastmod reader gives ``parse_lastmod``'s value or leaves the text to it."""
    got = native.CORE.lastmod(text)
    assert got is NotImplemented or got == normalize.parse_lastmod(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(SOUP), max_size=12).map(b"".join))
def test_the_c_ampersand_check_is_the_references(data: bytes) -> None:
    """Bytes the C check passes are bytes the ampersand repair leaves as they are."""
    fixer = AmpFixer()
    if native.CORE.amp_clean(data):
        assert fixer._fix(data) == data and not fixer._in_cdata


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"</url>", b"</sitemap>", b"x", b"</url", b"y" * 9000]),
                max_size=6).map(b"".join))  # fmt: skip
def test_the_entry_boundary_is_the_references(data: bytes) -> None:
    """The compiled reader cuts its slices where the reference reader does."""
    assert native.entry_boundary(data) == lite.entry_boundary(data)


# --------------------------------------------------------------------------- delivery

TEXTS = ["https://e.com/a", 'q"uote\\', "tab\there\nnl", "\x00\x1f\x7f\x85\u2028\u2029x",
         "\ud800lone", "é中😀", "", "a" * 300]  # fmt: skip
NUMBERS = [0.0, 1.0, 0.5, 0.1, 1e-5, 1e16, 123.456, float("nan"), float("inf"), -0.0,
           0.44375, 0.12345, 0.00005, 2.5, 3.5]  # fmt: skip
TWO_HOURS = timezone(timedelta(hours=2))
DATES = [None, datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), datetime(1, 1, 1, tzinfo=UTC),
         datetime(2024, 5, 6, 7, 8, 9, 123, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=TWO_HOURS),
         datetime(2024, 1, 1)]  # fmt: skip
texts = st.sampled_from(TEXTS) | st.text(max_size=20)
numbers = st.sampled_from(NUMBERS) | st.floats(allow_nan=True, allow_infinity=True)
records = st.builds(
    UrlRecord,
    url=texts,
    lastmod=st.sampled_from(DATES),
    changefreq=st.sampled_from([None, "daily", "x\u2028"]),
    priority=st.none() | numbers | st.just(1),
    score=numbers,
    sitemap=st.none() | texts,
    images=st.lists(
        st.builds(Image, texts, title=st.none() | texts, caption=st.none() | texts,
                  license=st.none() | texts), max_size=2
    ).map(tuple),
    alternates=st.lists(st.builds(Alternate, texts, texts), max_size=2).map(tuple),
    revisit=st.none() | numbers,
    removed=st.booleans(),
    title=st.none() | texts,
    mobile=st.booleans(),
    robots=st.sampled_from([None, "allowed", "disallowed"]),
    source=st.sampled_from([None, "html"]),
)  # fmt: skip


def written(path: str, batch: list[UrlRecord]) -> str:
    """JSON Lines of ``batch`` on ``path`` (or the error's name: both must fail alike)."""
    with native.using("native" if path == "native" else "pure"):
        try:
            return jsonl_text(batch)
        except Exception as exc:
            return f"error {type(exc).__name__}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records, max_size=8))
def test_the_c_json_lines_writer_writes_the_references_text(batch: list[UrlRecord]) -> None:
    """Records of every field's odd values (NaN, infinities, -0.0, lone surrogates, control
    and line-separator characters, naive and offset dates, images, links): the C writer's
    text is the pure writer's, character for character."""
    assert written("native", batch) == written("pure", batch)


def test_the_c_json_lines_writer_on_real_records() -> None:
    """The records of every real sitemap (videos, news and PageMaps among them: the C
    writer hands those to json_line): the same text on both paths."""
    found = [p for p in shared_files(REALDATA / "files") if p.suffix == ".xml"]
    if not found:
        pytest.skip(missing_reason(REALDATA))
    for path in found:
        with native.using("pure"):
            got = parse(path.read_bytes(), "https://example.com/sitemap.xml", pagemaps=True)
        for i in range(0, len(got.urls), 500):
            batch = got.urls[i : i + 500]
            assert written("native", batch) == written("pure", batch), path


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3000).map(lambda n: f"https://e.com/{n}") | texts, max_size=3000))
def test_the_c_url_set_answers_as_the_reference(urls: list[str]) -> None:
    """The C dedupe table: the same answers to add and in, the same size and memory."""
    with native.using("pure"):
        reference = url_set()
    with native.using("native"):
        compiled = url_set()
    assert type(reference) is UrlSet and type(compiled) is not UrlSet
    assert [compiled.add(u) for u in urls] == [reference.add(u) for u in urls]
    assert len(compiled) == len(reference) and compiled.nbytes == reference.nbytes
    probes = [*urls[:50], "https://e.com/x", ""]
    assert [u in compiled for u in probes] == [u in reference for u in probes]
