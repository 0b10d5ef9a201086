"""How each door spells an option: its CLI flag, its Scrapy setting, its default as shown."""

from __future__ import annotations

import dataclasses
from typing import Any

from sitemap_reader.options.declare import spec_of


def scrapy_setting(item: dataclasses.Field[Any]) -> str | None:
    """The Scrapy setting an option is read from (None: not a Scrapy option)."""
    spec = spec_of(item)
    if spec.scrapy is not True:
        return None
    return spec.setting or "SITEMAP_READER_" + item.name.upper()


def cli_flag(item: dataclasses.Field[Any]) -> str | None:
    """The CLI flag of an option (None: not a CLI option)."""
    spec = spec_of(item)
    if spec.cli is not True:
        return None
    if spec.flag is not None:
        return spec.flag
    if item.default is True:
        return "--no-" + item.name.replace("_", "-")
    return "--" + item.name.replace("_", "-")


def shown_default(item: dataclasses.Field[Any]) -> str:
    """A field's default as the option table shows it."""
    default = item.default
    if default is dataclasses.MISSING or default is None or default == ():
        return "none"
    if isinstance(default, bool):
        return "true" if default else "false"
    if isinstance(default, int) and not isinstance(default, bool) and default >= 10_000:
        return f"{default:,}"
    if isinstance(default, float):
        return f"{default:g}"
    return str(default)
