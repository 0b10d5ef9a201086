"""Element kinds: how a tag name is classified (entry, core field, extension), and the
tables behind it (roots, entry names, field names, extension namespaces).

Expat runs without namespace processing, so a tag arrives as its qualified name
(``image:loc``); :class:`~sitemap_reader.parse.names.TagNames` classifies each
distinct name once into one of these small integers and reads a dict afterwards.
"""

from __future__ import annotations

from typing import Final

OTHER: Final = 0
# entries
E_URL: Final = 1
E_SITEMAP: Final = 2
E_ITEM: Final = 3  # RSS <item>, Atom <entry>
# core fields (direct children of an entry): kind - F_LOC is the entry slot it fills
# (parse.entry: LOC, LASTMOD, CHANGEFREQ, PRIORITY, LINK, GUID, PUBLISHED, TITLE)
F_LOC: Final = 10
F_LASTMOD: Final = 11  # sitemap lastmod, RSS pubDate, Atom updated/modified, dc:date
F_CHANGEFREQ: Final = 12
F_PRIORITY: Final = 13
F_LINK: Final = 14
F_GUID: Final = 15
F_PUBLISHED: Final = 16  # Atom published/issued: a fallback date
F_TITLE: Final = 17  # an RSS/Atom item's title (kept for feed items only)
F_FEED_DATE: Final = -2  # a feed's own date (channel/feed level, outside the items)
# extensions (the containers first: X_IMAGE..X_PAGEMAP)
X_IMAGE: Final = 20
X_VIDEO: Final = 21
X_NEWS: Final = 22
X_PAGEMAP: Final = 23  # a PageMap, read only when asked for (else ignored)
X_XHTML: Final = 24  # xhtml:link (hreflang alternates)
X_MOBILE: Final = 25  # <mobile:mobile/>, a flag
X_IGNORED: Final = 26  # another extension element (geo, a PageMap when not asked...)

ENTRIES: Final = {"url": E_URL, "sitemap": E_SITEMAP, "item": E_ITEM, "entry": E_ITEM}
FIELDS: Final = {
    "loc": F_LOC,
    "lastmod": F_LASTMOD,
    "pubdate": F_LASTMOD,
    "updated": F_LASTMOD,
    "modified": F_LASTMOD,
    "date": F_LASTMOD,
    "changefreq": F_CHANGEFREQ,
    "priority": F_PRIORITY,
    "link": F_LINK,
    "guid": F_GUID,
    "published": F_PUBLISHED,
    "issued": F_PUBLISHED,
    "lastbuilddate": F_LASTMOD,  # RSS channel only, in practice: the feed's own date
    "title": F_TITLE,
}
# Extension namespaces recognised by a fragment of their URI, or by the usual prefix
# when the document forgot to declare it.
EXT_BY_NS: Final = (
    ("sitemap-image", X_IMAGE),
    ("sitemap-video", X_VIDEO),
    ("sitemap-news", X_NEWS),
    ("/xhtml", X_XHTML),
    ("sitemap-mobile", X_MOBILE),
    ("sitemap-pagemap", X_PAGEMAP),
)
EXT_BY_PREFIX: Final = {
    "image": X_IMAGE,
    "video": X_VIDEO,
    "news": X_NEWS,
    "xhtml": X_XHTML,
    "mobile": X_MOBILE,
    "pagemap": X_PAGEMAP,
}
EXT_CONTAINERS: Final = {X_IMAGE: "image", X_VIDEO: "video", X_NEWS: "news", X_PAGEMAP: "pagemap"}

#: Root element (local name) → format reported by the parser.
ROOTS: Final = {
    "urlset": "urlset",
    "sitemapindex": "sitemapindex",
    "rss": "rss",
    "rdf": "rss",  # RSS 1.0: <rdf:RDF>
    "feed": "atom",
}
SITEMAP_NS: Final = "http://www.sitemaps.org/schemas/sitemap/0.9"

# Which entry kinds each root admits: a feed's channel <image><url> is not a page.
ENTRIES_FOR_ROOT: Final = {
    "urlset": (E_URL, E_SITEMAP),
    "sitemapindex": (E_URL, E_SITEMAP),
    "rss": (E_ITEM,),
    "atom": (E_ITEM,),
}
# Multi-valued extension fields, collected as lists.
MULTI: Final = frozenset({"tag", "keywords"})
# Repeatable extension fields whose attributes belong to each value: (text, attrs) lists.
WITH_ATTRS: Final = frozenset({"price", "id"})
FEEDS: Final = frozenset({"rss", "atom"})


def extension_of(prefix: str, namespace: str) -> int:
    """The extension a prefix (bound to ``namespace``, maybe empty) names, or OTHER."""
    if namespace:
        for fragment, kind in EXT_BY_NS:
            if fragment in namespace:
                return kind
        return OTHER
    return EXT_BY_PREFIX.get(prefix, OTHER) if prefix else OTHER
