"""The options only a Scrapy crawl has (:class:`ScrapyOptions`: its targets, the start
middleware's callback, the alternates, links) and the scrapy-redis scheduler's
(:class:`RedisOptions`), declared like every other option. They import nothing of Scrapy:
:mod:`sitemap_reader.scrapy.settings` reads them from a crawl's settings, and the option
table shows them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sitemap_reader.options.declare import Declared, boolean, option, seconds, text_line

_SCRAPY_ONLY = "a Scrapy crawl's own"


def target_list(value: object) -> tuple[str, ...]:
    """Targets: a sequence, or one string split on commas and blank space (a spider
    argument).

    >>> target_list("example.com, example.org")
    ('example.com', 'example.org')
    """
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(t for t in re.split(r"[\s,]+", value) if t)
    if isinstance(value, Iterable) and all(isinstance(t, str) for t in value):
        return tuple(value)
    raise ValueError(f"expected domains or URLs, got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ScrapyOptions(Declared):
    """What only a Scrapy crawl has: its targets, the callback of the start middleware,
    whether the hreflang alternates are crawled too, and whether pages may lead further."""

    targets: tuple[str, ...] = option(
        (),
        "domains, site URLs, robots.txt URLs or sitemap URLs to discover",
        convert=target_list,
        cli="the targets are dump's arguments",
        loader="the loader's targets are its first argument",
        accepts="Sequence[str] | str",
    )
    callback: str = option(
        "parse",
        "the spider method that gets the pages (SitemapStartMiddleware and the add-on)",
        convert=text_line,
        cli=_SCRAPY_ONLY,
        loader=_SCRAPY_ONLY,
    )
    alternates: bool = option(
        False,
        "also crawl the hreflang alternates of each page (in scope, once each)",
        convert=boolean,
        cli=_SCRAPY_ONLY,
        loader=_SCRAPY_ONLY,
    )
    links: bool = option(
        True,
        "let the callback of a sitemap page request further pages; off (sitemap only), "
        "its requests are dropped unless their meta has sitemap_reader_link=True",
        convert=boolean,
        cli=_SCRAPY_ONLY,
        loader=_SCRAPY_ONLY,
    )


def key_prefix(value: object) -> str:
    """A prefix of Redis keys: one line of text, where ``%(spider)s`` stands for the
    spider's name (and ``%%`` for ``%``).

    >>> key_prefix("%(spider)s:sitemap_reader") % {"spider": "blog"}
    'blog:sitemap_reader'
    """
    text = text_line(value)
    if not text:
        raise ValueError(f"expected a key prefix, got {value!r}")
    try:
        text % {"spider": ""}
    except (KeyError, ValueError, TypeError):
        raise ValueError(f"a key prefix may hold %(spider)s and %% only, not {text!r}") from None
    return text


_REDIS_ONLY = "the scrapy-redis scheduler's own"


@dataclass(frozen=True, slots=True, kw_only=True)
class RedisOptions(Declared):
    """The knobs of :class:`sitemap_reader.scrapy.redis.Scheduler` (settings only)."""

    redis_lease: float = option(
        60.0,
        "seconds a sitemap or page lease lasts unrenewed: a killed process's work is "
        "taken up again after it",
        convert=seconds(),
        cli=_REDIS_ONLY,
        loader=_REDIS_ONLY,
    )
    redis_poll: float = option(
        1.0,
        "seconds between lease renewals and between polls of a waiting process",
        convert=seconds(),
        cli=_REDIS_ONLY,
        loader=_REDIS_ONLY,
    )
    redis_key: str = option(
        "%(spider)s:sitemap_reader",
        "prefix of the shared state's keys in Redis (%(spider)s: the spider's name)",
        convert=key_prefix,
        cli=_REDIS_ONLY,
        loader=_REDIS_ONLY,
    )
