"""What is generated from the declarations: the option table and the typed keywords.

``python -m sitemap_reader.options --write`` writes both into a checkout after an option
was added or changed; a test fails while either is out of step.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from sitemap_reader.options.declare import spec_of
from sitemap_reader.options.doors import cli_flag, scrapy_setting, shown_default
from sitemap_reader.options.groups import GROUPS, GROUPS_AND_LOADER, Delivery, LoaderOptions
from sitemap_reader.options.scrapy import RedisOptions, ScrapyOptions
from sitemap_reader.options.worker import WorkerLimits

#: The groups of the option table: a run's, the loader's, the Redis workers', a Scrapy
#: crawl's own and the scrapy-redis scheduler's.
TABLE_GROUPS: dict[str, type] = {
    **GROUPS_AND_LOADER,
    "worker": WorkerLimits,
    "scrapy": ScrapyOptions,
    "scrapy-redis": RedisOptions,
}


def markdown(groups: Mapping[str, type] | None = None) -> str:
    """The option table of the docs: one row per option, grouped, with its doors: the Python keyword
    (``SitemapReader``, ``iter_urls``, the engines), the loader's, the CLI flag and the
    Scrapy setting; where a door lacks an option, why."""
    lines = [
        "| Python keyword | loader | CLI flag | Scrapy setting | default | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for group_name, group in (groups or TABLE_GROUPS).items():
        lines.append(f"| **{group_name}** | | | | | |")
        for item in dataclasses.fields(group):
            spec = spec_of(item)
            flag_ = cli_flag(item)
            cli_cell = f"`{flag_}`" if flag_ else f"— ({spec.cli})"
            setting = scrapy_setting(item)
            scrapy_cell = f"`{setting}`" if setting else f"— ({spec.scrapy})"
            loader_cell = "yes" if spec.loader is True else f"— ({spec.loader})"
            meaning = spec.help.replace("|", "\\|").replace("<", "&lt;")
            lines.append(
                f"| `{item.name}` | {loader_cell} | {cli_cell} | {scrapy_cell} | "
                f"{shown_default(item)} | {meaning} |"
            )
    return "\n".join(lines) + "\n"


#: The typed mirror of the flat keywords, for editors and mypy (generated, see below).
_KEYWORDS_HEADER = '''"""The front doors' flat keywords, typed (from :mod:`sitemap_reader.options`).

Do not edit: ``python -m sitemap_reader.options --write`` writes it again (and the option
table), and a test fails when it is out of step with the declarations.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    from sitemap_reader.options import (
        Delivery,
        Incremental,
        LoaderOptions,
        Network,
        Parallelism,
        Politeness,
        Timeouts,
        Walk,
    )
    from sitemap_reader.options.limits import Limits
    from sitemap_reader.records.scoring import ScoreFunc

__all__ = ["DeliveryKeywords", "LoaderKeywords", "ReaderKeywords"]
__all__ += ["Any", "Callable", "Literal", "Mapping", "Sequence", "date", "datetime", "os", "re"]
'''


def _keyword_types(groups: Mapping[str, type]) -> Iterator[tuple[str, str]]:
    """Each flat keyword of ``groups`` and the type a caller may pass."""
    for group_name, group in groups.items():
        yield group_name, group.__name__
        for item in dataclasses.fields(group):
            yield item.name, spec_of(item).accepts or str(item.type)


def keywords_module() -> str:
    """The source of :mod:`sitemap_reader.options._keywords` (the typed flat keywords): the
    reader's, the loader's as a subclass adding its own, and the delivery's alone (what
    one call of ``SitemapReader.urls`` may change)."""
    reader = "\n".join(f'        "{n}": "{t}",' for n, t in _keyword_types(GROUPS))
    loader = "\n".join(f"    {n}: {t}" for n, t in _keyword_types({"loader": LoaderOptions}))
    delivery = "\n".join(f"    {n}: {t}" for n, t in _keyword_types({"delivery": Delivery}))
    return (
        f"{_KEYWORDS_HEADER}\n"
        f'ReaderKeywords = TypedDict(\n    "ReaderKeywords",\n    {{\n{reader}\n    }},\n'
        "    total=False,\n)\n\n\n"
        "class LoaderKeywords(ReaderKeywords, total=False):\n"
        '    """The reader\'s keywords and the loader\'s own."""\n\n'
        f"{loader}\n\n\n"
        "class DeliveryKeywords(TypedDict, total=False):\n"
        '    """What one call may change of what is delivered."""\n\n'
        f"{delivery}\n"
    )


#: The docs page of the option table (from a checkout's root), and the markers around the
#: table in it.
OPTIONS_PAGE = Path("docs", "reference", "options.md")
TABLE_BEGIN, TABLE_END = "<!-- options: begin -->\n", "<!-- options: end -->"


def write_derived(root: Path) -> None:
    """Write what derives from the declarations into a checkout: the typed keywords and
    the option table of the docs (after adding or changing an option)."""
    (root / "sitemap_reader" / "options" / "_keywords.py").write_text(keywords_module())
    page = root / OPTIONS_PAGE
    text = page.read_text()
    start = text.index(TABLE_BEGIN) + len(TABLE_BEGIN)
    page.write_text(text[:start] + markdown() + text[text.index(TABLE_END) :])


def main(argv: Sequence[str]) -> int:
    if list(argv) == ["--markdown"]:
        sys.stdout.write(markdown())
        return 0
    if list(argv) == ["--keywords"]:
        sys.stdout.write(keywords_module())
        return 0
    if list(argv) == ["--write"]:
        write_derived(Path(__file__).resolve().parents[2])
        return 0
    sys.stderr.write("usage: python -m sitemap_reader.options --markdown | --keywords | --write\n")
    return 2
