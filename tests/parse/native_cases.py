"""The hostile and odd bodies the two parser paths are compared on (tests/parse/test_native.py
and benchmarks/native/fuzz_native.py): DOCTYPE with and without an internal subset, entity
attacks, deep nesting, long tokens, name and namespace floods, line ends, non-UTF-8, CDATA,
stray ampersands, several locations, feeds, PageMaps, images and links of every shape,
junk after the root, text sitemaps with every kind of line, gzip whole and truncated.
Each comes with the limits it is read under (None: the defaults; SMALL reaches every
markup bound)."""

from __future__ import annotations

import gzip
from collections.abc import Iterator

from sitemap_reader.options.limits import Limits

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
SMALL = Limits(
    max_xml_token=1024, max_xml_depth=20, max_xml_names=50, max_xml_name_chars=600,
    max_xml_namespaces=5, max_text_length=300, max_url_length=200, max_extensions_per_url=3,
)  # fmt: skip


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
        ("text-at-cap-after-blanks", head + good.replace("<url>", "<url>\n  ")
         + "<url>\n  <loc>https://e.com/" + "a" * 286 + "</loc></url></urlset>", SMALL),
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
    yield "gzip", gzip.compress(doc.encode(), mtime=0), None
    yield "gzip-truncated", gzip.compress(doc.encode(), mtime=0)[:-30], None
