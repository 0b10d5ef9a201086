"""SitemapParser: feed()/close() over any sitemap body. (Being written: API is final.)"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sitemap_reader.limits import Limits
from sitemap_reader.records import Problem, SitemapRef, UrlRecord

Item = UrlRecord | SitemapRef


class SitemapParser:
    """Incremental parser for one sitemap body (any format, gzipped or not)."""

    format: str
    problems: list[Problem]
    complete: bool

    def __init__(
        self,
        url: str | None = None,
        content_type: str | None = None,
        *,
        strict: bool = False,
        limits: Limits | None = None,
        now: datetime | None = None,
    ) -> None:
        self.url = url
        self.format = "unknown"
        self.problems = []
        self.complete = True
        self.done = False
        self.bytes_in = 0
        self.bytes_out = 0

    def feed(self, data: bytes) -> list[Item]:
        raise NotImplementedError

    def close(self) -> list[Item]:
        raise NotImplementedError


@dataclass(slots=True)
class ParseResult:
    format: str
    urls: list[UrlRecord] = field(default_factory=list)
    sitemaps: list[SitemapRef] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    complete: bool = True


def parse(
    body: bytes | Iterable[bytes],
    url: str | None = None,
    content_type: str | None = None,
    *,
    strict: bool = False,
    limits: Limits | None = None,
) -> ParseResult:
    raise NotImplementedError
