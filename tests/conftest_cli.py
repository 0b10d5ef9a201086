"""Helpers for the CLI tests: run the installed command, serve small sites on 127.0.0.1.

The command runs as a real subprocess (the ``sitemap-reader`` script of the venv that runs
the tests, forked from a process that imported it: see :mod:`tests.cli_zygote`), driven
from the test's event loop with asyncio subprocesses, so an aiohttp test server in the
same loop answers its requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.cli_zygote import write_shim

#: The command to run: the shim of :mod:`tests.cli_zygote`, which runs the installed console
#: script (next to the interpreter running the tests) as a fork of a process that imported
#: it already, or execs it when it cannot (``pytest --real-cli``: always).
SITEMAP_READER = write_shim()

#: One URL set as a template; ``{base}`` becomes the server's origin.
URLSET = """<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:xhtml="http://www.w3.org/1999/xhtml"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
{entries}
</urlset>
"""
INDEX = """<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
{entries}
</sitemapindex>
"""


def urlset(*entries: str) -> str:
    """A urlset template from ``<url>`` entries (plain paths become ``<loc>{base}PATH``)."""
    return URLSET.format(entries="\n".join(_entry(e) for e in entries))


def _entry(entry: str) -> str:
    return entry if entry.startswith("<") else f"<url><loc>{{base}}{entry}</loc></url>"


def index(*paths: str) -> str:
    """A sitemap index template naming the child paths."""
    items = "\n".join(f"<sitemap><loc>{{base}}{p}</loc></sitemap>" for p in paths)
    return INDEX.format(entries=items)


@dataclass(frozen=True, slots=True)
class Doc:
    """One response of a test site: a template body, a status, a type, maybe gzipped."""

    body: str
    status: int = 200
    content_type: str = "application/xml"
    gzipped: bool = False

    def render(self, base: str) -> bytes:
        """The body for a server whose origin is ``base``."""
        data = self.body.replace("{base}", base).encode()
        return gzip.compress(data, mtime=0) if self.gzipped else data


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(slots=True)
class Site:
    """A small site: documents by path, custom handlers, and a log of the requests."""

    docs: Mapping[str, Doc | str] = field(default_factory=dict)
    handlers: Mapping[str, Handler] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)  # (path, User-Agent)

    def app(self) -> web.Application:
        """The aiohttp application serving the site."""
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._serve)
        return app

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.path, request.headers.get("User-Agent", "")))
        if request.path in self.handlers:
            return await self.handlers[request.path](request)
        doc = self.docs.get(request.path)
        if doc is None:
            return web.Response(status=404, text="not found")
        if isinstance(doc, str):
            doc = Doc(doc)
        body = doc.render(str(request.url.origin()))
        return web.Response(status=doc.status, body=body, content_type=doc.content_type)

    def paths(self) -> list[str]:
        """The paths requested so far, in order."""
        return [path for path, _ in self.requests]


@dataclass(frozen=True, slots=True)
class Result:
    """A finished run of the command."""

    code: int
    out: str
    err: str

    def jsonl(self) -> list[dict[str, Any]]:
        """stdout parsed as JSON Lines (each line must be a whole JSON object)."""
        return [json.loads(line) for line in self.out.splitlines()]

    def urls(self) -> list[str]:
        """The ``url`` of each JSONL record, in output order."""
        return [record["url"] for record in self.jsonl()]


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for the command: ours, minus colour and terminal hints."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM", "COLUMNS")}
    env.update(extra)
    return env


async def run_cli(
    *args: str,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Result:
    """Run ``sitemap-reader ARGS`` to the end; stdout and stderr captured."""
    proc = await asyncio.create_subprocess_exec(
        SITEMAP_READER,
        *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(env) if env is not None else cli_env(),
        cwd=cwd,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin), timeout=30)
    assert proc.returncode is not None
    return Result(proc.returncode, out.decode(), err.decode())


@contextlib.asynccontextmanager
async def stalling_site(
    start: Callable[[web.Application], Awaitable[TestServer]],
) -> AsyncIterator[tuple[str, asyncio.Event]]:
    """A site whose ``/sitemap.xml`` indexes a sitemap that stalls mid-body (one URL
    sent, then nothing until the block ends) and one of four URLs that answers once the
    first stalled; its origin and the event set when the stall began."""
    sent, release = asyncio.Event(), asyncio.Event()

    async def slow(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/xml"})
        await response.prepare(request)
        base = str(request.url.origin())
        await response.write(b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">')
        await response.write(f"<url><loc>{base}/slow/1</loc></url>\n".encode())
        sent.set()
        await release.wait()
        return response

    async def fast(request: web.Request) -> web.StreamResponse:
        await sent.wait()  # the slow one is in flight when these records arrive
        body = urlset("/a", "/b", "/c", "/d").replace("{base}", str(request.url.origin()))
        return web.Response(body=body.encode(), content_type="application/xml")

    site = Site({"/sitemap.xml": index("/slow.xml", "/fast.xml")},
                handlers={"/slow.xml": slow, "/fast.xml": fast})  # fmt: skip
    server = await start(site.app())
    try:
        yield str(server.make_url("")).rstrip("/"), sent
    finally:
        release.set()
