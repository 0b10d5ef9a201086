"""The program of a parsing process (see :mod:`sitemap_reader.crawl.pool`).

Run by path (``runpy``), not imported through ``sitemap_reader.crawl``: it needs only the
parser, so a worker starts without aiohttp. It reads frames from stdin (a 4-byte
big-endian length, then a pickle), parses each job's chunks with its own
:class:`~sitemap_reader.parse.SitemapParser`, and writes one frame back per message:

- ``("open", job, (url, content_type, strict, limits, now))``: a parser for the job;
- ``("feed", job, chunk, when)``: parse a chunk (``when``: the monotonic time after
  which the job's deadline has passed; the chunk is parsed in slices, the clock read
  between) -> ``("items", job, packed, state, len(chunk))``;
- ``("close", job)``: end of body -> ``("end", job, packed, state, 0)``;
- ``("drop", job)``: forget the job (the parent gave up on it), no answer.

``packed`` holds one entry per item in document order: a plain record as the tuple
``(url, lastmod, changefreq, priority)``, anything else (a record with extensions, a
child sitemap) as the object itself; the parent rebuilds records with the job's own
builder. ``state`` is ``(format, done, complete, bytes_out, problems)``. Whatever raises
while serving a job answers ``("error", job, message)`` and ends that job only.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import time
from typing import IO, Any

from sitemap_reader.discovery.sitemaps import GZIP_SLICE, MAX_SLICE, feed_in_slices
from sitemap_reader.parse import sniff
from sitemap_reader.parse.parser import Item, SitemapParser
from sitemap_reader.records import UrlRecord, url_record_builder

Packed = list[Any]
#: The slice a job's first sliced feed starts with (adapts like the core's).
FIRST_SLICE = 16 * 1024
#: The worker's record builder: no score, no robots verdict, no source (the parent
#: builds each record again with the job's own builder, which gives them).
wire_record = url_record_builder(lambda priority, changefreq, lastmod: 0.0)


def pack(items: list[Item]) -> Packed:
    """Items in their compact wire form (see the module docstring)."""
    out: Packed = []
    add = out.append
    record_type = UrlRecord
    for item in items:
        if type(item) is record_type and not (
            item.alternates
            or item.images
            or item.videos
            or item.news is not None
            or item.title is not None
            or item.mobile
            or item.pagemaps
        ):
            add((item.url, item.lastmod, item.changefreq, item.priority))
        else:
            add(item)
    return out


def state(parser: SitemapParser) -> tuple[str, bool, bool, int, list[Any]]:
    """What the parent mirrors of a parser after each answer."""
    return (parser.format, parser.done, parser.complete, parser.bytes_out, parser.problems)


class _Job:
    __slots__ = ("cap", "parser", "step")

    def __init__(self, parser: SitemapParser) -> None:
        self.parser = parser
        self.step = FIRST_SLICE
        self.cap = MAX_SLICE


def _feed(job: _Job, chunk: bytes, when: float | None) -> list[Item]:
    """Feed a chunk; with a deadline, in slices of bounded work (as the core does)."""
    parser = job.parser
    if when is None:
        return parser.feed(chunk)
    if parser.bytes_in == 0 and sniff.is_gzip_prefix(chunk) is not False:
        job.cap = GZIP_SLICE
    # past the deadline the parent times the job out: the rest is moot
    items, job.step = feed_in_slices(
        parser, chunk, job.step, job.cap, lambda: time.monotonic() >= when
    )
    return items


def read_frame(stream: IO[bytes]) -> Any:
    """The next message, or None at end of stream."""
    head = stream.read(4)
    if len(head) < 4:
        return None
    body = stream.read(int.from_bytes(head, "big"))
    return pickle.loads(body)


def write_frame(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(4, "big"))
    stream.write(data)
    stream.flush()


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """Answer messages until ``("stop",)`` or the end of ``source``."""
    jobs: dict[int, _Job] = {}
    write_frame(sink, ("ready", os.getpid()))
    while True:
        message = read_frame(source)
        if message is None or message[0] == "stop":
            return
        op, number = message[0], message[1]
        try:
            if op == "open":
                url, content_type, strict, limits, now = message[2]
                parser = SitemapParser(
                    url, content_type, strict=strict, limits=limits, now=now, build=wire_record
                )
                jobs[number] = _Job(parser)
            elif op == "feed":
                job = jobs.get(number)
                if job is not None:
                    chunk = message[2]
                    items = _feed(job, chunk, message[3])
                    answer = ("items", number, pack(items), state(job.parser), len(chunk))
                    write_frame(sink, answer)
            elif op == "close":
                job = jobs.pop(number, None)
                if job is not None:
                    items = job.parser.close()
                    write_frame(sink, ("end", number, pack(items), state(job.parser), 0))
            elif op == "drop":
                jobs.pop(number, None)
            else:
                raise ValueError(f"unknown message {op!r}")
        except Exception as exc:  # this job fails, the process goes on
            jobs.pop(number, None)
            text = str(exc).strip()
            write_frame(sink, ("error", number, f"{type(exc).__name__}: {text}"))


def main() -> None:
    """Serve on stdin/stdout; anything printed by mistake goes to stderr."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):  # the parent is gone
        serve(source, sink)


if __name__ == "__main__":
    main()
