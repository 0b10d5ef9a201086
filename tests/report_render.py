"""``make check-report``: render ``sitemap-reader report`` in headless Chromium and check it.

Not part of ``make test`` (it needs Debian's chromium, which the make target installs).
Three reports are written with the real command: the demo site's, a 24,507-URL site's and
one of URL paths 1,500 letters long (:mod:`tests.big_site`), all on 127.0.0.1. Each is
rendered at 390 px (a phone) and at 1280 px, with the network off (the page must need
none), inside a frame of that width
(headless Chromium will not lay a window out narrower than 500 px; a frame it will):

- a screenshot (``--screenshot``), whose PNG is decoded here (zlib and the PNG filters,
  no imaging library) and must have the window's size and a share of ink;
- the DOM after layout (``--dump-dom``), the framed copy of the page having one probe
  script added (the report itself has none): it records the page's scroll width against
  the frame's, the widest element that sticks out of it, and each chart's bars. The page
  fails on horizontal overflow, and on a chart whose bars do not add up to the URL card.

Run: ``python tests/report_render.py [OUT_DIR]``; exit 0 when every check passes. The
screenshots stay in OUT_DIR (``demo-390.png``, ``big-1280.png``, ...).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from html import escape, unescape
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.big_site import BigSite, LongUrlSite, serve

WIDTHS = (390, 1280)
HEIGHT = 2400
#: Share of pixels that must differ from the white background: text, tables and bars.
MIN_INK = 0.02
#: The flags Chromium runs with: headless, no sandbox (root in CI), nothing fetched from
#: anywhere but the file (no QUIC, no background or component traffic, a fresh profile).
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--proxy-server=127.0.0.1:9",  # nothing may be fetched: the page is whole
    "--proxy-bypass-list=<-loopback>",
)
#: Added to the framed copy of the page only: what the layout came to, as JSON in the
#: frame's parent (the page ``--dump-dom`` prints).
PROBE = """<script>
(function () {
  var doc = document.documentElement, width = window.innerWidth, out = [];
  document.querySelectorAll('body *').forEach(function (el) {
    var box = el.getBoundingClientRect(), up = el.parentElement, clipped = false;
    while (up && up !== document.body) {
      if (getComputedStyle(up).overflowX !== 'visible') { clipped = true; break; }
      up = up.parentElement;
    }
    if (!clipped && box.right > width + 1) out.push(el.tagName + '.' + el.className + ' ' +
      Math.round(box.right));
  });
  var charts = [];
  document.querySelectorAll('[data-total]').forEach(function (chart) {
    var sum = 0;
    chart.querySelectorAll('[data-count]').forEach(function (bar) {
      sum += Number(bar.getAttribute('data-count'));
    });
    charts.push([chart.closest('section').id, Number(chart.getAttribute('data-total')), sum]);
  });
  var card = document.querySelector('[data-urls]');
  var result = {width: width, scroll: doc.scrollWidth, overflow: out.slice(0, 5),
    charts: charts, urls: card ? Number(card.getAttribute('data-urls')) : null};
  parent.document.body.setAttribute('data-probe', JSON.stringify(result));
})();
</script>"""


def decode_png(data: bytes) -> tuple[int, int, int, bytes]:
    """(width, height, channels, raw pixel rows without filter bytes) of an 8-bit PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        chunk = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if chunk == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}")
            channels = 3 if colour == 2 else 4
        elif chunk == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    out = bytearray()
    previous = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        filter_type = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if filter_type == 1:
                line[i] = (line[i] + left) & 0xFF
            elif filter_type == 2:
                line[i] = (line[i] + up) & 0xFF
            elif filter_type == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif filter_type == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                line[i] = (line[i] + pred) & 0xFF
        out += line
        previous = line
    return width, height, channels, bytes(out)


def ink_share(width: int, height: int, channels: int, pixels: bytes) -> float:
    """Share of pixels that are not (near) white."""
    inked = 0
    for i in range(0, width * height * channels, channels):
        if min(pixels[i], pixels[i + 1], pixels[i + 2]) < 235:
            inked += 1
    return inked / (width * height)


class Charts(HTMLParser):
    """The charts of a report as written: (section, data-total, sum of data-count)."""

    def __init__(self) -> None:
        super().__init__()
        self.section = ""
        self.charts: list[list[int | str]] = []
        self.urls: int | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "section":
            self.section = values.get("id") or ""
        if values.get("data-urls") is not None:
            self.urls = int(values["data-urls"] or 0)
        if values.get("data-total") is not None:
            self.charts.append([self.section, int(values["data-total"] or 0), 0])
        if values.get("data-count") is not None and self.charts:
            self.charts[-1][2] = int(self.charts[-1][2]) + int(values["data-count"] or 0)


def chart_failures(html: str) -> list[str]:
    """Every chart whose bars do not add up to its total or whose total is not the URL
    card's count (read from the HTML itself)."""
    page = Charts()
    page.feed(html)
    if page.urls is None:
        return ["no URL card (data-urls)"]
    if not page.charts:
        return ["no chart (data-total)"]
    return [
        f"{section}: bars add up to {added:,}, total {total:,}, URL card {page.urls:,}"
        for section, total, added in page.charts
        if not added == total == page.urls
    ]


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("chromium is not installed (make check-report installs it)")


def _chromium(width: int, *args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [
                chromium(),
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{HEIGHT}",
                *args,
            ],
            check=True,
            capture_output=True,
            text=True,
            timeout=180,
        )


def framed(html: Path, width: int) -> Path:
    """A page holding the report in a frame ``width`` px wide, the probe added.

    Headless Chromium lays a window out at no less than 500 px, whatever
    ``--window-size`` says; a frame is laid out at its own width, so the report inside
    sees a 390 px viewport as a phone's browser would (``srcdoc``: same origin, so the
    probe can write its result into the parent)."""
    page = html.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>")
    frame = html.with_name(f"{html.stem}-{width}.frame.html")
    frame.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">'
        f'<iframe style="border:0;display:block;width:{width}px;height:{HEIGHT}px" '
        f'srcdoc="{escape(page)}"></iframe></body></html>',
        encoding="utf-8",
    )
    return frame


def screenshot(frame: Path, png: Path, width: int) -> None:
    """The framed page at ``width`` px as a PNG."""
    _chromium(width, "--virtual-time-budget=5000", f"--screenshot={png}", frame.as_uri())


def layout(frame: Path, width: int) -> dict[str, object]:
    """What the probe found in the page laid out at ``width`` px."""
    dom = _chromium(width, "--virtual-time-budget=5000", "--dump-dom", frame.as_uri()).stdout
    found = re.search(r'data-probe="([^"]*)"', dom)
    if found is None:
        raise SystemExit(f"the probe did not run in {frame}")
    result: dict[str, object] = json.loads(unescape(found.group(1)))
    return result


async def write_reports(out: Path) -> dict[str, Path]:
    """The demo's report and the big site's, written by the real command."""
    from sitemap_reader import demo

    command = str(Path(sys.executable).parent / "sitemap-reader")
    pages = {"demo": out / "demo.html", "big": out / "big.html", "long": out / "long.html"}

    async def report(base: str, path: Path) -> None:
        proc = await asyncio.create_subprocess_exec(
            command, "report", base + "/", "-o", str(path), "-q"
        )
        if await proc.wait() not in (0, 1):
            raise SystemExit(f"sitemap-reader report {base}/ failed")

    async with demo.serve() as base:
        await report(base, pages["demo"])
    async with serve(BigSite()) as base:
        await report(base, pages["big"])
    async with serve(LongUrlSite()) as base:
        await report(base, pages["long"])
    return pages


def check(name: str, html: Path, width: int, out: Path) -> list[str]:
    """The checks of one page at one width; the failures."""
    png = out / f"{name}-{width}.png"
    frame = framed(html, width)
    try:
        screenshot(frame, png, width)
        probe = layout(frame, width)
    finally:
        frame.unlink()
    got_w, got_h, channels, pixels = decode_png(png.read_bytes())
    share = ink_share(got_w, got_h, channels, pixels)
    print(
        f"{png.name}: {got_w}x{got_h}, {os.path.getsize(png):,} bytes, ink {share:.1%}; "
        f"scroll width {probe['scroll']} in {probe['width']}; charts {probe['charts']}"
    )
    failures = []
    if (got_w, got_h) != (width, HEIGHT):
        failures.append(f"expected {width}x{HEIGHT}")
    if share < MIN_INK:
        failures.append(f"only {share:.1%} of the pixels are not background")
    if probe["width"] != width:
        failures.append(f"laid out at {probe['width']} px, not {width}")
    if int(str(probe["scroll"])) > int(str(probe["width"])) or probe["overflow"]:
        failures.append(f"horizontal overflow: {probe['scroll']} px; {probe['overflow']}")
    for section, total, added in probe["charts"]:  # type: ignore[attr-defined]
        if not added == total == probe["urls"]:
            failures.append(f"rendered chart {section}: {added} of {total}, card {probe['urls']}")
    return [f"{name} at {width} px: {failure}" for failure in failures]


def main() -> int:
    out = (Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())).resolve()
    out.mkdir(parents=True, exist_ok=True)
    pages = asyncio.run(write_reports(out))
    failures: list[str] = []
    for name, html in pages.items():
        failures += [f"{name}: {f}" for f in chart_failures(html.read_text(encoding="utf-8"))]
        for width in WIDTHS:
            failures += check(name, html, width, out)
    for failure in failures:
        print(f"FAIL: {failure}")
    print("ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
