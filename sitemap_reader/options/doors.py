"""How each door spells an option: its CLI flag, its Scrapy setting, its default as shown.

A door that tells a person about an option (a stop at ``max_urls``, a hint to turn one
on) names it the way that person sets it: :func:`spelling` gives each door's speller.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal

from sitemap_reader.options.declare import spec_of
from sitemap_reader.options.groups import GROUPS_AND_LOADER

#: The doors with a spelling of their own.
Door = Literal["python", "cli", "scrapy"]


#: What the Scrapy setting of an option is called: this, then its name in capitals.
PREFIX = "SITEMAP_READER_"


def scrapy_setting(item: dataclasses.Field[Any]) -> str | None:
    """The Scrapy setting an option is read from (None: not a Scrapy option)."""
    spec = spec_of(item)
    if spec.scrapy is not True:
        return None
    return spec.setting or PREFIX + item.name.upper()


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


def spelling(door: Door) -> Callable[[str], str]:
    """How ``door`` names an option given by its Python name: the name itself, the CLI
    flag, the Scrapy setting (an option the door lacks keeps its Python name).

    >>> spelling("cli")("max_urls"), spelling("scrapy")("since"), spelling("python")("since")
    ('--max-urls', 'SITEMAP_READER_SINCE', 'since')
    """
    if door == "python":
        return str
    spell = cli_flag if door == "cli" else scrapy_setting
    groups = GROUPS_AND_LOADER.values()
    fields = {item.name: item for group in groups for item in dataclasses.fields(group)}

    def spelled(name: str) -> str:
        item = fields.get(name)
        return (spell(item) if item is not None else None) or name

    return spelled
