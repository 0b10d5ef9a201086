"""The values sitemap-reader hands out: URL records, child-sitemap references, problems.

All are frozen, slotted dataclasses built by the library, whole: every field is set
once, when the value is made, and never afterwards (a record the crawler must change,
for a uniform-lastmod verdict or a custom score, is rebuilt as a new object). The
parser's records come from a :data:`RecordBuilder`, which fills all 17 fields of a
:class:`UrlRecord` in one go. ``to_dict()`` gives the JSON shape of docs/reference/record.md
(key order included), with datetimes as ISO 8601 UTC strings ending in ``Z`` and empty extension
fields left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, NamedTuple

from sitemap_reader.records.fields import Kind, RecordField, describe, holds

JsonDict = dict[str, Any]
#: The protocol's changefreq values, most frequent first (a DataFrame's categories).
CHANGEFREQS: Final = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")


def format_datetime(value: datetime | None) -> str | None:
    """ISO 8601 in UTC with a ``Z``: ``2024-03-05T14:30:00Z``; None stays None."""
    if value is None:
        return None
    text = value.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _plain(value: Any) -> Any:
    """A nested record (or a tuple of them) as JSON-ready data."""
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if to_dict is not None else value


def _compact(pairs: dict[str, Any]) -> JsonDict:
    """Drop None values and empty tuples; format datetimes; tuples become lists."""
    out: JsonDict = {}
    for key, value in pairs.items():
        if value is None or value == ():
            continue
        if isinstance(value, datetime):
            value = format_datetime(value)
        elif isinstance(value, tuple):
            value = list(value)
        out[key] = value
    return out


@dataclass(frozen=True, slots=True)
class Alternate:
    """An hreflang alternate (``<xhtml:link rel="alternate" hreflang=… href=…>``)."""

    hreflang: str
    url: str

    def to_dict(self) -> JsonDict:
        return {"hreflang": self.hreflang, "url": self.url}


@dataclass(frozen=True, slots=True)
class Image:
    """One ``<image:image>``. Only ``loc`` is current; the rest are deprecated by Google."""

    loc: str
    title: str | None = None
    caption: str | None = None
    geo_location: str | None = None
    license: str | None = None

    def to_dict(self) -> JsonDict:
        return _compact(
            {
                "loc": self.loc,
                "title": self.title,
                "caption": self.caption,
                "geo_location": self.geo_location,
                "license": self.license,
            }
        )


@dataclass(frozen=True, slots=True)
class VideoPrice:
    """One ``<video:price>``: the amount (None when empty or not a plain decimal number
    such as ``1.99``), its ISO 4217 ``currency``, ``type`` (``own`` or ``rent``; absent
    means own) and ``resolution`` (``hd`` or ``sd``), each None when absent or invalid."""

    amount: float | None = None
    currency: str | None = None
    type: str | None = None
    resolution: str | None = None

    def to_dict(self) -> JsonDict:
        return _compact({name: getattr(self, name) for name in self.__slots__})


@dataclass(frozen=True, slots=True)
class VideoId:
    """One ``<video:id type=…>`` (an id of the video in a catalogue such as TMS)."""

    value: str
    type: str | None = None

    def to_dict(self) -> JsonDict:
        return _compact({"value": self.value, "type": self.type})


@dataclass(frozen=True, slots=True)
class TvShow:
    """A ``<video:tvshow>``: the show an episode belongs to."""

    show_title: str | None = None
    video_type: str | None = None
    episode_title: str | None = None
    season_number: int | None = None
    episode_number: int | None = None
    premier_date: datetime | None = None

    def to_dict(self) -> JsonDict:
        return _compact({name: getattr(self, name) for name in self.__slots__})


@dataclass(frozen=True, slots=True)
class Video:
    """One ``<video:video>``. URLs normalized; numbers and dates parsed, invalid ones None."""

    title: str | None = None
    description: str | None = None
    thumbnail_loc: str | None = None
    content_loc: str | None = None
    player_loc: str | None = None
    duration: int | None = None
    expiration_date: datetime | None = None
    rating: float | None = None
    view_count: int | None = None
    publication_date: datetime | None = None
    family_friendly: bool | None = None
    requires_subscription: bool | None = None
    live: bool | None = None
    uploader: str | None = None
    restriction: tuple[str, ...] = ()
    restriction_relationship: str | None = None
    platform: tuple[str, ...] = ()
    platform_relationship: str | None = None
    tags: tuple[str, ...] = ()
    uploader_info: str | None = None
    category: str | None = None
    gallery_loc: str | None = None
    gallery_title: str | None = None
    prices: tuple[VideoPrice, ...] = ()
    tvshow: TvShow | None = None
    ids: tuple[VideoId, ...] = ()

    def to_dict(self) -> JsonDict:
        return _compact({name: _plain(getattr(self, name)) for name in self.__slots__})


@dataclass(frozen=True, slots=True)
class News:
    """A ``<news:news>`` entry. ``valid`` is False when a required field is missing."""

    title: str | None = None
    publication_name: str | None = None
    language: str | None = None
    publication_date: datetime | None = None
    keywords: tuple[str, ...] = ()
    genres: tuple[str, ...] = ()
    stock_tickers: tuple[str, ...] = ()
    access: str | None = None

    @property
    def valid(self) -> bool:
        """Google requires a publication name and language, a date and a title."""
        return bool(
            self.title and self.publication_name and self.language and self.publication_date
        )

    def to_dict(self) -> JsonDict:
        return _compact({name: getattr(self, name) for name in self.__slots__})


@dataclass(frozen=True, slots=True)
class DataObject:
    """A PageMap ``<DataObject type=… id=…>`` with its ``<Attribute name=…>`` values, in
    document order (kept only when the parser is asked to: ``pagemaps=True``)."""

    type: str | None = None
    id: str | None = None
    attributes: tuple[tuple[str, str], ...] = ()

    def get(self, name: str) -> str | None:
        """The first value of the attribute ``name``, or None."""
        return next((value for key, value in self.attributes if key == name), None)

    def to_dict(self) -> JsonDict:
        out: JsonDict = _compact({"type": self.type, "id": self.id})
        attributes: JsonDict = {}
        for key, value in self.attributes:
            attributes.setdefault(key, value)
        out["attributes"] = attributes
        return out


@dataclass(frozen=True, slots=True)
class UrlRecord:
    """One page URL a sitemap asks to be crawled.

    ``url`` is normalized (see :func:`sitemap_reader.parse.normalize.normalize_url`);
    ``lastmod`` is an aware UTC datetime or None; ``changefreq`` a lower-case protocol
    value or None; ``priority`` a float in [0, 1] or None (absent or invalid);
    ``score`` the ranking score in [0, 1]; ``sitemap`` the URL of the sitemap it came from.
    ``revisit`` is a suggested revisit interval in seconds for a crawl scheduler (set by
    the crawler, see :func:`sitemap_reader.records.scoring.revisit_interval`; None from the bare
    parser); ``removed`` is True only on the records an incremental run emits for URLs
    that left the site's sitemaps (``removed=True`` of :class:`SitemapReader`).
    ``title`` is an RSS or Atom item's title, ``mobile`` is True for a URL annotated
    ``<mobile:mobile/>``, ``pagemaps`` the PageMap DataObjects (when asked for).
    ``robots`` is ``"allowed"`` or ``"disallowed"``: what the site's robots.txt says
    about the URL for our user agent (None when no robots.txt was read for its origin).
    ``source`` says where the record came from when that is not an XML or text sitemap
    (``"html"``: a link of an HTML sitemap page, ``sitemap`` being that page).
    """

    # What each field holds is part of its declaration: every format's schema is read
    # off it (see :mod:`sitemap_reader.records.fields`).
    url: str = field(metadata=holds(Kind.SITE_TEXT))
    lastmod: datetime | None = field(default=None, metadata=holds(Kind.TIMESTAMP))
    changefreq: str | None = field(default=None, metadata=holds(Kind.ENUM, CHANGEFREQS))
    priority: float | None = field(default=None, metadata=holds(Kind.FLOAT))
    score: float = field(default=0.0, metadata=holds(Kind.FLOAT))
    sitemap: str | None = field(default=None, metadata=holds(Kind.SITE_TEXT))
    alternates: tuple[Alternate, ...] = field(default=(), metadata=holds(Kind.NESTED))
    images: tuple[Image, ...] = field(default=(), metadata=holds(Kind.NESTED))
    videos: tuple[Video, ...] = field(default=(), metadata=holds(Kind.NESTED))
    news: News | None = field(default=None, metadata=holds(Kind.NESTED))
    revisit: float | None = field(default=None, metadata=holds(Kind.FLOAT))
    removed: bool = field(default=False, metadata=holds(Kind.FLAG))
    title: str | None = field(default=None, metadata=holds(Kind.SITE_TEXT))
    mobile: bool = field(default=False, metadata=holds(Kind.FLAG))
    pagemaps: tuple[DataObject, ...] = field(default=(), metadata=holds(Kind.NESTED))
    robots: str | None = field(default=None, metadata=holds(Kind.TEXT))
    source: str | None = field(default=None, metadata=holds(Kind.TEXT))

    def to_dict(self) -> JsonDict:
        """The JSON shape of docs/reference/record.md; the extension keys only when present.

        >>> UrlRecord("https://example.com/", priority=0.8, score=0.5).to_dict()["priority"]
        0.8
        """
        out: JsonDict = {
            "url": self.url,
            "lastmod": format_datetime(self.lastmod),
            "changefreq": self.changefreq,
            "priority": self.priority,
            "score": round(self.score, 4),
            "sitemap": self.sitemap,
        }
        if self.alternates:
            out["alternates"] = [a.to_dict() for a in self.alternates]
        if self.images:
            out["images"] = [i.to_dict() for i in self.images]
        if self.videos:
            out["videos"] = [v.to_dict() for v in self.videos]
        if self.news is not None:
            out["news"] = self.news.to_dict()
        if self.title is not None:
            out["title"] = self.title
        if self.mobile:
            out["mobile"] = True
        if self.pagemaps:
            out["pagemaps"] = [d.to_dict() for d in self.pagemaps]
        if self.revisit is not None:
            out["revisit"] = round(self.revisit)
        if self.removed:
            out["removed"] = True
        if self.robots is not None:
            out["robots"] = self.robots
        if self.source is not None:
            out["source"] = self.source
        return out


#: The description of :class:`UrlRecord`'s fields, in its order: what every format's
#: schema is derived from (:mod:`sitemap_reader.records.fields`).
RECORD_FIELDS: Final[tuple[RecordField, ...]] = describe(UrlRecord)


@dataclass(frozen=True, slots=True)
class SitemapRef:
    """A child sitemap named by a sitemap index (or by robots.txt)."""

    url: str
    lastmod: datetime | None = None
    sitemap: str | None = None

    def to_dict(self) -> JsonDict:
        return {"url": self.url, "lastmod": format_datetime(self.lastmod), "sitemap": self.sitemap}


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with one sitemap: a stable ``code``, a human message, a count.

    Problems of the same code are aggregated per sitemap (``count`` grows, the message
    keeps the first example), so a file with a million bad dates costs one Problem.
    ``fatal`` problems ended the parse early (the sitemap is then not ``complete``).
    """

    code: str
    message: str
    count: int = 1
    fatal: bool = False

    def to_dict(self) -> JsonDict:
        return {"code": self.code, "message": self.message, "count": self.count}


def _twin(cls: type) -> type:
    """A plain (unfrozen) class with exactly ``cls``'s slots, for fast construction.

    A frozen dataclass assigns each field through ``object.__setattr__``; the parser makes
    one record per URL (and per image, per alternate), so its constructors fill a twin's
    slots with plain attribute stores (the interpreter's fastest store) and then give
    the object its real class: same slots, same layout, so ``__class__`` assignment is
    allowed, and the result is indistinguishable from one built by ``cls(...)``, provided
    every slot is stored (each constructor below writes all of them, once). This is the
    one construction trick of the records; nothing writes a slot after the swap.
    """
    return type(f"_{cls.__name__}Slots", (), {"__slots__": cls.__slots__})  # type: ignore[attr-defined]


_RecordSlots: Any = _twin(UrlRecord)
_AlternateSlots: Any = _twin(Alternate)
_ImageSlots: Any = _twin(Image)


def make_alternate(hreflang: str, url: str) -> Alternate:
    """``Alternate(hreflang, url)``, built like :func:`url_record_builder`'s records
    (the parser's hot path)."""
    alternate = object.__new__(_AlternateSlots)
    alternate.hreflang = hreflang
    alternate.url = url
    alternate.__class__ = Alternate
    return alternate  # type: ignore[no-any-return]


def make_image(
    loc: str,
    title: str | None = None,
    caption: str | None = None,
    geo_location: str | None = None,
    license: str | None = None,
) -> Image:
    """``Image(loc, title, caption, geo_location, license)``, built like
    :func:`url_record_builder`'s records."""
    image = object.__new__(_ImageSlots)
    image.loc = loc
    image.title = title
    image.caption = caption
    image.geo_location = geo_location
    image.license = license
    image.__class__ = Image
    return image  # type: ignore[no-any-return]


class RareFields(NamedTuple):
    """The fields few entries have (an RSS or Atom item's title, ``<mobile:mobile/>``,
    PageMaps), handed to a :data:`RecordBuilder` in one argument (None: none of them)."""

    title: str | None = None
    mobile: bool = False
    pagemaps: tuple[DataObject, ...] = ()


#: What the parser hands its entries to: (url, lastmod, changefreq, priority, sitemap,
#: alternates, images, videos, news, rare fields or None) -> the finished record, every
#: field set once. The builder computes the fields that are not read from the entry
#: (score, revisit, the robots verdict), as it builds, and sets the ``source`` it was
#: made for.
RecordBuilder = Callable[
    [
        str,
        datetime | None,
        str | None,
        float | None,
        str | None,
        tuple[Alternate, ...],
        tuple[Image, ...],
        tuple[Video, ...],
        News | None,
        RareFields | None,
    ],
    UrlRecord,
]
#: The robots audit of a URL: ``"allowed"``, ``"disallowed"`` or None (not audited).
Audit = Callable[[str], str | None]
#: A score from a record's fields: (priority, changefreq, lastmod) -> score.
FieldScore = Callable[[float | None, str | None, datetime | None], float]


def url_record_builder(
    score: FieldScore,
    revisits: Mapping[str, float] | None = None,
    missing_revisit: float | None = None,
    *,
    source: str | None = None,
    audit: Audit | None = None,
) -> RecordBuilder:
    """A :data:`RecordBuilder` that sets ``score`` from ``score(priority, changefreq,
    lastmod)``, ``revisit`` from ``revisits[changefreq]`` (``missing_revisit`` when
    absent; None throughout without ``revisits``), ``robots`` from ``audit(url)`` (None
    without an audit) and ``source`` to ``source``; ``title``, ``mobile`` and ``pagemaps``
    from the rare fields, when the entry has any. It fills a twin's slots (:func:`_twin`,
    about 2x faster than the frozen ``__init__``): every one of the 17 fields is written
    once, before anyone sees the record.

    ``audit`` is called as each record is built, so it may answer differently over time
    (a site's robots audit answers None until its robots.txt was read).

    >>> build = url_record_builder(lambda p, f, m: 0.5, {"daily": 86400.0}, 604800.0)
    >>> record = build("https://example.com/", None, "daily", None, None, (), (), (), None, None)
    >>> record == UrlRecord("https://example.com/", changefreq="daily", score=0.5, revisit=86400.0)
    True
    >>> page = url_record_builder(lambda p, f, m: 0.0, source="html", audit=lambda url: "allowed")
    >>> rare = RareFields(title="Home")
    >>> page("https://example.com/", None, None, None, None, (), (), (), None, rare).to_dict()
    {'url': 'https://example.com/', 'lastmod': None, 'changefreq': None, 'priority': None, \
'score': 0.0, 'sitemap': None, 'title': 'Home', 'robots': 'allowed', 'source': 'html'}
    """
    new = object.__new__
    twin = _RecordSlots
    interval = revisits.get if revisits is not None else None

    def build(
        url: str,
        lastmod: datetime | None,
        changefreq: str | None,
        priority: float | None,
        sitemap: str | None,
        alternates: tuple[Alternate, ...],
        images: tuple[Image, ...],
        videos: tuple[Video, ...],
        news: News | None,
        extra: RareFields | None,
    ) -> UrlRecord:
        record = new(twin)  # see _twin: plain slot stores, then the real class
        record.url = url
        record.lastmod = lastmod
        record.changefreq = changefreq
        record.priority = priority
        record.score = score(priority, changefreq, lastmod)
        record.sitemap = sitemap
        record.alternates = alternates
        record.images = images
        record.videos = videos
        record.news = news
        record.revisit = None if interval is None else interval(changefreq or "", missing_revisit)
        record.removed = False
        if extra is None:
            record.title = None
            record.mobile = False
            record.pagemaps = ()
        else:
            record.title, record.mobile, record.pagemaps = extra
        record.robots = None if audit is None else audit(url)
        record.source = source
        record.__class__ = UrlRecord
        return record  # type: ignore[no-any-return]

    return build


# --------------------------------------------------------------------------- duplicates

#: The lastmod of a record without one, for :func:`informativeness` (older than any date).
_NO_LASTMOD = float("-inf")


def informativeness(record: UrlRecord) -> tuple[float, bool, bool]:
    """How much a copy of a URL says: (lastmod timestamp, has priority, has changefreq).

    Where output is held (ranked output, ``top``), copies of one URL listed by several
    sitemaps merge into the most informative one (:func:`more_informative`).
    """
    lastmod = record.lastmod
    return (
        _NO_LASTMOD if lastmod is None else lastmod.timestamp(),
        record.priority is not None,
        record.changefreq is not None,
    )


def more_informative(a: UrlRecord, b: UrlRecord) -> bool:
    """True when copy ``a`` of a URL should replace copy ``b``: the one merge rule.

    The newest lastmod wins (a lastmod beats none); then a present priority, then a
    present changefreq; then the sitemap whose URL sorts first (so the result depends on
    the site only, never on which sitemap happened to be read first).

    >>> from datetime import UTC, datetime
    >>> bare = UrlRecord("https://e.com/a", sitemap="https://e.com/1.xml")
    >>> dated = UrlRecord("https://e.com/a", datetime(2024, 1, 1, tzinfo=UTC), sitemap="https://e.com/2.xml")
    >>> more_informative(dated, bare), more_informative(bare, dated)
    (True, False)
    """
    ka, kb = informativeness(a), informativeness(b)
    if ka != kb:
        return ka > kb
    return (a.sitemap or "\uffff") < (b.sitemap or "\uffff")
