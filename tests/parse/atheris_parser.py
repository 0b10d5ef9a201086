"""Coverage-guided fuzzing of the parser invariant with atheris (libFuzzer for Python).

Run by ``make fuzz`` (which installs the ``fuzz`` extra)::

    .venv/bin/python tests/parse/atheris_parser.py [SECONDS]

Each input is a body plus a few control bytes: which limits to parse under (the defaults,
or small ones so that every markup bound is reachable from a short input) and a seed for
random chunk sizes. The invariant checked, as in h11's fuzzers: ``SitemapParser`` gives
records and problems and never lets a foreign exception out; the body parsed whole and
parsed in random chunks gives the same result; ``sitemaps_from_robots`` on the same bytes
never raises. A failure is a crash, saved by libFuzzer as ``crash-*`` in ``.venv/fuzz/``
(new inputs go to ``.venv/fuzz/corpus``); every crash found becomes a named regression
test (see the regressions in ``test_bounds.py``).

Seeds: the files of ``../shared/corpus``, ``../shared/realdata`` and ``../shared/peer-data``
(read in place, their first 64 KiB each), when that folder is there.
"""

from __future__ import annotations

import importlib
import random
import shutil
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))


def _atheris() -> Any:
    """The atheris module, imported before the code under test so it can instrument it."""
    try:
        return importlib.import_module("atheris")
    except ImportError:
        return None


# atheris adds coverage feedback to the modules imported inside instrument_imports():
# the library only (instrumenting aiohttp and the standard library too takes minutes).
atheris = _atheris()
with atheris.instrument_imports(include=["sitemap_reader"]) if atheris else nullcontext():
    from sitemap_reader.errors import SitemapReaderError
    from sitemap_reader.options.limits import Limits
    from sitemap_reader.parse.parser import SitemapParser
    from sitemap_reader.parse.robots import sitemaps_from_robots
    from sitemap_reader.records import UrlRecord

SHARED = ROOT.parent / "shared"
SEED_DIRS = ("corpus", "realdata", "peer-data")
#: Seeds longer than this are cut: libFuzzer mutates short inputs best.
SEED_BYTES = 64 * 1024
WORK = ROOT / ".venv" / "fuzz"
#: Small bounds, so that each markup limit is reachable from an input of a few KiB.
SMALL = Limits(
    max_xml_token=256,
    max_xml_depth=6,
    max_xml_names=24,
    max_xml_name_chars=256,
    max_xml_namespaces=4,
    max_text_length=512,
    max_decompressed_bytes=256 * 1024,
)
URL = "https://example.com/dir/sitemap.xml"


def outcome(body: bytes, sizes: list[int], limits: Limits) -> tuple[Any, ...]:
    """Parse ``body`` in chunks of ``sizes`` (cycled; empty: whole); comparable result."""
    parser = SitemapParser(URL, limits=limits)
    items: list[Any] = []
    pos, turn = 0, 0
    while pos < len(body):
        size = sizes[turn % len(sizes)] if sizes else len(body)
        items += parser.feed(body[pos : pos + size])
        pos, turn = pos + size, turn + 1
    items += parser.close()
    urls = [(i.url, i.lastmod, i.changefreq, i.priority) for i in items if isinstance(i, UrlRecord)]
    refs = [i for i in items if not isinstance(i, UrlRecord)]
    codes = [(p.code, p.count, p.fatal) for p in parser.problems]
    return parser.format, urls, refs, codes, parser.complete


def one_input(data: bytes) -> None:
    """The fuzz target: the invariant on one input."""
    if len(data) < 2:
        return
    limits = SMALL if data[0] & 1 else Limits()
    rng = random.Random(data[1])
    body = data[2:]
    sizes = [rng.randint(1, 300) for _ in range(rng.randint(1, 6))]
    try:
        whole = outcome(body, [], limits)
        chunked = outcome(body, sizes, limits)
    except SitemapReaderError:  # our own error is allowed by the invariant
        return
    if whole != chunked:
        raise AssertionError(f"chunks {sizes} changed the result:\n{whole}\n{chunked}")
    sitemaps_from_robots(body, "https://example.com/robots.txt")


def seeds() -> Path | None:
    """A folder of seed inputs from ../shared, or None when that is absent."""
    found = [
        path
        for name in SEED_DIRS
        if (SHARED / name).is_dir()
        for path in sorted((SHARED / name).rglob("*"))
        if path.is_file()
    ]
    if not found:
        return None
    folder = WORK / "seeds"  # rebuilt on each run, outside the repository's files
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for n, path in enumerate(found):
        with path.open("rb") as source:
            head = source.read(SEED_BYTES)
        for flags in (b"\x00", b"\x01"):  # each seed under both limit profiles
            (folder / f"{n}-{flags[0]}").write_bytes(flags + b"\x07" + head)
    return folder


def main(argv: list[str]) -> int:
    """Fuzz for ``argv[0]`` seconds (default 60)."""
    if atheris is None:
        print(
            "atheris is not installed: pip install -e '.[fuzz]' (make fuzz does it)",
            file=sys.stderr,
        )
        return 2
    seconds = int(argv[0]) if argv else 60
    found = WORK / "corpus"  # libFuzzer writes new inputs into the first folder only
    found.mkdir(parents=True, exist_ok=True)
    folders = [str(found)]
    seeded = seeds()
    if seeded is None:
        print(f"no seeds: {SHARED} is absent; fuzzing from scratch", file=sys.stderr)
    else:
        folders.append(str(seeded))
    args = [
        sys.argv[0],
        f"-max_total_time={seconds}",
        "-max_len=65536",
        "-timeout=20",
        "-rss_limit_mb=1024",
        f"-artifact_prefix={WORK}/",
        *folders,
    ]
    atheris.Setup(args, one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
