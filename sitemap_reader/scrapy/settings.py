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
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from sitemap_reader.errors import UsageError
from sitemap_reader.options import GROUPS, Options
from sitemap_reader.options.declare import (
    OptionError,
    convert_value,
    spec_of,
)
from sitemap_reader.options.doors import PREFIX, scrapy_setting
from sitemap_reader.options.groups import with_group
from sitemap_reader.options.keywords import unknown
from sitemap_reader.options.scrapy import RedisOptions as RedisOptions
from sitemap_reader.options.scrapy import ScrapyOptions as ScrapyOptions
from sitemap_reader.options.scrapy import target_list as target_list

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

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
        if name.startswith(PREFIX) and item.default is not None
    }


def options_from_settings(
    settings: BaseSettings, overrides: Mapping[str, object] | None = None
) -> tuple[Options, ScrapyOptions]:
    """The options a crawl's settings give (unset ones keep their defaults), with
    ``overrides`` by flat name on top (a spider's ``sitemap_*`` attributes). A refused
    value is a UsageError naming its setting."""
    _refuse_unknown(settings)
    flat = _read(settings)
    flat.update(overrides or {})
    return with_group("Scrapy settings", None, flat, ("scrapy", ScrapyOptions))


def _refuse_unknown(settings: BaseSettings) -> None:
    """A ``SITEMAP_READER_*`` setting that names no option (a misspelling) is a
    UsageError naming it and the nearest setting, as a Python keyword's is; one named
    after an option Scrapy sets its own way says how."""
    groups = (*SCRAPY_GROUPS.values(), RedisOptions)
    known = [name for name, _ in setting_fields(*groups)]
    elsewhere = {
        PREFIX + item.name.upper(): spec_of(item).scrapy
        for group in groups
        for item in dataclasses.fields(group)
        if isinstance(spec_of(item).scrapy, str)
    }
    for name in settings:
        if not isinstance(name, str) or not name.startswith(PREFIX) or name in known:
            continue
        if name in elsewhere:
            raise UsageError(f"Scrapy settings: {name} is not a setting: {elsewhere[name]}")
        raise unknown("Scrapy settings", name, known, what="setting")


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
