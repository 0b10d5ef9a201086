"""Differential check of the prototype: the C path and the pure-Python reference must give
identical records, problems, format, completeness and feed date, whatever the chunking.

Each chunking is compared with the reference fed the same chunks; where the reference
itself gives another result for another chunking (or its scanner and its element
handlers disagree), that is reported apart: those are the reference's own issues.

Bodies: every file of the real corpus (read in place), the synthetic 50k-URL shapes of
``benchmarks/parse.py`` (cut to ``--urls``), and hostile cases (DOCTYPE with an internal
subset, entity attacks, deep nesting, long tokens, name and namespace floods, CRLF,
non-UTF-8, CDATA, several locations, feeds). Each is fed whole in 64 KiB chunks, in
chunks of several odd sizes, and in random splits; each result is compared with the
reference fed in 64 KiB chunks.

Run: ``.venv/bin/python benchmarks/native/differential.py [--urls N] [--seed S] [--quick]``.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import random
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # the checkout (run as a script)

from benchmarks.native import proto  # noqa: E402
from sitemap_reader.options.limits import Limits  # noqa: E402
from sitemap_reader.parse import normalize, scan  # noqa: E402
from sitemap_reader.parse.amp import AmpFixer  # noqa: E402
from sitemap_reader.parse.parser import SitemapParser  # noqa: E402

REALDATA = HERE.parent.parent.parent / "shared" / "realdata" / "files"
NOW = datetime(2025, 6, 1, tzinfo=UTC)
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
SMALL = Limits(
    max_xml_token=1024, max_xml_depth=20, max_xml_names=50, max_xml_name_chars=600,
    max_xml_namespaces=5, max_text_length=300, max_url_length=200, max_extensions_per_url=3,
)  # fmt: skip


def bench_parse() -> Any:
    """benchmarks/parse.py as a module (its name would shadow nothing when loaded so)."""
    spec = importlib.util.spec_from_file_location("bench_parse", HERE.parent / "parse.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_parse"] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def hostile() -> Iterator[tuple[str, bytes, Limits | None]]:
    """(name, body, limits) of the hostile and odd cases."""
    head = f'<?xml version="1.0"?>\n<urlset xmlns="{NS}">'
    url = "<url><loc>https://example.com/{0}</loc><lastmod>2024-01-0{1}</lastmod></url>"
    good = "".join(url.format(i, i % 9 + 1) for i in range(40))
    doc = head + good + "</urlset>"
    lol = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10 if i else "lol"}">' for i in range(10))
    ext = '<!ENTITY x SYSTEM "file:///etc/hostname">'
    param = '<!ENTITY % p SYSTEM "http://127.0.0.1:1/x">%p;'
    comments = ("<!--" + "c" * 3000 + "-->") * 3
    pagemap = (
        '<url><loc>https://e.com/p</loc><PageMap xmlns="http://www.google.com/schemas/'
        'sitemap-pagemap/1.0"><DataObject type="d" id="1"><Attribute name="a">v</Attribute>'
        "</DataObject></PageMap></url>"
    )
    rss = (
        '<rss version="2.0"><channel><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate>'
        "<item><link>https://e.com/1</link><title>T</title><pubDate>bad</pubDate></item>"
        "<item><guid>https://e.com/2</guid></item></channel></rss>"
    )
    atom = (
        '<feed xmlns="http://www.w3.org/2005/Atom"><updated>2024-01-01T00:00:00Z</updated>'
        '<entry><link rel="alternate" href="https://e.com/a"/>'
        "<published>2023-01-01T00:00:00Z</published></entry></feed>"
    )
    unicode_space = (
        "<url><loc>\u00a0https://e.com/\u00e9\u3000</loc><changefreq> Daily</changefreq>"
        "<priority>.5</priority></url>"
    )
    two_locs = (
        "<url><loc>https://e.com/1</loc><lastmod>2024</lastmod><loc>https://e.com/2</loc>"
        "<priority>0.3</priority></url>"
    )
    latin1 = '<?xml version="1.0" encoding="iso-8859-1"?>' + head[21:]
    ext_head = (
        f'<urlset xmlns="{NS}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" '
        'xmlns:xhtml="http://www.w3.org/1999/xhtml">'
    )
    img = "<image:image><image:loc>{0}</image:loc>{1}</image:image>"
    link = '<xhtml:link rel="{0}" hreflang="{1}" href="{2}"/>'
    images = "".join(
        f"<url><loc>https://e.com/{i}</loc>"
        + img.format(f"https://e.com/i{i}.jpg", "")
        + img.format(f"HTTPS://E.com/i{i}b.jpg", f"<image:title> T  {i} </image:title>")
        + img.format("", "<image:caption>c</image:caption>")
        + img.format(f"https://e.com/i{i}c.jpg", '<image:license a="1">l</image:license>')
        + img.format(f"https://e.com/i{i}d.jpg", "<image:tag>x</image:tag><image:tag>y</image:tag>")
        + link.format("alternate", "de", f"https://e.com/de/{i}")
        + link.format("Alternate", "fr", f"https://e.com/fr/{i}")
        + link.format("alternate", " es ", f"https://E.com/es/{i}")
        + link.format("alternate", "", f"https://e.com/x/{i}")
        + link.format("nofollow", "it", f"https://e.com/it/{i}")
        + link.format("alternate", "\u00e9", f"https://e.com/e/{i}")
        + "</url>"
        for i in range(12)
    )
    text_cases: list[tuple[str, str, Limits | None]] = [
        ("doctype-no-subset", f'<!DOCTYPE urlset SYSTEM "x.dtd">{doc}', None),
        ("doctype-subset", f"<!DOCTYPE urlset [<!ELEMENT urlset ANY>]>{doc}", None),
        ("billion-laughs", f"<!DOCTYPE urlset [{lol}]>{head}<url><loc>&l9;</loc></url></urlset>",
         None),
        ("xxe", f"<!DOCTYPE urlset [{ext}]>{head}<url><loc>&x;</loc></url></urlset>", None),
        ("param-entity", f"<!DOCTYPE urlset [{param}]>{head}</urlset>", None),
        ("subset-after-comments", f"{comments}<!DOCTYPE urlset [<!ENTITY a 'b'>]>{doc}", None),
        ("deep", head + "<url>" + "<x>" * 30 + "</x>" * 30 + "<loc>https://e.com/</loc></url>"
         "</urlset>", SMALL),
        ("long-tag", head + good + '<url a="' + "v" * 5000 + '"/>' + good + "</urlset>", SMALL),
        ("long-comment", head + good + "<!--" + "c" * 5000 + "-->" + good + "</urlset>", SMALL),
        ("long-text", head + good + "<url><loc>https://e.com/" + "a" * 5000 + "</loc></url>"
         + good + "</urlset>", SMALL),
        ("name-flood", head + "".join(f"<n{i}/>" for i in range(400)) + good + "</urlset>",
         SMALL),
        ("attr-name-flood", head + "".join(f'<u a{i}="1"/>' for i in range(400)) + good
         + "</urlset>", SMALL),
        ("ns-flood", head + "".join(f'<u xmlns:p{i}="urn:{i}"/>' for i in range(40)) + good
         + "</urlset>", SMALL),
        ("crlf", head + good.replace("><", ">\r\n<") + "</urlset>", None),
        ("cr", head + good.replace("><", ">\r<") + "\r\n</urlset>", None),
        ("cdata", head + "<url><loc><![CDATA[https://e.com/a?b=1&c=2]]></loc></url></urlset>",
         None),
        ("stray-amp", head + "<url><loc>https://e.com/a?b=1&c=2&nbsp;</loc></url></urlset>",
         None),
        ("two-locs", head + two_locs + "</urlset>", None),
        ("bare-text", f'<sitemapindex xmlns="{NS}"><sitemap> https://e.com/s.xml </sitemap>'
         "</sitemapindex>", None),
        ("nested-in-loc", head + "<url><loc>https://e.com/<b>x</b>y</loc></url></urlset>", None),
        ("unicode-space", head + unicode_space + "</urlset>", None),
        ("broken", head + good + "<url><loc>https://e.com/x</loc><lastmod>20", None),
        ("broken-mid-loc", head + good + "<url><loc>https://e.com/x", None),
        ("syntax-error", head + good + "<url><loc>a</loc></urll>" + good, None),
        ("wrong-ns", '<urlset xmlns="urn:x">' + good + "</urlset>", None),
        ("pagemap-nested-ns", head + pagemap + "</urlset>", None),
        ("rss", rss, None),
        ("atom", atom, None),
        ("html-root", "<html><body>x</body></html>", None),
        ("limit-urls", doc, Limits(max_urls_per_sitemap=7)),
        ("epilog-junk", doc + "h-produktov-ukhoda/</loc><lastmod>2017", None),
        ("epilog-long-junk", doc + "x" * 20000 + "/y", None),
        ("epilog-comment", doc + "<!-- c -->\n<?pi x?>\n", None),
        ("extensions", ext_head + images + "</urlset>", None),
        ("extensions-capped", ext_head + images + "</urlset>", SMALL),
        ("extension-cut", ext_head + images[:5000], None),
        ("image-text-too-long", ext_head + "<url><loc>https://e.com/</loc>"
         + img.format("https://e.com/" + "i" * 400, "") + "</url></urlset>", SMALL),
    ]  # fmt: skip
    for name, text, limits in text_cases:
        yield name, text.encode(), limits
    lines = [
        "https://e.com/a", "  HTTPS://E.com/b  ", "http://e.com/c\r", "www.example.com/d",
        "junk line", "", "   ", "\fhttps://e.com/e\v", "https://e.com/é", "https://e.com/\x7f",
        "https://" + "x" * 900, "ftp://e.com/f", "example.de", "\u00a0https://e.com/g",
        "https://e.com/h?a=1&b=2", "Http://e.com/i", "https:/e.com/j",
    ]  # fmt: skip
    text_body = "".join(
        rng_line + rng_end
        for rng_line, rng_end in zip(lines * 40, ["\n", "\r\n", "\r", "\n\n"] * 170, strict=False)
    )
    yield "text", text_body.encode(), None
    yield "text-small", text_body.encode(), SMALL
    latin = latin1 + "<url><loc>https://e.com/caf\xe9</loc></url></urlset>"
    yield "latin1", latin.encode("latin-1"), None
    yield "gzip", gzip.compress(doc.encode()), None
    yield "gzip-truncated", gzip.compress(doc.encode())[:-30], None


def field_checks(seed: int, count: int) -> int:
    """The C fast paths alone against the reference's functions on random inputs; the
    number of disagreements (each printed)."""
    rng = random.Random(seed)
    core = proto.core
    bad = 0
    url_parts = ["http://", "https://", "HTTP://", "a", "z", "0", "_", "-", ".", "/", "/.", "%",
                 "%2F", "%2f", "%41", "%7E", "%C3%A9", "%3C", "%20", "%60", "%7B", "?", "#",
                 ":", ":80/", ":443/", ":8080", ":0", ":59999", ":60000", "@", "&", "=", "é",
                 " ", "~", "!", "'", "[", "\\", "|"]  # fmt: skip
    for _ in range(count):
        url = "".join(rng.choice(url_parts) for _ in range(rng.randint(1, 14)))
        if rng.random() < 0.5:
            url = rng.choice(["http://", "https://"]) + rng.choice(["e.com", "a-b.c_d"]) + url
        want = normalize.fast_url_match(url) is not None and "/." not in url
        if core.url_normal(url) != want:
            bad += 1
            print(f"url_normal({url!r}) != {want}")
    date_parts = ["2024", "-", "01", "12", "13", "00", "29", "02", "T", " ", "t", ":", "23", "24",
                  "59", "60", ".", "5", "123456", "1234567", "Z", "z", "+", "-", "05:30", "0001",
                  "9999", "+24:00", "x", ",5"]  # fmt: skip
    for _ in range(count):
        text = "".join(rng.choice(date_parts) for _ in range(rng.randint(1, 12)))
        if rng.random() < 0.5:
            text = f"{rng.randint(1, 9999):04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 32):02d}"
            text += "".join(rng.choice(date_parts) for _ in range(rng.randint(0, 8)))
        got = core.lastmod(text)
        if got is not NotImplemented and got != normalize.parse_lastmod(text):
            bad += 1
            print(f"lastmod({text!r}): {got!r} != {normalize.parse_lastmod(text)!r}")
    soup = [b"&", b"amp;", b"lt;", b"#38;", b"<![CDATA[", b"]]>", b"<", b"!", b"[", b"a", b"&#"]
    for _ in range(count):
        data = b"".join(rng.choice(soup) for _ in range(rng.randint(0, 12)))
        fixer = AmpFixer()
        if core.amp_clean(data) and (fixer._fix(data) != data or fixer._in_cdata):
            bad += 1
            print(f"amp_clean({data!r}) but the fixer changes it")
    return bad


def splits(body: bytes, rng: random.Random, quick: bool) -> Iterator[tuple[str, list[bytes]]]:
    """Ways to cut ``body`` into chunks."""
    sizes = (65536, 4096, 997) if quick else (65536, 8192, 4096, 997, 61, 7)
    for size in sizes:
        if size < 100 and len(body) > 400_000:
            continue  # byte-sized chunks of big files: minutes, nothing new
        yield f"{size}", [body[i : i + size] for i in range(0, len(body), size)]
    cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, 40))) if len(body) > 1 else []
    yield "random", [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def run(factory: Callable[[], SitemapParser], chunks: list[bytes]) -> tuple[Any, ...]:
    """Everything a parse says, for comparison."""
    parser = factory()
    items: list[Any] = []
    grouping = []  # how many items each feed() and close() handed out
    for chunk in chunks:
        got = parser.feed(chunk)
        items.extend(got)
        grouping.append(len(got))
        if parser.done:
            break
    items.extend(last := parser.close())
    grouping.append(len(last))
    return (items, parser.problems, parser.format, parser.complete, parser.lastmod,
            parser.url_count, grouping)  # fmt: skip


def describe(a: tuple[Any, ...], b: tuple[Any, ...]) -> str:
    """The first difference between two results."""
    names = ("items", "problems", "format", "complete", "lastmod", "count", "grouping")
    for name, x, y in zip(names, a, b, strict=True):
        if x != y:
            if name == "items":
                for i, (p, q) in enumerate(zip(x, y, strict=False)):
                    if p != q:
                        return f"item {i}: {p!r}\n  != {q!r}"
                return f"{len(x)} items != {len(y)}"
            return f"{name}: {x!r}\n  != {y!r}"
    return "equal"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--urls", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    bodies: list[tuple[str, bytes, Limits | None]] = []
    if REALDATA.is_dir():
        bodies += [(p.name, p.read_bytes(), None) for p in sorted(REALDATA.iterdir())]
    bench = bench_parse()
    bodies += [(f"synthetic-{s}", bench.make_sitemap(args.urls, s), None) for s in bench.SHAPES]
    bodies += list(hostile())
    url = "https://example.com/sitemap.xml"
    failures = checked = 0
    disagree: set[str] = set()
    dependent: dict[str, list[str]] = {}
    first: tuple[Any, ...] = ()
    for name, body, limits in bodies:

        def reference(limits: Limits | None = limits) -> SitemapParser:
            return SitemapParser(url, limits=limits, now=NOW)

        def native(limits: Limits | None = limits) -> SitemapParser:
            made: SitemapParser = proto.NativeSitemapParser(url, limits=limits, now=NOW)
            return made

        whole = [body[i : i + 65536] for i in range(0, len(body), 65536)]
        for how, chunks in [("65536", whole), *splits(body, rng, args.quick)]:
            # the same chunks for both (the reference's own dependence on them aside)
            expected = run(reference, chunks)
            scan.ENABLED = False  # the reference's element handlers alone
            plain = run(reference, chunks)
            scan.ENABLED = True
            if plain != expected:  # the reference's own paths disagree: use the plain one
                disagree.add(name)
                expected = plain
            if how == "65536":
                first = expected
            elif expected[:-1] != first[:-1]:  # (the grouping differs by construction)
                dependent.setdefault(name, []).append(how)
            got = run(native, chunks)
            checked += 1
            if got != expected:
                failures += 1
                print(f"DIFF {name} [{how}]: {describe(expected, got)}")
    for name in sorted(disagree):
        print(f"reference: scanner on/off disagree on {name}")
    for name, hows in sorted(dependent.items()):
        print(f"reference: result depends on the chunking on {name} ({', '.join(hows)})")
    print(f"{checked} runs over {len(bodies)} bodies, {failures} different")
    fields = field_checks(args.seed, 20_000 if args.quick else 200_000)
    print(f"field fast paths: {fields} disagreements")
    failures += fields
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
