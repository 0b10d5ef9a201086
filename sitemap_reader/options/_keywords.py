"""The front doors' flat keywords, typed (from :mod:`sitemap_reader.options`).

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

ReaderKeywords = TypedDict(
    "ReaderKeywords",
    {
        "walk": "Walk",
        "scope": "Literal['site', 'host', 'any']",
        "robots": "bool",
        "guess": "bool",
        "guess_paths": "Sequence[str] | None",
        "follow": "Sequence[str | re.Pattern[str]] | Callable[[str], bool]",
        "read_depth": "int | None",
        "since": "datetime | date | str | None",
        "trust_index_lastmod": "bool",
        "html": "bool | Literal['fallback', 'always'] | None",
        "parent": "bool",
        "twin": "bool",
        "follow_urlset_sitemaps": "bool",
        "strict": "bool",
        "score": "ScoreFunc | None",
        "politeness": "Politeness",
        "user_agent": "str",
        "robots_agent": "str | None",
        "obey_robots": "bool",
        "delay": "float",
        "crawl_delay": "bool",
        "host_budget": "str | None",
        "timeouts": "Timeouts",
        "deadline": "float | None",
        "timeout": "float",
        "connect_timeout": "float",
        "read_timeout": "float",
        "parallelism": "Parallelism",
        "concurrency": "int",
        "per_host": "int",
        "processes": "int | None",
        "network": "Network",
        "headers": "Mapping[str, str] | Sequence[str | tuple[str, str]]",
        "header_hosts": "Literal['site', 'any']",
        "proxy": "str | None",
        "per_target": "Mapping[str, Mapping[str, object]]",
        "trust_env": "bool",
        "client": "Literal['aiohttp', 'browser', 'auto']",
        "allow_private": "bool | Literal['never'] | None",
        "incremental": "Incremental",
        "state": "str | os.PathLike[str] | None",
        "changed_only": "bool",
        "removed": "bool",
        "state_commit": "Literal['sitemap', 'run']",
        "delivery": "Delivery",
        "include": "Sequence[str | re.Pattern[str]] | str",
        "exclude": "Sequence[str | re.Pattern[str]] | str",
        "max_urls": "int | None",
        "ranked": "bool",
        "top": "int | None",
        "sample": "int | None",
        "seed": "int | None",
        "limits": "Limits",
        "max_decompressed_bytes": "int",
        "max_gzip_layers": "int",
        "max_gzip_members": "int",
        "max_urls_per_sitemap": "int | None",
        "max_url_length": "int",
        "max_text_length": "int",
        "max_extensions_per_url": "int",
        "max_wire_bytes": "int | None",
        "max_xml_token": "int",
        "max_xml_depth": "int",
        "max_xml_names": "int",
        "max_xml_name_chars": "int",
        "max_xml_namespaces": "int",
        "max_robots_bytes": "int",
        "max_robots_redirects": "int",
        "max_depth": "int",
        "max_sitemaps": "int",
        "max_redirects": "int",
        "max_ranked_in_memory": "int",
        "retries": "int",
        "body_retries": "int",
        "max_host_storm_failures": "int",
        "max_retry_after": "float",
        "backoff_base": "float",
        "max_crawl_delay": "float",
        "max_html_bytes": "int",
        "max_html_links": "int",
        "max_html_depth": "int",
        "max_html_pages": "int",
        "max_html_token": "int",
        "max_html_held": "int",
    },
    total=False,
)


class LoaderKeywords(ReaderKeywords, total=False):
    """The reader's keywords and the loader's own."""

    loader: LoaderOptions
    progress: str | os.PathLike[str] | None
    buffer: int
    best_first: bool
    order: Literal["sites", "hosts", "intake"] | Callable[[bool], Any]
    max_tries: int
    extend: bool
    restart: bool


class DeliveryKeywords(TypedDict, total=False):
    """What one call may change of what is delivered."""

    delivery: Delivery
    include: Sequence[str | re.Pattern[str]] | str
    exclude: Sequence[str | re.Pattern[str]] | str
    max_urls: int | None
    ranked: bool
    top: int | None
    sample: int | None
    seed: int | None
