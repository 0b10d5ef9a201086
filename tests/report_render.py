"""``make check-report``: render ``sitemap-reader report`` in headless Chromium, check pixels.

Not part of ``make test`` (it needs Debian's chromium, which the make target installs).
Steps: serve the demo site on 127.0.0.1, write its report with the real command, take a
screenshot with ``chromium --headless --screenshot`` (network off: the page must need
none), then decode the PNG here (zlib and the PNG filters, no imaging library) and check
its size and that a good share of its pixels are not background.

Run: ``python tests/report_render.py [OUT_DIR]``; exit 0 when the checks pass.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

WIDTH, HEIGHT = 1280, 2000
#: Share of pixels that must differ from the white background: text, tables and bars.
MIN_INK = 0.02


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


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    raise SystemExit("chromium is not installed (make check-report installs it)")


async def write_report(path: Path) -> None:
    from sitemap_reader import demo

    command = str(Path(sys.executable).parent / "sitemap-reader")
    async with demo.serve() as base:
        proc = await asyncio.create_subprocess_exec(
            command, "report", base + "/", "-o", str(path), "-q"
        )
        if await proc.wait() != 0:
            raise SystemExit("sitemap-reader report failed")


def screenshot(html: Path, png: Path) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--proxy-server=127.0.0.1:9",  # nothing may be fetched: the page is whole
                "--proxy-bypass-list=<-loopback>",
                f"--window-size={WIDTH},{HEIGHT}",
                f"--screenshot={png}",
                html.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def main() -> int:
    out = (Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())).resolve()
    out.mkdir(parents=True, exist_ok=True)
    html, png = out / "report.html", out / "report.png"
    asyncio.run(write_report(html))
    screenshot(html, png)
    width, height, channels, pixels = decode_png(png.read_bytes())
    share = ink_share(width, height, channels, pixels)
    print(f"screenshot {png}: {width}x{height}, {os.path.getsize(png):,} bytes, ink {share:.1%}")
    if (width, height) != (WIDTH, HEIGHT):
        print(f"FAIL: expected {WIDTH}x{HEIGHT}")
        return 1
    if share < MIN_INK:
        print(f"FAIL: only {share:.1%} of the pixels are not background (< {MIN_INK:.0%})")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
