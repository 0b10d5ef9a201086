"""Every bound sitemap-reader enforces, in one place, each with the reason for its default.

Lenient on content, strict on limits: a limit that is hit ends the affected sitemap
(or stops following children) with a recorded problem; it never ends the run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sitemap_reader.options.declare import Declared, count, option, seconds

KiB = 1024
MiB = 1024 * KiB

#: The sitemaps.org maximum number of URLs in one sitemap file (and entries in an index).
PROTOCOL_MAX_URLS = 50_000
#: The sitemaps.org maximum uncompressed size: 50 MB (52,428,800 bytes) since 2016.
PROTOCOL_MAX_BYTES = 52_428_800
#: sitemaps.org: a loc "must be less than 2,048 characters".
PROTOCOL_MAX_URL_LENGTH = 2_048


#: Why most bounds are neither CLI flags nor Scrapy settings.
_PYTHON = "a bound for Python callers: Limits(...)"


@dataclass(frozen=True, slots=True)
class Limits(Declared):
    """Bounds on memory, fan-out and retries. Every field can be overridden (the time
    bounds are :class:`~sitemap_reader.options.Timeouts`).

    >>> Limits().max_decompressed_bytes == 64 * MiB
    True
    >>> Limits(max_depth=3).max_depth
    3
    """

    # --- per body (parse core) ---
    #: Bytes after decompression per sitemap. The protocol allows 50 MB; 64 MiB leaves
    #: slack for real sites that overshoot, and bounds gzip bombs and endless bodies.
    max_decompressed_bytes: int = option(
        64 * MiB, "bytes of one sitemap after decompression", convert=count(1)
    )
    #: gzip layers: double gzip (a .gz file served with Content-Encoding: gzip) is real,
    #: a third layer is an attack.
    max_gzip_layers: int = option(
        2, "gzip layers of one body", convert=count(1), cli=_PYTHON, scrapy=_PYTHON
    )
    #: gzip members per layer: concatenated members are legal (and handled), but each one
    #: restarts the decoder; thousands of tiny members are a CPU attack (aiohttp CVE-2026-128131).
    max_gzip_members: int = option(
        64, "gzip members per layer", convert=count(1), cli=_PYTHON, scrapy=_PYTHON
    )
    #: URLs per sitemap; None means no count limit (the byte cap bounds it). Strict mode
    #: applies the protocol's 50,000 whatever this says.
    max_urls_per_sitemap: int | None = option(
        None,
        "URLs kept per sitemap (strict: 50,000 whatever this says)",
        convert=count(1, optional=True),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Longest URL kept, in characters. The protocol says under 2,048; real sites exceed it,
    #: browsers accept far more; beyond 8 KiB it is junk or an attack on memory.
    max_url_length: int = option(
        8 * KiB, "characters of the longest URL kept", convert=count(1), cli=_PYTHON, scrapy=_PYTHON
    )
    #: Characters of text gathered for one element (a loc, a title). Bounds memory when a
    #: document puts megabytes of text in one node; anything legitimate is far shorter.
    max_text_length: int = option(
        64 * KiB,
        "characters of text gathered for one element",
        convert=count(1),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Extension records kept per URL: Google allows 1,000 images per <url>.
    max_extensions_per_url: int = option(
        1_000,
        "images, videos, alternates... kept per URL",
        convert=count(0),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Raw bytes read from the wire per sitemap; None means twice
    #: ``max_decompressed_bytes`` (see :meth:`wire_cap`). The decompressed cap alone does
    #: not bound a gzip stream that yields nothing (empty deflate blocks) or endless NUL
    #: padding after a member: those were read until the timeout (~10 GB at 120 s).
    #: A real body is never much bigger on the wire than decompressed, so twice is slack.
    max_wire_bytes: int | None = option(
        None,
        "raw bytes read per sitemap (none: twice max_decompressed_bytes)",
        convert=count(1, optional=True),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Bytes of one markup construct outside character data: a tag with its attributes,
    #: a comment, a processing instruction, a DOCTYPE or one of its declarations. The
    #: longest a real sitemap needs is a start tag with a few namespace declarations or an
    #: xhtml:link to an 8 KiB URL; 64 KiB is eight times that. The cap is also what keeps
    #: time linear: expat before 2.6 (Python 3.11 ships 2.5) rescans an unfinished token
    #: on every feed, so one 32 MiB attribute fed in 64 KiB pieces took ~55 s.
    max_xml_token: int = option(
        64 * KiB,
        "bytes of one markup construct (a tag with its attributes, a comment)",
        convert=count(1),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Elements open at once. Sitemaps nest four deep (urlset, url, video:video,
    #: video:price), feeds with inline XHTML a few more; libxml2 refuses 256 by default.
    #: expat keeps every open element (~125 bytes each, 22 M from a 62 KB gzip of <a>).
    max_xml_depth: int = option(
        100, "elements open at once", convert=count(1), cli=_PYTHON, scrapy=_PYTHON
    )
    #: Distinct element and attribute names per document (and per DTD). The sitemap
    #: vocabulary with every extension is under 100 names, a feed with XHTML content a
    #: few hundred; expat, pyexpat and the reader each keep every distinct name, so a
    #: flood of <a1/><a2/>... grew them by gigabytes.
    max_xml_names: int = option(
        2_000,
        "distinct element and attribute names per document",
        convert=count(1),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Characters of those distinct names together: 2,000 names of 32 characters. Bounds
    #: what a few long names (each up to the token cap) would cost.
    max_xml_name_chars: int = option(
        64 * KiB,
        "characters of those names together",
        convert=count(1),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Distinct namespace declarations (prefix and URI) per document. Real sitemaps use
    #: under ten; a declaration repeated on every element (PageMap's) counts once.
    max_xml_namespaces: int = option(
        1_000,
        "distinct namespace declarations per document",
        convert=count(1),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )

    # --- robots.txt ---
    #: RFC 9309 §2.5: crawlers must parse at least 500 KiB; Google stops there too.
    max_robots_bytes: int = option(
        500 * KiB, "bytes of robots.txt read", convert=count(1), cli=_PYTHON, scrapy=_PYTHON
    )
    #: RFC 9309 §2.3.1.2: follow at least five consecutive redirects.
    max_robots_redirects: int = option(
        5, "redirects followed for robots.txt", convert=count(0), cli=_PYTHON, scrapy=_PYTHON
    )

    # --- traversal (crawl layer) ---
    #: Index nesting: the protocol defines one level; beyond 3 it is usually a trap.
    max_depth: int = option(8, "levels of sitemap index nesting followed", convert=count(0))
    #: Sitemaps fetched per target: bounds index fan-out bombs (trafilatura uses 10,000 too).
    max_sitemaps: int = option(10_000, "sitemaps fetched per target", convert=count(1))
    #: Redirects per sitemap fetch: aiohttp's default.
    max_redirects: int = option(
        10, "redirects followed per sitemap fetch", convert=count(0), cli=_PYTHON, scrapy=_PYTHON
    )

    # --- ranked output ---
    #: Records a ranked run keeps in memory; beyond it they spill to a temporary SQLite
    #: file and are sorted there. A record with its strings and datetime costs about
    #: 0.5 KiB in memory, so 100,000 is about 50 MiB; ``top=N`` needs only N.
    max_ranked_in_memory: int = option(
        100_000,
        "records a ranked run keeps in memory before it spills to disk",
        convert=count(1),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )

    # --- retries and pacing ---
    #: Extra attempts after a retryable failure (408, 429, 5xx, reset, timeout).
    retries: int = option(
        3,
        "extra attempts after a retryable failure (408, 429, 5xx, reset, timeout)",
        convert=count(0),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Fresh fetches of a sitemap whose body was cut by a lost connection (a reset mid-body).
    #: The records already sent are dropped by the run's dedupe, so a retry costs only
    #: bandwidth; one rides out a transient reset without re-reading a flaky 50 MB file.
    body_retries: int = option(
        1,
        "fresh fetches of a sitemap whose body a lost connection cut",
        convert=count(0),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Sitemaps of one host that may fail in a row with a retryable status (429, 5xx) after
    #: all their retries before its further sitemaps get a single attempt each: a host
    #: in a 503 storm is not hammered, and the storm costs seconds instead of
    #: sitemaps x retries x backoff (minutes on a big site).
    max_host_storm_failures: int = option(
        3,
        "sitemaps of one host failing in a row before the rest get one attempt each",
        convert=count(1),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Longest Retry-After we honour, in seconds; a longer one means give up now.
    max_retry_after: float = option(
        60.0,
        "seconds of the longest Retry-After honoured",
        convert=seconds(zero=True),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Base of the jittered exponential backoff, in seconds.
    backoff_base: float = option(
        0.5,
        "seconds, base of the jittered exponential backoff",
        convert=seconds(zero=True),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Longest robots.txt ``Crawl-delay`` (or ``Request-rate`` interval) honoured between
    #: two sitemap fetches of one host, in seconds. Bing honours up to 30 s; beyond that
    #: a site of 1,000 sitemaps would take more than eight hours: the cap is reported.
    max_crawl_delay: float = option(
        30.0,
        "seconds of the longest robots.txt Crawl-delay honoured",
        convert=seconds(zero=True),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )

    # --- HTML sitemap pages (``html=``) ---
    #: Bytes of one HTML sitemap page (or home page read for its links). ``html.parser``
    #: is pure Python (~10-20 MB/s); real HTML sitemap pages are well under 1 MiB.
    max_html_bytes: int = option(
        4 * MiB, "bytes of one HTML sitemap page", convert=count(1), cli=_PYTHON, scrapy=_PYTHON
    )
    #: Links read from one HTML page. Google long advised "a reasonable number" of links
    #: per page (once: 100); large HTML sitemaps hold a few thousand.
    max_html_links: int = option(
        10_000, "links read from one HTML page", convert=count(0), cli=_PYTHON, scrapy=_PYTHON
    )
    #: Levels of HTML sitemap pages: a page and the section pages it links (a page
    #: linking pages linking pages is a crawl, not a sitemap).
    max_html_depth: int = option(
        2, "levels of HTML sitemap pages", convert=count(0), cli=_PYTHON, scrapy=_PYTHON
    )
    #: HTML sitemap pages read per site (home page and probes included): a page that
    #: links thousands of "sitemap" pages is a fan-out bomb; real ones have tens of
    #: sections (one per letter, per category).
    max_html_pages: int = option(
        200, "HTML sitemap pages read per site", convert=count(0), cli=_PYTHON, scrapy=_PYTHON
    )
    #: Bytes html.parser may hold unparsed (one unfinished tag, comment or attribute):
    #: it rescans them on every feed, so an endless tag would cost quadratic time.
    max_html_token: int = option(
        64 * KiB,
        "bytes html.parser may hold unparsed",
        convert=count(1),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )
    #: Records of a site's HTML sitemap pages held until its last page is read, so the
    #: links every page shares (a header, a footer) can be left out: about 0.5 KiB each.
    max_html_held: int = option(
        100_000,
        "records of HTML sitemap pages held until the site's last page",
        convert=count(0),
        cli=_PYTHON,
        scrapy=_PYTHON,
    )

    def wire_cap(self) -> int:
        """The raw bytes one sitemap may take from the wire (``max_wire_bytes`` resolved).

        >>> Limits(max_decompressed_bytes=1000).wire_cap()
        2000
        """
        if self.max_wire_bytes is not None:
            return self.max_wire_bytes
        return 2 * self.max_decompressed_bytes

    def replace(self, **changes: object) -> Limits:
        """A copy with some fields changed: ``limits.replace(max_depth=2)``."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


#: robots.txt responses the Scrapy add-on keeps at once to hand to the second party that
#: asks (RobotsTxtMiddleware or discovery): one per host; an evicted one costs a download.
MAX_SHARED_ROBOTS = 256


# --- the protocol checker (``check`` and ``report``: sitemap_reader.parse.checker) ---
# The checker reads what the reader reads, under the reader's own Limits (decompressed
# cap, gzip members, markup bounds); these are the few bounds of its own.
#: URLs remembered for the duplicate rule across one run: 8-byte hashes, about 100 bytes
#: each in a dict, so 2,000,000 is about 200 MB; past it, duplicates are no longer counted.
CHECK_MAX_TRACKED_URLS = 2_000_000
#: Bytes of one ``<loc>`` kept raw for the escaping rule: 32 times the protocol's longest
#: URL; a longer location has broken that rule already and only its text is checked.
CHECK_MAX_RAW_LOC = 64 * KiB
#: Seconds a lastmod may lie ahead of now before it counts as in the future: one day of
#: slack for clock skew and time zones written wrong.
CHECK_FUTURE_SLACK = 86_400
#: Occurrences ``check --examples N`` keeps per rule and file: enough to fix a file by,
#: while a file with a million bad dates still costs a bounded list.
CHECK_MAX_EXAMPLES = 1_000
#: Pages with hreflang alternates the report remembers to test reciprocity (each page's
#: URL and its alternates' URLs, about 300 bytes): 200,000 is about 60 MB; past it the
#: pages are still counted per language, and the report says reciprocity was sampled.
REPORT_MAX_HREFLANG_PAGES = 200_000
#: Example URLs the report shows per kind (robots-blocked, out of scope) and file: a
#: table a phone can show, enough to see the pattern.
REPORT_EXAMPLES = 5


#: :class:`~sitemap_reader.SitemapLoader`'s default ``buffer``, the records that may wait
#: unclaimed: a thousand pages keep a crawler of hundreds of fetches in flight busy, in a
#: few megabytes, whatever the size of the site.
LOADER_BUFFER = 1000
#: Records the loader reads ahead of its buffer and holds in memory (by site), so that the
#: records of a site read behind a big site's are reached while the big site's wait: the
#: reader's output channel holds 8 batches of at most 2,048 records (16,384), and a few
#: more sit with the sitemaps waiting to put theirs; twice that reaches past them. About
#: 16 MiB at 0.5 KiB a record, whatever the buffer.
LOADER_READ_AHEAD = 32_768
#: The loader's default ``max_tries``, hand-outs of a URL before it is given up: a passing
#: failure gets two more chances, a dead page does not come back forever.
LOADER_MAX_TRIES = 3
#: Seconds a loader waits for a progress file another loader is writing before it says so.
PROGRESS_BUSY_TIMEOUT = 10.0
