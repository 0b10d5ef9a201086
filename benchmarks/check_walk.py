"""``check`` and ``report`` before and after the one walk (issue 18.4): a table of cases.

Each case is served on 127.0.0.1 by this process (an aiohttp site that counts the
requests it sees, and a loopback proxy that does the same) and ``sitemap-reader check``
runs as a child process that records its own peak resident set (``VmHWM``, through
``tests/hostile/hwm_launcher.py``). ``--source DIR`` runs the package found in DIR
instead of the installed one (``--source /work/main`` measures the code before the
change, read-only). Nothing leaves loopback: the site and the proxy are on 127.0.0.1,
and the proxied target is a 127.0.0.1 port where nothing listens.

    .venv/bin/python benchmarks/check_walk.py                      # after
    .venv/bin/python benchmarks/check_walk.py --source /work/main  # before

Cases: ``attributes`` (a 12 MB gzip child: one start tag with 5 M attributes),
``names`` (5.6 M distinct element names), ``endless`` (a urlset that never ends, with
``--timeout 30``), ``sparse`` (a 6 GiB sparse local file), ``stdin`` (65 MiB on
standard input), ``proxy`` (``--proxy P --header 'Cookie: ..'``: who saw the requests),
``once`` (a plain site: requests per file).
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestServer

if __package__ in (None, ""):  # run as a script: make the checkout importable (see
    # discovery.py for why this folder itself must stay off the path)
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
    sys.path.insert(0, str(_here.parent))

from tests.hostile.floods import attributes, element_names

LAUNCHER = Path(__file__).resolve().parent.parent / "tests" / "hostile" / "hwm_launcher.py"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
HEAD = f'<urlset xmlns="{NS}"><url><loc>{{base}}/a</loc></url>'


def _gzip(pieces: Iterator[bytes]) -> bytes:
    """The whole gzip of a flood, made once before the run (level 1: seconds)."""
    packer = gzip.compress(b"".join(pieces), compresslevel=1)
    return packer


class Bench:
    """The site and the proxy of every case, counting requests by path."""

    def __init__(self) -> None:
        self.site_hits: Counter[str] = Counter()
        self.proxy_hits: Counter[str] = Counter()
        self.cookies: set[str | None] = set()
        self.bodies: dict[str, bytes] = {}

    async def site(self, request: web.Request) -> web.StreamResponse:
        self.site_hits[request.path] += 1
        return await self._answer(request, str(request.url.origin()))

    async def proxy(self, request: web.Request) -> web.StreamResponse:
        self.proxy_hits[request.path] += 1
        self.cookies.add(request.headers.get("Cookie"))
        return await self._answer(request, str(request.url.origin()))

    async def _answer(self, request: web.Request, base: str) -> web.StreamResponse:
        if request.path == "/endless.xml":
            response = web.StreamResponse()
            await response.prepare(request)
            await response.write(HEAD.replace("{base}", base).encode())
            try:
                while True:
                    await response.write(b" " * 65536)
            except (ConnectionError, asyncio.CancelledError):
                return response
        body = self.bodies.get(request.path)
        if body is None:
            return web.Response(status=404)
        return web.Response(body=body.replace(b"{base}", base.encode()))


def _index(*paths: str) -> bytes:
    items = "".join(f"<sitemap><loc>{{base}}{p}</loc></sitemap>" for p in paths)
    return f'<sitemapindex xmlns="{NS}">{items}</sitemapindex>'.encode()


async def _run(
    args: list[str], source: str | None, stdin: bytes | None = None
) -> dict[str, object]:
    fd, peak = tempfile.mkstemp(prefix="hwm-")
    os.close(fd)
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = source
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(LAUNCHER), peak, *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await proc.communicate(stdin)
    seconds = time.monotonic() - started
    text = Path(peak).read_text().strip()
    os.unlink(peak)
    errs = err.decode(errors="replace").strip().splitlines()
    try:
        files = json.loads(out)["files"]
        says: object = {
            f["url"].rsplit("/", 1)[-1]: sorted({x["code"] for x in f["findings"]})
            for f in files
            if f["findings"]
        }
    except ValueError:  # no JSON: a traceback or a usage error
        says = errs[-1][:160] if errs else ""
    return {
        "code": proc.returncode,
        "seconds": round(seconds, 1),
        "peak_mib": round(int(text or 0) / 1024),
        "findings": says,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", help="run the package in this directory (read-only)")
    parser.add_argument("--cases", default="once,proxy,attributes,names,endless,sparse,stdin")
    options = parser.parse_args()
    bench = Bench()
    site_app, proxy_app = web.Application(), web.Application()
    site_app.router.add_get("/{tail:.*}", bench.site)
    proxy_app.router.add_get("/{tail:.*}", bench.proxy)
    site, proxy = TestServer(site_app, host="127.0.0.1"), TestServer(proxy_app, host="127.0.0.1")
    await site.start_server()
    await proxy.start_server()
    base = str(site.make_url("")).rstrip("/")
    head = HEAD.replace("{base}", base).encode()
    bench.bodies.update(
        {
            "/robots.txt": b"User-agent: *\nSitemap: {base}/index.xml\n",
            "/index.xml": _index("/a.xml", "/b.xml.gz"),
            "/a.xml": head + b"</urlset>",
            "/b.xml.gz": gzip.compress(head + b"</urlset>"),
            "/attributes.xml.gz": _gzip(iter([head, *attributes(), b"</urlset>"])),
            "/names.xml.gz": _gzip(iter([head, *element_names(), b"</urlset>"])),
        }
    )
    bench.bodies["/attributes-index.xml"] = _index("/a.xml", "/attributes.xml.gz")
    bench.bodies["/names-index.xml"] = _index("/a.xml", "/names.xml.gz")
    bench.bodies["/endless-index.xml"] = _index("/a.xml", "/endless.xml")
    common = ["--no-progress", "--allow-private", "--json"]
    with tempfile.TemporaryDirectory() as tmp:
        sparse = Path(tmp) / "sparse.xml"
        with sparse.open("wb") as handle:
            handle.write(HEAD.replace("{base}", "https://example.com").encode())
            handle.truncate(6 << 30)
        dead = TestServer(web.Application(), host="127.0.0.1")
        await dead.start_server()
        dead_origin = str(dead.make_url("")).rstrip("/")
        await dead.close()  # a port where nothing listens: only the proxy can answer
        cases = {
            "once": ["check", base + "/", *common],
            "proxy": ["check", dead_origin + "/", *common, "--proxy", str(proxy.make_url(""))
                      .rstrip("/"), "--header", "Cookie: session=1"],
            "attributes": ["check", base + "/attributes-index.xml", *common],
            "names": ["check", base + "/names-index.xml", *common],
            "endless": ["check", base + "/endless-index.xml", *common, "--timeout", "30"],
            "sparse": ["check", str(sparse), *common],
            "stdin": ["check", "-", *common],
        }  # fmt: skip
        stdin_body = HEAD.replace("{base}", "https://example.com").encode() + b" " * (65 << 20)
        for name in options.cases.split(","):
            bench.site_hits.clear()
            bench.proxy_hits.clear()
            result = await _run(
                cases[name], options.source, stdin_body if name == "stdin" else None
            )
            result["site requests"] = dict(bench.site_hits)
            if name == "proxy":
                result["proxy requests"] = dict(bench.proxy_hits)
                result["cookies at proxy"] = sorted(map(str, bench.cookies))
            print(name, result, flush=True)
    await site.close()
    await proxy.close()


if __name__ == "__main__":
    asyncio.run(main())
