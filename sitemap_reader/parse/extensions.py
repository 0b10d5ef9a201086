"""Extension records (images, videos, news, PageMaps) built from the fields a reader
gathered, and the human-text rule they share.

Builders get an :class:`ExtensionContext` (the parser's emitter): it normalizes the
extension URLs (absolute only: a placeholder such as ``None`` must never become
``https://site/None``), parses dates, and counts every value it has to drop.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final, Protocol

from sitemap_reader.records import (
    DataObject,
    Image,
    News,
    TvShow,
    Video,
    VideoId,
    VideoPrice,
    make_image,
)


class ExtensionContext(Protocol):
    """What the extension builders need from the parser."""

    def ext_url(self, raw: str, what: str) -> str | None:
        """An absolute extension URL normalized, or None (the drop counted)."""
        ...

    def ext_date(self, text: str) -> datetime | None:
        """A date, or None (counted)."""
        ...

    def problem(self, code: str, message: str) -> None: ...


# Runs of white space inside a human-text field become one space: XML's own (space, tab,
# CR, LF), every other character str.splitlines() breaks a line at (VT, FF, the file,
# group and record separators, NEL, U+2028, U+2029), and the other C0 and C1 controls
# (U+009B is a terminal's CSI; XML 1.0 allows every C1 control as a character
# reference). A title is always one line, and no control reaches a CSV cell or a log.
_SPACE_RUN: Final = re.compile("[\x00-\x20\x7f-\x9f\u2028\u2029]+")
_PRICE: Final = re.compile(r"\s*[0-9]+(?:\.[0-9]+)?\s*")
_PRICE_TYPES: Final = frozenset({"own", "rent"})
_RESOLUTIONS: Final = frozenset({"hd", "sd"})


def human_text(text: Any) -> str | None:
    r"""A human-text field (title, caption, description, name...): runs of white space,
    line breaks (XML's, and every other one ``str.splitlines()`` knows) and control
    characters collapsed to one space, ends trimmed; None when nothing is left.

    >>> human_text("Alkis shows you how\n        to grill")
    'Alkis shows you how to grill'
    >>> human_text("one\u2028two\x85three\vfour\x9b31m")
    'one two three four 31m'
    """
    if not text:
        return None
    if type(text) is not str:
        text = str(text)
    # Most fields hold nothing to collapse: two C-speed checks (every character to collapse
    # but the space is not printable) are much cheaper than the substitution.
    if "  " in text or not text.isprintable():
        text = _SPACE_RUN.sub(" ", text)
    return text.strip(" ") or None


def build_image(fields: dict[str, Any], ctx: ExtensionContext) -> Image | None:
    loc = fields.get("loc")
    if not isinstance(loc, str):
        ctx.problem("extension-dropped", "an image:image without image:loc dropped")
        return None
    url = ctx.ext_url(loc, "image:loc")
    return None if url is None else image_at(url, fields)


def image_at(url: str, fields: dict[str, Any]) -> Image:
    """The image of ``fields`` whose ``loc`` normalized to ``url``."""
    if len(fields) == 1:  # most images have a loc and nothing else
        return make_image(url)
    get = fields.get
    return make_image(
        url,
        human_text(get("title")),
        human_text(get("caption")),
        human_text(get("geo_location")),
        get("license"),
    )


def _int(text: Any) -> int | None:
    try:
        value = int(str(text).strip())
    except ValueError:
        return None
    return value if value >= 0 else None


def _float(text: Any) -> float | None:
    try:
        value = float(str(text).strip())
    except ValueError:
        return None
    return value if 0.0 <= value <= 5.0 else None


def _yes_no(text: Any) -> bool | None:
    value = str(text).strip().lower() if text is not None else ""
    return {"yes": True, "true": True, "no": False, "false": False}.get(value)


def _words(text: Any) -> tuple[str, ...]:
    return tuple(str(text).split()) if text else ()


def _choice(value: str | None, allowed: frozenset[str], ctx: ExtensionContext) -> str | None:
    if value is None or not value.strip():
        return None
    word = value.strip().lower()
    if word in allowed:
        return word
    ctx.problem("bad-extension-field", f"value {value[:40]!r} not one of {sorted(allowed)}")
    return None


def _prices(items: list[tuple[str, dict[str, str]]], ctx: ExtensionContext) -> tuple[Any, ...]:
    prices = []
    for text, attrs in items:
        amount = None
        if text:
            if _PRICE.fullmatch(text):  # "1,99" is not read: 199 or 1.99 is a guess
                amount = float(text)
            else:
                ctx.problem("bad-extension-field", f"video:price {text[:40]!r} not understood")
        currency = (attrs.get("currency") or "").strip().upper() or None
        kind = _choice(attrs.get("type"), _PRICE_TYPES, ctx)
        resolution = _choice(attrs.get("resolution"), _RESOLUTIONS, ctx)
        if amount is not None or currency or kind or resolution:
            prices.append(VideoPrice(amount, currency, kind, resolution))
    return tuple(prices)


_TVSHOW_FIELDS: Final = (
    "show_title",
    "video_type",
    "episode_title",
    "season_number",
    "episode_number",
    "premier_date",
)


def _tvshow(fields: dict[str, Any], ctx: ExtensionContext) -> TvShow | None:
    if not any(name in fields for name in _TVSHOW_FIELDS):
        return None
    premier = fields.get("premier_date")
    video_type = fields.get("video_type")
    return TvShow(
        show_title=human_text(fields.get("show_title")),
        video_type=video_type.strip().lower() if video_type else None,
        episode_title=human_text(fields.get("episode_title")),
        season_number=_int(fields.get("season_number")),
        episode_number=_int(fields.get("episode_number")),
        premier_date=ctx.ext_date(premier) if premier else None,
    )


def _ext_urls(fields: dict[str, Any], names: tuple[str, ...], ctx: ExtensionContext) -> Any:
    return {k: ctx.ext_url(fields[k], f"video:{k}") for k in names if k in fields}


def build_video(fields: dict[str, Any], ctx: ExtensionContext) -> Video | None:
    urls = _ext_urls(fields, ("thumbnail_loc", "content_loc", "player_loc", "gallery_loc"), ctx)
    title = human_text(fields.get("title"))
    if not title and not any(urls.get(k) for k in ("thumbnail_loc", "content_loc", "player_loc")):
        ctx.problem("extension-dropped", "a video:video with no title and no video URL dropped")
        return None
    relationship = fields.get("restriction@relationship")
    platform_rel = fields.get("platform@relationship")
    info = fields.get("uploader@info")
    date = ctx.ext_date
    return Video(
        title=title,
        description=human_text(fields.get("description")),
        thumbnail_loc=urls.get("thumbnail_loc"),
        content_loc=urls.get("content_loc"),
        player_loc=urls.get("player_loc"),
        duration=_int(fields.get("duration")),
        expiration_date=date(fields["expiration_date"]) if "expiration_date" in fields else None,
        rating=_float(fields.get("rating")),
        view_count=_int(fields.get("view_count")),
        publication_date=date(fields["publication_date"]) if "publication_date" in fields else None,
        family_friendly=_yes_no(fields.get("family_friendly")),
        requires_subscription=_yes_no(fields.get("requires_subscription")),
        live=_yes_no(fields.get("live")),
        uploader=human_text(fields.get("uploader")),
        restriction=_words(fields.get("restriction")),
        restriction_relationship=relationship.strip().lower() if relationship else None,
        platform=_words(fields.get("platform")),
        platform_relationship=platform_rel.strip().lower() if platform_rel else None,
        tags=tuple(t for t in map(human_text, fields.get("tag", ())) if t),
        uploader_info=ctx.ext_url(info, "video:uploader info") if info else None,
        category=human_text(fields.get("category")),
        gallery_loc=urls.get("gallery_loc"),
        gallery_title=human_text(fields.get("gallery_loc@title")),
        prices=_prices(fields.get("price", []), ctx),
        tvshow=_tvshow(fields, ctx),
        ids=tuple(VideoId(text, attrs.get("type")) for text, attrs in fields.get("id", []) if text),
    )


def _split_commas(values: Any) -> tuple[str, ...]:
    if not values:
        return ()
    items = values if isinstance(values, list) else [values]
    parts = (human_text(part) for item in items for part in item.split(","))
    return tuple(part for part in parts if part)


#: Google News: "up to 5 stock tickers".
MAX_STOCK_TICKERS: Final = 5


def build_news(fields: dict[str, Any], ctx: ExtensionContext) -> News:
    tickers = _split_commas(fields.get("stock_tickers"))
    if len(tickers) > MAX_STOCK_TICKERS:
        ctx.problem("limit-extensions", f"news:stock_tickers past {MAX_STOCK_TICKERS} dropped")
    date = fields.get("publication_date")
    return News(
        title=human_text(fields.get("title")),
        publication_name=human_text(fields.get("name")),
        language=fields.get("language"),
        publication_date=ctx.ext_date(date) if date else None,
        keywords=_split_commas(fields.get("keywords")),
        genres=_split_commas(fields.get("genres")),
        stock_tickers=tickers[:MAX_STOCK_TICKERS],
        access=human_text(fields.get("access")),
    )


def build_pagemaps(objects: list[list[Any]]) -> tuple[DataObject, ...]:
    """PageMap DataObjects from the reader's ``[type, id, [(name, value), ...]]`` lists."""
    return tuple(DataObject(kind, ident, tuple(attrs)) for kind, ident, attrs in objects)
