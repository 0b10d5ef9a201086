"""The seam between the core and the parser of a sitemap body: parsing may happen elsewhere.

The core keeps every policy of a job (what to fetch, the caps, the deadline, the dedupe,
the scope, the shaping of records); only the turning of bytes into items is delegated,
through a :data:`ParserFactory` the driver may supply. The default,
:func:`local_parser`, is the in-process :class:`~sitemap_reader.parse.SitemapParser`.

A factory gets the parse inputs of the job (a :class:`BodySpec`) and returns a
:class:`BodyParser`. A parser
that works in another process returns from :meth:`BodyParser.feed` the items that came
back so far (``feed(b"")`` only collects), and builds each record in this process with
``build``, so the core sees records exactly as its own parser would build them. When
such items arrive while no chunk is being fed, the driver reports
:meth:`~sitemap_reader.discovery.Discovery.parsed` and the core collects them.

Anything a parser raises (here or reported from elsewhere) becomes the sitemap's
``internal`` problem, like any other exception of a job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sitemap_reader.options.limits import Limits
from sitemap_reader.parse.parser import Item, SitemapParser
from sitemap_reader.records import Problem, RecordBuilder


class BodyParser(Protocol):
    """What the core needs of the parser of one body (a :class:`SitemapParser` is one)."""

    limits: Limits
    done: bool
    complete: bool
    bytes_out: int

    @property
    def format(self) -> str: ...

    @property
    def problems(self) -> list[Problem]: ...

    def feed(self, data: bytes) -> list[Item]: ...

    def close(self) -> list[Item]: ...


@dataclass(frozen=True, slots=True)
class BodySpec:
    """The parse inputs of one body: its final URL (None: a local file), the content type
    the server gave, the protocol to the letter or not, the bounds, the run's clock, the
    job's record builder, and the ``size`` the response announced (its Content-Length;
    None when it gave none)."""

    url: str | None
    content_type: str | None
    strict: bool
    limits: Limits
    now: datetime
    build: RecordBuilder
    size: int | None = None


#: Makes the parser of one sitemap body (see the module docstring).
ParserFactory = Callable[[BodySpec], BodyParser]
#: A driver's per-sitemap deadline: True once it passed (read between slices of a body).
Expired = Callable[[], bool]


def local_parser(spec: BodySpec) -> BodyParser:
    """The in-process parser (the default factory; ``size`` does not matter here)."""
    return SitemapParser(
        spec.url,
        spec.content_type,
        strict=spec.strict,
        limits=spec.limits,
        now=spec.now,
        build=spec.build,
    )
