"""The keyword arguments of :class:`~sitemap_reader.SitemapReader`, as a TypedDict.

:func:`~sitemap_reader.iter_urls` passes its keyword arguments on to the reader; typing
them as ``**options: Unpack[ReaderOptions]`` lets a type checker and an editor see every
one of them (a misspelt keyword is an error before anything runs). A test keeps this in
step with ``SitemapReader.__init__``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from aiohttp import ClientSession
    from aiohttp.abc import AbstractResolver

    from sitemap_reader.limits import Limits
    from sitemap_reader.scoring import ScoreFunc


class ReaderOptions(TypedDict, total=False):
    """Every keyword of :class:`~sitemap_reader.SitemapReader` (all optional)."""

    concurrency: int
    per_host: int
    timeout: float | None
    strict: bool
    scope: str
    robots: bool
    guess: bool
    user_agent: str | None
    limits: Limits | None
    score: ScoreFunc | None
    allow_private: bool | None
    resolver: AbstractResolver | None
    state: str | os.PathLike[str] | None
    changed_only: bool
    removed: bool
    trust_index_lastmod: bool
    state_commit: str
    processes: int | None
    headers: Mapping[str, str] | None
    header_hosts: str
    proxy: str | None
    trust_env: bool
    session: ClientSession | None
    delay: float
    crawl_delay: bool
    obey_robots: bool
    follow: Sequence[str | re.Pattern[str]]
    guess_paths: Sequence[str] | None
    read_depth: int | None
    html: bool | str | None
    parent: bool
    since: datetime | None
    follow_urlset_sitemaps: bool
    deadline: float | None
