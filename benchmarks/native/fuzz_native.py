"""Differential fuzzing of the compiled parser path: any bytes, any chunking, the C path must
give what the pure-Python reference gives fed the same chunks (records, problems, format,
completeness, feed date) and never crash.

Two engines:

- ``--atheris``: coverage-guided with atheris over the Python code (the C core is then
  only sanitizer-checked, not coverage-guided: that needs a clang build with
  ``-fsanitize=fuzzer-no-link``);
- default: a mutational loop in Python (byte flips, deletions, splices, XML-ish tokens)
  over the seeds, for machines without atheris; run it under the sanitizer build:

      .venv/bin/python benchmarks/native/build.py --sanitize
      SITEMAP_NATIVE_BUILD=sanitize ASAN_OPTIONS=detect_leaks=0 \\
        LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \\
        .venv/bin/python benchmarks/native/fuzz_native.py --seconds 120

``SITEMAP_NATIVE_BUILD=VARIANT`` loads the extension built by ``build.py`` into
``benchmarks/native/build/VARIANT`` in place of the installed one (the package imports it
under its own name); without it, the installed extension is fuzzed.

Each input: control byte 0 picks the limits (defaults, or small ones so that every markup
bound is reachable), byte 1 seeds the chunk sizes, the rest is the body. The reference is
``SitemapParser`` on the pure path fed the same chunks. Seeds: the real corpus and
../shared/corpus, first 16 KiB.
A difference is written to ``benchmarks/native/build/fuzz/diff-*`` and counted.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import os
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # the checkout (run as a script)


def install_build() -> None:
    """The extension of ``SITEMAP_NATIVE_BUILD`` (a build.py variant) in place of the
    installed one, before the package imports it."""
    variant = os.environ.get("SITEMAP_NATIVE_BUILD")
    if not variant:
        return
    found = sorted((HERE / "build" / variant).glob("_expatcore*.so"))
    if not found:
        raise SystemExit(f"no _expatcore in build/{variant}: run build.py first")
    name = "sitemap_reader.parse._native._expatcore"
    spec = importlib.util.spec_from_file_location(name, found[0])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    print(f"extension: {found[0]}")


install_build()

from sitemap_reader.options.limits import Limits  # noqa: E402
from sitemap_reader.parse import native  # noqa: E402
from sitemap_reader.parse.parser import SitemapParser  # noqa: E402

SHARED = HERE.parent.parent.parent / "shared"
NOW = datetime(2025, 6, 1, tzinfo=UTC)
NAMES = ("records per feed()", "problems", "format", "complete", "lastmod", "count", "done")
OUT = HERE / "build" / "fuzz"
URL = "https://example.com/dir/sitemap.xml"
SMALL = Limits(
    max_xml_token=256, max_xml_depth=6, max_xml_names=24, max_xml_name_chars=256,
    max_xml_namespaces=4, max_text_length=512, max_decompressed_bytes=256 * 1024,
    max_extensions_per_url=3, max_urls_per_sitemap=40,
)  # fmt: skip
TOKENS = [b"<url>", b"</url>", b"<loc>", b"</loc>", b"<lastmod>", b"</lastmod>", b"&amp;",
          b"&", b"<![CDATA[", b"]]>", b"<!--", b"-->", b"<!DOCTYPE urlset [", b"]>",
          b'<!ENTITY a "b">', b"&a;", b"\r\n", b"\r", b"<image:image>", b"</image:image>",
          b"<image:loc>", b"</image:loc>", b'<xhtml:link rel="alternate" hreflang="de" href="',
          b'"/>', b'xmlns:p="urn:x"', b"\xc3\xa9", b"\xff", b"\x00", b"<?xml ", b"?>"]  # fmt: skip


def outcome(path: str, body: bytes, sizes: list[int], limits: Limits) -> tuple[Any, ...]:
    with native.using("native" if path == "native" else "pure"):
        parser = SitemapParser(URL, limits=limits, now=NOW)
    groups: list[Any] = []
    pos = turn = 0
    while pos < len(body) and not parser.done:
        size = sizes[turn % len(sizes)] if sizes else len(body)
        groups.append(parser.feed(body[pos : pos + size]))
        pos, turn = pos + size, turn + 1
    groups.append(parser.close())
    problems = [(p.code, p.message, p.count, p.fatal) for p in parser.problems]
    return (groups, problems, parser.format, parser.complete, parser.lastmod,
            parser.url_count, parser.done)  # fmt: skip


def one_input(data: bytes) -> str | None:
    """The differential on one input: None when equal, else the difference."""
    if len(data) < 2:
        return None
    limits = SMALL if data[0] & 1 else Limits()
    rng = random.Random(data[1])
    body = data[2:]
    sizes = [rng.randint(1, 300) for _ in range(rng.randint(1, 6))]
    expected = outcome("pure", body, sizes, limits)
    got = outcome("native", body, sizes, limits)
    if got == expected:
        return None
    return first_difference(expected, got)


def first_difference(a: tuple[Any, ...], b: tuple[Any, ...]) -> str:
    """The first part of two outcomes that differs (the test suite's own comparison is
    tests/parse/test_native.py; this script stays free of the test tools' imports, which
    atheris would instrument too)."""
    for name, x, y in zip(NAMES, a, b, strict=True):
        if x != y:
            return f"{name}: {x!r} != {y!r}"
    return "equal"


def record(data: bytes, difference: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:12]
    (OUT / f"diff-{name}").write_bytes(data)
    print(f"DIFF diff-{name}: {difference[:300]}")


def seeds() -> list[bytes]:
    found = []
    for folder in (SHARED / "realdata" / "files", SHARED / "corpus"):
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    with path.open("rb") as source:
                        found.append(source.read(16 * 1024))
    return found or [b"<urlset><url><loc>https://e.com/</loc></url></urlset>"]


def mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(5)
        at = rng.randrange(len(out) + 1)
        if op == 0 and out:
            out[min(at, len(out) - 1)] = rng.randrange(256)
        elif op == 1 and out:
            del out[at : at + rng.randint(1, 64)]
        elif op == 2:
            out[at:at] = rng.choice(TOKENS)
        elif op == 3:
            other = rng.choice(pool)
            start = rng.randrange(len(other) + 1)
            out[at:at] = other[start : start + rng.randint(1, 512)]
        else:
            out[at:at] = bytes(out[at : at + rng.randint(1, 32)])  # repeat a stretch
    return bytes(out)


def mutational(seconds: float, seed: int) -> int:
    rng = random.Random(seed)
    pool = seeds()
    runs = diffs = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        data = bytes([rng.randrange(256), rng.randrange(256)])
        data += mutate(rng, rng.choice(pool), pool)
        difference = one_input(data)
        runs += 1
        if difference is not None:
            diffs += 1
            record(data, difference)
    print(f"{runs:,} inputs in {seconds:.0f} s, {diffs} different")
    return 1 if diffs else 0


def with_atheris(seconds: float, timeout: int) -> int:
    atheris: Any = importlib.import_module("atheris")  # (the fuzz extra)
    atheris.instrument_all()  # coverage feedback from every Python function loaded

    def target(data: bytes) -> None:
        difference = one_input(data)
        if difference is not None:
            record(data, difference)
            raise AssertionError(difference)

    folder = OUT / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    for n, data in enumerate(seeds()):
        (folder / f"seed-{n}").write_bytes(b"\x01\x07" + data)
    flags = [f"-max_total_time={int(seconds)}", "-max_len=20000", f"-timeout={timeout}"]
    atheris.Setup([sys.argv[0], *flags, f"-artifact_prefix={OUT}/", str(folder)], target)
    atheris.Fuzz()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--atheris", action="store_true")
    parser.add_argument(
        "--timeout",
        type=int,
        default=20,
        help="atheris: seconds one input may take (raise it "
        "on a loaded machine: a starved process is not a hang; replay says)",
    )
    parser.add_argument("--replay", nargs="*", default=[], help="inputs to run once each")
    args = parser.parse_args(argv)
    if native.CORE is None:
        raise SystemExit(f"nothing to fuzz: {native.describe()}")
    if args.replay:
        failed = 0
        for name in args.replay:
            difference = one_input(Path(name).read_bytes())
            print(name, "equal" if difference is None else difference)
            failed += difference is not None
        return 1 if failed else 0
    if args.atheris:
        return with_atheris(args.seconds, args.timeout)
    return mutational(args.seconds, args.seed)


if __name__ == "__main__":
    sys.exit(main())
