"""The ``SITEMAP_READER_*`` settings, derived from the option declarations.

Every option whose declaration shows the Scrapy door (:mod:`sitemap_reader.options`)
is a setting named ``SITEMAP_READER_`` plus its name in capitals, read with the option's
own converter, so a setting means what the Python keyword and the CLI flag mean
(``SITEMAP_READER_SINCE = "2026-01-01"``, ``SITEMAP_READER_DEADLINE = 600``). The
options Scrapy already has a setting for (``USER_AGENT``) are read from it; those its
downloader does itself (concurrency, headers, proxies, delays) say so in their
declaration and are not settings. The few options only a Scrapy crawl has (the targets,
the callback, the alternates, links) are declared here, in :class:`ScrapyOptions`, and so
are the knobs of the scrapy-redis scheduler (:class:`RedisOptions`, read by
:func:`redis_options`).

A spider of the mixin may set any of them as a class attribute (or a spider argument)
``sitemap_<name>``: ``sitemap_follow``, ``sitemap_since``, ``sitemap_limits``... over the
settings.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from sitemap_reader.errors import UsageError
from sitemap_reader.options import GROUPS, Options
from sitemap_reader.options.declare import (
    Declared,
    OptionError,
    boolean,
    convert_value,
    option,
    seconds,
    spec_of,
    text_line,
)
from sitemap_reader.options.doors import scrapy_setting
from sitemap_reader.options.groups import with_group

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

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
        accepts="Sequence[str] | str",
    )
    callback: str = option(
        "parse",
        "the spider method that gets the pages (SitemapStartMiddleware and the add-on)",
        convert=text_line,
        cli=_SCRAPY_ONLY,
    )
    alternates: bool = option(
        False,
        "also crawl the hreflang alternates of each page (in scope, once each)",
        convert=boolean,
        cli=_SCRAPY_ONLY,
    )
    links: bool = option(
        True,
        "let the callback of a sitemap page request further pages; off (sitemap only), "
        "its requests are dropped unless their meta has sitemap_reader_link=True",
        convert=boolean,
        cli=_SCRAPY_ONLY,
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
    )
    redis_poll: float = option(
        1.0,
        "seconds between lease renewals and between polls of a waiting process",
        convert=seconds(),
        cli=_REDIS_ONLY,
    )
    redis_key: str = option(
        "%(spider)s:sitemap_reader",
        "prefix of the shared state's keys in Redis (%(spider)s: the spider's name)",
        convert=key_prefix,
        cli=_REDIS_ONLY,
    )


#: The option groups a Scrapy crawl reads settings for (the scheduler's apart: only it
#: reads them, see :func:`redis_options`).
SCRAPY_GROUPS: Final[dict[str, type]] = {**GROUPS, "scrapy": ScrapyOptions}


def setting_fields(*groups: type) -> Iterator[tuple[str, dataclasses.Field[Any]]]:
    """Every option of ``groups`` (without any: of :data:`SCRAPY_GROUPS`) that is a Scrapy
    setting, with its setting's name."""
    for group in groups or SCRAPY_GROUPS.values():
        for item in dataclasses.fields(group):
            name = scrapy_setting(item)
            if name is not None:
                yield name, item


def setting_name(name: str) -> str:
    """The setting of the option of flat name ``name``."""
    for setting, item in setting_fields():
        if item.name == name:
            return setting
    raise KeyError(name)


def default_settings() -> dict[str, Any]:
    """The settings the add-on sets at ``addon`` priority: every option's default (not
    Scrapy's own settings, which have theirs)."""
    return {
        name: item.default
        for name, item in setting_fields()
        if name.startswith("SITEMAP_READER_") and item.default is not None
    }


def options_from_settings(
    settings: BaseSettings, overrides: Mapping[str, object] | None = None
) -> tuple[Options, ScrapyOptions]:
    """The options a crawl's settings give (unset ones keep their defaults), with
    ``overrides`` by flat name on top (a spider's ``sitemap_*`` attributes). A refused
    value is a UsageError naming its setting."""
    flat = _read(settings)
    flat.update(overrides or {})
    return with_group("Scrapy settings", None, flat, ("scrapy", ScrapyOptions))


def redis_options(settings: BaseSettings) -> RedisOptions:
    """The scrapy-redis scheduler's options from a crawl's settings (unset ones keep
    their defaults); a refused value is a UsageError naming its setting."""
    return RedisOptions(**_read(settings, RedisOptions))  # type: ignore[arg-type]


def _read(settings: BaseSettings, *groups: type) -> dict[str, object]:
    """The options the settings set (of ``groups``, as :func:`setting_fields` reads
    them), by flat name, each checked."""
    flat: dict[str, object] = {}
    for name, item in setting_fields(*groups):
        raw = settings.getlist(name) if spec_of(item).repeat else settings.get(name)
        if raw is None or (spec_of(item).repeat and not raw):
            continue
        flat[item.name] = _checked(name, item, raw)
    return flat


def spider_overrides(spider: object) -> dict[str, object]:
    """A spider's ``sitemap_<name>`` attributes that name an option or a group (None or
    empty: unset), by the option's flat name, each checked (an error names the
    attribute)."""
    found: dict[str, object] = {}
    for group_name, group in SCRAPY_GROUPS.items():
        found.update(_attribute(spider, group_name, None))
        for item in dataclasses.fields(group):
            found.update(_attribute(spider, item.name, item))
    return found


def _attribute(spider: object, name: str, item: dataclasses.Field[Any] | None) -> dict[str, object]:
    value = getattr(spider, f"sitemap_{name}", None)
    if value is None or (isinstance(value, str | tuple | list) and not value):
        return {}
    return {name: value if item is None else _checked(f"sitemap_{name}", item, value)}


def _checked(name: str, item: dataclasses.Field[Any], raw: object) -> object:
    """``raw`` read by the option's converter; a refusal names the setting ``name``."""
    try:
        return convert_value(item, raw)
    except OptionError as exc:
        raise UsageError(f"{name}: {exc.reason}") from None
