"""HTML sitemap pages: the links of a page written for people, read like a sitemap body.

Theory of operation
-------------------
:class:`HtmlLinks` has the shape of a :class:`~sitemap_reader.parse.SitemapParser`
(``feed(bytes)`` / ``close()`` give items, ``format``, ``problems``, ``complete``), so
the discovery core drives an HTML page exactly like a sitemap body. Bytes are decoded
incrementally (the Content-Type charset, else a ``<meta charset>`` near the start, else
UTF-8, bad bytes replaced) and fed to the standard library's ``html.parser``, which is
lenient with any markup and keeps no tree: the only state kept is the ``<base href>``,
the open navigation containers (a count per container, not a stack of elements) and the
text of the link being read.

Each ``<a href>`` / ``<area href>`` is resolved against the page (or its ``<base>``),
normalized (fragments go), and then, in order:

* not http(s) (``javascript:``, ``data:``, ``mailto:``...): dropped, counted;
* ``rel="nofollow"``: dropped, counted;
* the page itself (under any spelling): dropped;
* inside ``<nav>``, ``<header>``, ``<footer>`` or an element with ``role`` navigation /
  banner / contentinfo, or one of the navigation links the site's other pages showed
  (``navigation``, shared by the pages of one site): dropped, counted, and remembered
  as navigation;
* a link on the page's own host whose path names a site map (:func:`names_sitemap_path`)
  is a section page of the sitemap: a :class:`~sitemap_reader.records.SitemapRef`;
* anything else is a page: a record (``source="html"``, ``sitemap`` the page).

A *home* page (``mode="home"``) gives only the links that name a site map in their text
or path (:func:`names_sitemap`), as refs, and teaches ``navigation``.

Bounds (:class:`~sitemap_reader.options.limits.Limits`): ``max_html_bytes`` decoded input,
``max_html_links`` links, ``max_html_token`` bytes html.parser may hold unfinished (it
rescans them at every feed). A bound that is hit ends the page with a fatal problem;
what came before is kept. What no link can be in is not held: the text of a long inline
script or style and the middle of a long comment are dropped as they come, so a browser's
reading and ours agree past them. A declared charset that does not read ASCII markup as
itself (UTF-16 on ASCII bytes, ``idna``) is a lie; such a page is read as UTF-8.
"""

from __future__ import annotations

import codecs
import re
from html.parser import HTMLParser
from typing import Final
from urllib.parse import unquote, urljoin, urlsplit

from sitemap_reader.options.limits import Limits
from sitemap_reader.parse import sniff
from sitemap_reader.parse.normalize import normalize_url
from sitemap_reader.parse.parser import Item
from sitemap_reader.records import Problem, RecordBuilder, SitemapRef

#: How people name a site map, in the common languages, as :func:`_words` folds them
#: (lower case, ``-``, ``_``, ``.`` and ``/`` as spaces). A link whose text contains one,
#: or a path segment that starts with one, names a site map.
SITEMAP_WORDS: Final = (
    "sitemap",  # English, and the usual file name in every language
    "site map",
    "plan du site",  # French
    "plan site",
    "carte du site",
    "mapa del sitio",  # Spanish
    "mapa do site",  # Portuguese
    "mapa do sítio",
    "mapa web",
    "mappa del sito",  # Italian
    "mappa sito",
    "sitemappe",  # Norwegian, Danish
    "seitenübersicht",  # German
    "mapa strony",  # Polish
    "mapa stránek",  # Czech
    "карта сайта",  # Russian
    "网站地图",  # Chinese
    "網站地圖",
    "サイトマップ",  # Japanese
    "사이트맵",  # Korean
    "خريطة الموقع",  # Arabic
)
#: Paths probed for an HTML sitemap page when the home page links none, in this order.
HTML_SITEMAP_PATHS: Final = (
    "/sitemap.html",
    "/sitemap.htm",
    "/sitemap",
    "/site-map",
    "/plan-du-site",
    "/mapa-del-sitio",
)
#: Elements (and ``role`` values) that hold a page's navigation, not its content.
_NAV_TAGS: Final = frozenset({"nav", "header", "footer"})
_NAV_ROLES: Final = frozenset({"navigation", "banner", "contentinfo"})
#: Nested navigation containers tracked; deeper ones count as the one that holds them.
_MAX_NAV_NESTING: Final = 100
#: Characters of link text kept to look for a site-map word.
_MAX_LINK_TEXT: Final = 256
#: Paths that are files of another kind: a link to them is no HTML sitemap page.
_NOT_PAGES: Final = (".xml", ".gz", ".txt", ".rss", ".atom", ".pdf", ".jpg", ".png", ".zip")
_FOLD: Final = re.compile(r"[\s\-_./]+")
_META_CHARSET: Final = re.compile(
    rb"<meta[^>]{0,200}?charset\s*=\s*[\"']?([A-Za-z0-9_\-:.]{1,40})", re.I
)
_CT_CHARSET: Final = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9_\-:.]{1,40})", re.I)
#: Unread text of an unfinished script, style or comment is dropped once html.parser holds
#: more than this, all but its last characters (a closing tag split between two feeds).
_SHED_FROM: Final = 4096
_SHED_TAIL: Final = 1024
# The page's text goes to html.parser in blocks of this many characters, cut at fixed
# offsets of the text (the last one shorter): the parser's state, what it sheds and the
# token bound checked after each block then follow the text, never how it arrived.
_BLOCK: Final = 4096
#: Markup every charset a page may truly be in reads as itself: a declared charset that
#: reads it otherwise (UTF-16 or UTF-32 on ASCII bytes, ``idna``, ``punycode``, UTF-7) is
#: a lie, and the page is read as UTF-8, as browsers do with such a ``<meta>``.
_ASCII_PROBE: Final = b'<a href="/a+b-c_d.e?f=1&amp;g#h">x</a>\n'

#: The format an HTML page reports (the tree's ``format``).
HTML_FORMAT: Final = "html"


def _words(text: str) -> str:
    return " " + _FOLD.sub(" ", text.lower()).strip() + " "


def names_sitemap(text: str) -> bool:
    """True when ``text`` (a link's text) names a site map in one of :data:`SITEMAP_WORDS`.

    >>> names_sitemap("Plan du site"), names_sitemap("サイトマップ"), names_sitemap("Contact")
    (True, True, False)
    """
    folded = _words(text)
    return any(word in folded for word in SITEMAP_WORDS)


def _segment_start(boundary: str, inner: str) -> re.Pattern[str]:
    """A site-map word at the start of a segment: after the text's start or a segment
    ``boundary`` and any separators :func:`_words` folds; the spaces of a word match the
    separators one segment may hold (``inner``)."""
    words = "|".join(inner.join(map(re.escape, word.split())) for word in SITEMAP_WORDS)
    return re.compile(rf"(?:^|{boundary})[\s\-_./]*(?:{words})")


# One search a path (or query) instead of folding each segment once per word: a link of
# 2,000 segments cost 42,000 folds, and a page of such links ten seconds.
_PATH_WORD: Final = _segment_start("/", r"[\s\-_.]+")
_QUERY_WORD: Final = _segment_start("&", r"[\s\-_./]+")


def names_sitemap_path(url: str) -> bool:
    """True when a segment of the URL's path (or its query) starts with a site-map word,
    and the path is not a file of another kind (``/sitemap.xml``).

    >>> names_sitemap_path("https://e.com/plan-du-site/produits"), names_sitemap_path("https://e.com/blog/my-sitemap")
    (True, False)
    """
    parts = urlsplit(url)
    path = unquote(parts.path).lower()
    if path.endswith(_NOT_PAGES):
        return False
    return bool(_PATH_WORD.search(path) or _QUERY_WORD.search(unquote(parts.query).lower()))


def _reads_markup(name: str) -> str:
    """The codec named ``name`` when it is a text encoding whose incremental decoder
    (replacing bad bytes, as the page is read) reads ASCII markup as itself
    (:data:`_ASCII_PROBE`), else ``utf-8``. ``idna`` fails here: it replaces nothing."""
    try:
        info = codecs.lookup(name)
        decoder = codecs.getincrementaldecoder(info.name)(errors="replace")
        if getattr(info, "_is_text_encoding", True) and (
            decoder.decode(_ASCII_PROBE, final=True) == _ASCII_PROBE.decode("ascii")
        ):
            return info.name
    except (LookupError, UnicodeError, ValueError, TypeError):
        pass
    return "utf-8"


def html_sitemap_urls(home: str) -> list[str]:
    """:data:`HTML_SITEMAP_PATHS` on the origin of ``home``."""
    return [urljoin(home, path) for path in HTML_SITEMAP_PATHS]


class _Tags(HTMLParser):
    """html.parser's callbacks, handed to the :class:`HtmlLinks` that owns it."""

    def __init__(self, owner: HtmlLinks) -> None:
        super().__init__(convert_charrefs=True)
        self._owner = owner

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._owner.start(tag, attrs)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._owner.start(tag, attrs)
        self._owner.end(tag)

    def handle_endtag(self, tag: str) -> None:
        self._owner.end(tag)

    def handle_data(self, data: str) -> None:
        self._owner.text(data)

    def shed(self) -> None:
        """Drop what html.parser holds unread that no link can be in: the text of an
        unfinished ``<script>`` or ``<style>`` and the middle of an unfinished comment
        (their tails stay, where the closing tag may be arriving). A browser reads past
        both; held, a 300 KB inline script tripped ``max_html_token`` and cost every link
        after it, and each feed searched it again for its end."""
        raw = self.rawdata
        if len(raw) <= _SHED_FROM:
            return
        if self.cdata_elem is not None:
            self.rawdata = raw[-_SHED_TAIL:]
        elif raw.startswith("<!--"):
            self.rawdata = "<!--" + raw[-_SHED_TAIL:]


class _Link:
    """A link being read (its text is gathered until it closes)."""

    __slots__ = ("nav", "text", "url")

    def __init__(self, url: str, text: str, nav: bool) -> None:
        self.url, self.text, self.nav = url, text, nav


class HtmlLinks:
    """The links of one HTML page (see the module docstring).

    >>> from sitemap_reader.records import UrlRecord
    >>> def build(url, *rest): return UrlRecord(url, sitemap=rest[3])
    >>> page = HtmlLinks("https://e.com/plan-du-site", None, limits=Limits(), build=build)
    >>> items = page.feed(b'<nav><a href="/contact">C</a></nav><a href="/a#x">A</a>')
    >>> [i.url for i in items + page.close()]
    ['https://e.com/a']
    """

    def __init__(
        self,
        url: str,
        content_type: str | None,
        *,
        limits: Limits,
        build: RecordBuilder,
        mode: str = "page",
        navigation: set[str] | None = None,
        links: set[str] | None = None,
    ) -> None:
        self.limits = limits
        self.url = url
        self.self_url = normalize_url(url) or url
        self.host = (urlsplit(self.self_url).hostname or "").lower()
        self.mode = mode
        #: Navigation links of the site (shared by its pages: read and taught here).
        self.navigation: set[str] = navigation if navigation is not None else set()
        #: Every page link of this page (records, whether new to the run or not).
        self.links: set[str] = links if links is not None else set()
        self.done = False
        self.complete = False
        self.bytes_out = 0
        self._build = build
        self._base = url
        self._based = False
        self._ctype = content_type
        self._decoder: codecs.IncrementalDecoder | None = None
        self._head = b""  # the body's start, prolog stripped, until it says what it is
        self._text = ""  # decoded text short of a whole block
        self._format: str | None = None
        self._tags = _Tags(self)
        self._nav: list[tuple[str, int]] = []  # (container tag, how many are open)
        self._link: _Link | None = None
        self._links = 0
        self._items: list[Item] = []
        self._problems: dict[str, Problem] = {}

    # -- the BodyParser face -------------------------------------------------------------

    @property
    def format(self) -> str:
        """``html`` once the body is known to be markup, ``unknown`` otherwise."""
        return self._format or "unknown"

    @property
    def problems(self) -> list[Problem]:
        return list(self._problems.values())

    def feed(self, data: bytes) -> list[Item]:
        """Read more of the body; the items its links gave so far."""
        if self.done or not data:
            return self._take()
        cap = self.limits.max_html_bytes
        over = len(data) > cap - self.bytes_out
        if over:
            data = data[: cap - self.bytes_out]
        self.bytes_out += len(data)
        decoder = self._decoder
        if decoder is None:
            self._head = sniff.strip_prolog(self._head + data)
            if len(self._head) < sniff.SNIFF_BYTES and not over:
                return self._take()
            decoder = self._start(self._head)
            data, self._head = self._head, b""
        if decoder is not None and self._format == HTML_FORMAT:
            self._read(decoder.decode(data), final=over)  # at the cap: what came before it
        if over and not self.done:
            self._fatal("limit-html-bytes", f"page longer than {cap:,} bytes: rest ignored")
        return self._take()

    def close(self) -> list[Item]:
        """End of body: the last items; ``complete`` unless a bound or the body broke."""
        if self._decoder is None and self._format is None:
            decoder = self._start(self._head)
            if decoder is not None and self._format == HTML_FORMAT:
                self._read(decoder.decode(self._head))
        if self._format == HTML_FORMAT and not self.done and self._decoder is not None:
            self._read(self._decoder.decode(b"", final=True), final=True)
            self._tags.close()
            self._end_link()
        if not self.done:
            self.complete = self._format == HTML_FORMAT
        self.done = True
        return self._take()

    # -- decoding ------------------------------------------------------------------------

    def _start(self, head: bytes) -> codecs.IncrementalDecoder | None:
        """Decide on the body's first bytes: markup (decode it) or not a page at all."""
        start = sniff.strip_prolog(head)
        if not start.startswith(b"<") or sniff.classify(start, True) not in (sniff.HTML, sniff.XML):
            self._format = "unknown"
            self._fatal("not-html", "not an HTML page")
            return None
        self._format = HTML_FORMAT
        self._decoder = codecs.getincrementaldecoder(self._charset(head))(errors="replace")
        return self._decoder

    def _charset(self, head: bytes) -> str:
        found = _CT_CHARSET.search(self._ctype or "")
        name = found.group(1) if found else None
        if name is None:
            meta = _META_CHARSET.search(head[: sniff.SNIFF_BYTES])
            name = meta.group(1).decode("ascii") if meta else None
        return _reads_markup(name) if name else "utf-8"

    def _read(self, text: str, *, final: bool = False) -> None:
        """The page's text to html.parser, block by block (see :data:`_BLOCK`); with
        ``final``, the last short block too."""
        pending = self._text + text
        whole = len(pending) if final else len(pending) - len(pending) % _BLOCK
        self._text = pending[whole:]
        tags, cap = self._tags, self.limits.max_html_token
        for start in range(0, whole, _BLOCK):
            if self.done:
                return
            tags.feed(pending[start : start + _BLOCK])
            tags.shed()
            if len(tags.rawdata) > cap and not self.done:
                self._fatal("limit-html-token", f"one unfinished tag or comment over {cap:,} bytes")

    # -- html.parser's events --------------------------------------------------------------

    def start(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.done:
            return
        nav = self._nav
        if nav and nav[-1][0] == tag:
            nav[-1] = (tag, nav[-1][1] + 1)
        elif len(nav) < _MAX_NAV_NESTING and (
            tag in _NAV_TAGS or _attr(attrs, "role") in _NAV_ROLES
        ):
            nav.append((tag, 1))
        if tag == "base" and not self._based:
            self._based = True
            href = _attr(attrs, "href")
            base = urljoin(self.url, href.strip()) if href else None
            if base is not None and base.startswith(("http://", "https://")):
                self._base = base
        elif tag in ("a", "area"):
            self._end_link()
            self._open_link(tag, attrs)

    def end(self, tag: str) -> None:
        if self.done:
            return
        if tag == "a":
            self._end_link()
        nav = self._nav
        if nav and nav[-1][0] == tag:
            count = nav[-1][1] - 1
            if count:
                nav[-1] = (tag, count)
            else:
                nav.pop()

    def text(self, data: str) -> None:
        link = self._link
        if link is not None and len(link.text) < _MAX_LINK_TEXT:
            link.text += data[: _MAX_LINK_TEXT - len(link.text)]

    # -- links -----------------------------------------------------------------------------

    def _open_link(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = _attr(attrs, "href")
        if href is None:
            return
        self._links += 1
        if self._links > self.limits.max_html_links:
            self._fatal("limit-html-links", f"more than {self.limits.max_html_links:,} links")
            return
        href = href.strip()
        if not href or href.startswith("#"):  # this page itself (an in-page anchor)
            return
        url = normalize_url(href, self._base)
        if url is None:
            self._count("html-not-http", f"a link that is not http(s) left out: {href[:80]}")
            return
        if "nofollow" in (_attr(attrs, "rel") or "").lower().split():
            self._count("html-nofollow", f'a rel="nofollow" link left out: {url}')
            return
        if url == self.self_url:
            return
        text = _attr(attrs, "title") or _attr(attrs, "aria-label") or ""
        self._link = _Link(url, text, bool(self._nav))
        if tag == "area":
            self._end_link()

    def _end_link(self) -> None:
        link, self._link = self._link, None
        if link is None:
            return
        url = link.url
        local = (urlsplit(url).hostname or "") == self.host
        home = self.mode == "home"
        if home and local and (names_sitemap(link.text) or names_sitemap_path(url)):
            self._items.append(SitemapRef(url, None, self.url))
            return
        navigation = self.navigation
        if link.nav or url in navigation:
            if link.nav and len(navigation) < self.limits.max_html_links:
                navigation.add(url)
            if not home:
                self._count("html-navigation", f"a navigation link left out: {url}")
            return
        if home:
            return
        if local and names_sitemap_path(url):
            self._items.append(SitemapRef(url, None, self.url))
            return
        self.links.add(url)
        self._items.append(self._build(url, None, None, None, self.url, (), (), (), None, None))

    # -- bookkeeping -----------------------------------------------------------------------

    def _take(self) -> list[Item]:
        items, self._items = self._items, []
        return items

    def _count(self, code: str, message: str) -> None:
        old = self._problems.get(code)
        self._problems[code] = (
            Problem(code, message)
            if old is None
            else Problem(code, old.message, old.count + 1, old.fatal)
        )

    def _fatal(self, code: str, message: str) -> None:
        self._problems[code] = Problem(code, message, 1, True)
        self._end_link()
        self.done = True
        self.complete = False


def _attr(attrs: list[tuple[str, str | None]], name: str) -> str | None:
    for key, value in attrs:
        if key == name:
            return value
    return None
