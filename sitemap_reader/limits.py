"""Every bound sitemap-reader enforces, in one place, each with the reason for its default.

Lenient on content, strict on limits: a limit that is hit ends the affected sitemap
(or stops following children) with a recorded problem; it never ends the run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

KiB = 1024
MiB = 1024 * KiB

#: The sitemaps.org maximum number of URLs in one sitemap file (and entries in an index).
PROTOCOL_MAX_URLS = 50_000
#: The sitemaps.org maximum uncompressed size: 50 MB (52,428,800 bytes) since 2016.
PROTOCOL_MAX_BYTES = 52_428_800
#: sitemaps.org: a loc "must be less than 2,048 characters".
PROTOCOL_MAX_URL_LENGTH = 2_048


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on time, memory and fan-out. Every field can be overridden.

    >>> Limits().max_decompressed_bytes == 64 * MiB
    True
    >>> Limits(max_depth=3).max_depth
    3
    """

    # --- per body (parse core) ---
    #: Bytes after decompression per sitemap. The protocol allows 50 MB; 64 MiB leaves
    #: slack for real sites that overshoot, and bounds gzip bombs and endless bodies.
    max_decompressed_bytes: int = 64 * MiB
    #: gzip layers: double gzip (a .gz file served with Content-Encoding: gzip) is real,
    #: a third layer is an attack.
    max_gzip_layers: int = 2
    #: gzip members per layer: concatenated members are legal (and handled), but each one
    #: restarts the decoder; thousands of tiny members are a CPU attack (aiohttp CVE-2026-128131).
    max_gzip_members: int = 64
    #: URLs per sitemap; None means no count limit (the byte cap bounds it). Strict mode
    #: applies the protocol's 50,000 whatever this says.
    max_urls_per_sitemap: int | None = None
    #: Longest URL kept, in characters. The protocol says under 2,048; real sites exceed it,
    #: browsers accept far more; beyond 8 KiB it is junk or an attack on memory.
    max_url_length: int = 8 * KiB
    #: Characters of text gathered for one element (a loc, a title). Bounds memory when a
    #: document puts megabytes of text in one node; anything legitimate is far shorter.
    max_text_length: int = 64 * KiB
    #: Extension records kept per URL: Google allows 1,000 images per <url>.
    max_extensions_per_url: int = 1_000
    #: Raw bytes read from the wire per sitemap; None means twice
    #: ``max_decompressed_bytes`` (see :meth:`wire_cap`). The decompressed cap alone does
    #: not bound a gzip stream that yields nothing (empty deflate blocks) or endless NUL
    #: padding after a member: those were read until the timeout (~10 GB at 120 s).
    #: A real body is never much bigger on the wire than decompressed, so twice is slack.
    max_wire_bytes: int | None = None
    #: Bytes of one markup construct outside character data: a tag with its attributes,
    #: a comment, a processing instruction, a DOCTYPE or one of its declarations. The
    #: longest a real sitemap needs is a start tag with a few namespace declarations or an
    #: xhtml:link to an 8 KiB URL; 64 KiB is eight times that. The cap is also what keeps
    #: time linear: expat before 2.6 (Python 3.11 ships 2.5) rescans an unfinished token
    #: on every feed, so one 32 MiB attribute fed in 64 KiB pieces took ~55 s.
    max_xml_token: int = 64 * KiB
    #: Elements open at once. Sitemaps nest four deep (urlset, url, video:video,
    #: video:price), feeds with inline XHTML a few more; libxml2 refuses 256 by default.
    #: expat keeps every open element (~125 bytes each, 22 M from a 62 KB gzip of <a>).
    max_xml_depth: int = 100
    #: Distinct element and attribute names per document (and per DTD). The sitemap
    #: vocabulary with every extension is under 100 names, a feed with XHTML content a
    #: few hundred; expat, pyexpat and the reader each keep every distinct name, so a
    #: flood of <a1/><a2/>... grew them by gigabytes.
    max_xml_names: int = 2_000
    #: Characters of those distinct names together: 2,000 names of 32 characters. Bounds
    #: what a few long names (each up to the token cap) would cost.
    max_xml_name_chars: int = 64 * KiB
    #: Distinct namespace declarations (prefix and URI) per document. Real sitemaps use
    #: under ten; a declaration repeated on every element (PageMap's) counts once.
    max_xml_namespaces: int = 1_000

    # --- robots.txt ---
    #: RFC 9309 §2.5: crawlers must parse at least 500 KiB; Google stops there too.
    max_robots_bytes: int = 500 * KiB
    #: RFC 9309 §2.3.1.2: follow at least five consecutive redirects.
    max_robots_redirects: int = 5

    # --- traversal (crawl layer) ---
    #: Index nesting: the protocol defines one level; beyond 3 it is usually a trap.
    max_depth: int = 8
    #: Sitemaps fetched per target: bounds index fan-out bombs (trafilatura uses 10,000 too).
    max_sitemaps: int = 10_000
    #: URLs emitted per run; None is unbounded (the dedupe set is the only growing state).
    max_urls: int | None = None
    #: Redirects per sitemap fetch: aiohttp's default.
    max_redirects: int = 10

    # --- ranked output ---
    #: Records a ranked run keeps in memory; beyond it they spill to a temporary SQLite
    #: file and are sorted there. A record with its strings and datetime costs about
    #: 0.5 KiB in memory, so 100,000 is about 50 MiB; ``top=N`` needs only N.
    max_ranked_in_memory: int = 100_000

    # --- time ---
    #: Seconds to establish a connection.
    connect_timeout: float = 10.0
    #: Seconds without a single byte arriving before a read gives up.
    read_timeout: float = 30.0
    #: Seconds for one sitemap from request to last byte, retries excluded: slow bodies end.
    sitemap_timeout: float = 120.0
    #: Extra attempts after a retryable failure (408, 429, 5xx, reset, timeout).
    retries: int = 3
    #: Fresh fetches of a sitemap whose body was cut by a lost connection (a reset mid-body).
    #: The records already sent are dropped by the run's dedupe, so a retry costs only
    #: bandwidth; one rides out a transient reset without re-reading a flaky 50 MB file.
    body_retries: int = 1
    #: Sitemaps of one host that may fail in a row with a retryable status (429, 5xx) after
    #: all their retries before its further sitemaps get a single attempt each: a host
    #: in a 503 storm is not hammered, and the storm costs seconds instead of
    #: sitemaps x retries x backoff (minutes on a big site).
    max_host_storm_failures: int = 3
    #: Longest Retry-After we honour, in seconds; a longer one means give up now.
    max_retry_after: float = 60.0
    #: Base of the jittered exponential backoff, in seconds.
    backoff_base: float = 0.5
    #: Longest robots.txt ``Crawl-delay`` (or ``Request-rate`` interval) honoured between
    #: two sitemap fetches of one host, in seconds. Bing honours up to 30 s; beyond that
    #: a site of 1,000 sitemaps would take more than eight hours: the cap is reported.
    max_crawl_delay: float = 30.0

    # --- HTML sitemap pages (``html=``) ---
    #: Bytes of one HTML sitemap page (or home page read for its links). ``html.parser``
    #: is pure Python (~10-20 MB/s); real HTML sitemap pages are well under 1 MiB.
    max_html_bytes: int = 4 * MiB
    #: Links read from one HTML page. Google long advised "a reasonable number" of links
    #: per page (once: 100); large HTML sitemaps hold a few thousand.
    max_html_links: int = 10_000
    #: Levels of HTML sitemap pages: a page and the section pages it links (a page
    #: linking pages linking pages is a crawl, not a sitemap).
    max_html_depth: int = 2
    #: HTML sitemap pages read per site (home page and probes included): a page that
    #: links thousands of "sitemap" pages is a fan-out bomb; real ones have tens of
    #: sections (one per letter, per category).
    max_html_pages: int = 200
    #: Bytes html.parser may hold unparsed (one unfinished tag, comment or attribute):
    #: it rescans them on every feed, so an endless tag would cost quadratic time.
    max_html_token: int = 64 * KiB
    #: Records of a site's HTML sitemap pages held until its last page is read, so the
    #: links every page shares (a header, a footer) can be left out: about 0.5 KiB each.
    max_html_held: int = 100_000

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


#: :class:`~sitemap_reader.SitemapLoader`'s default ``buffer``, the records that may wait
#: unclaimed: a thousand pages keep a crawler of hundreds of fetches in flight busy, in a
#: few megabytes, whatever the size of the site.
LOADER_BUFFER = 1000
#: The loader's default ``max_tries``, hand-outs of a URL before it is given up: a passing
#: failure gets two more chances, a dead page does not come back forever.
LOADER_MAX_TRIES = 3
#: Seconds a loader waits for a progress file another loader is writing before it says so.
PROGRESS_BUSY_TIMEOUT = 10.0
