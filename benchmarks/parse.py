"""Benchmark of the parse core against the pyexpat floor and the peers (issues 2 and 13).

Generates 50,000-URL sitemaps in memory, one per URL shape, all with loc, lastmod,
changefreq and priority:

- ``plain``: ``https://www.example.com/...`` URLs already in normal form;
- ``port``: the same on ``http://127.0.0.1:8765``;
- ``non-ASCII``: raw UTF-8 paths (Persian words, as WordPress sites publish them);
- ``lower %xx``: the same paths percent-encoded with lower-case hex;
- ``fat``: plain plus 3 ``image:image`` and 3 ``xhtml:link`` per URL;

and, when ``../shared/realdata`` is present, every XML sitemap (urlset or sitemapindex) of
that real corpus (MANIFEST.tsv), summed over its files. It prints URLs/s (best of N
repeats, round-robin, thread CPU time) and each parser's ratio to the floor, all measured
in the same run:

- the floor: ``pyexpat`` with ``buffer_text`` and no-op Python handlers, fed 64 KiB chunks;
- C expat through pyexpat's capsule with three empty C handlers (the compiled floor), when
  the compiled parser is built;
- our ``SitemapParser`` (records fully normalized and scored), fed 64 KiB chunks, on the
  paths ``--path`` names: ``native`` (the compiled path), ``pure`` (the pure-Python
  reference) or ``both`` (the default where the compiled path is built);
- ``defusedxml.ElementTree.iterparse`` with ``elem.clear()``, extracting the 4 fields;
- Scrapy's ``scrapy.utils.sitemap.Sitemap`` and ultimate-sitemap-parser's
  ``sitemap_from_str`` when installed (``pip install -e '.[bench]'``); both take the whole body.

It then measures the memory added while a fresh subprocess streams a 1,000,000-URL sitemap,
generated chunk by chunk and never materialised, through ``SitemapParser``.

The load average is printed beside each table: a figure taken on a busy machine says so.

Run: ``.venv/bin/python benchmarks/parse.py [--repeat N] [--quick] [--urls N] [--no-real]
[--tracemalloc] [--path native|pure|both]``.
"""

from __future__ import annotations

import argparse
import csv
import gc
import io
import json
import logging
import os
import pyexpat
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the checkout importable, and
    # keep this folder off the path: incremental.py would shadow Twisted's "incremental"
    # (Scrapy needs it), parse.py the "parse" package.
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
    # SITEMAP_BENCH_SOURCE: another checkout's package instead (benchmarks/cli.py --source).
    sys.path.insert(0, os.environ.get("SITEMAP_BENCH_SOURCE") or str(_here.parent))

from sitemap_reader.options.limits import Limits
from sitemap_reader.parse import native
from sitemap_reader.parse.parser import SitemapParser
from sitemap_reader.records import SitemapRef, UrlRecord

CHUNK = 64 * 1024
SITEMAP_URL = "https://www.example.com/sitemap.xml"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
HEADER = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    f'<urlset xmlns="{NS}"\n'
    '        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"\n'
    '        xmlns:xhtml="http://www.w3.org/1999/xhtml">\n'
)
FOOTER = "</urlset>\n"
CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
LANGS = ("de", "fr", "x-default")
URL_TAG = NS + "}url"
FIELDS = ("loc", "lastmod", "changefreq", "priority")
#: Ratio to the floor each synthetic file must reach (issue 13).
TARGETS = {"plain": 0.65, "port": 0.65, "non-ASCII": 0.65, "fat": 0.45}
#: Our throughput on the real corpus relative to Scrapy's Sitemap (issue 13).
TARGET_REAL_VS_SCRAPY = 1.2
TARGET_MIB = 30.0
#: The real corpus, read in place when present (never copied into the repository).
REALDATA = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata"
#: Real-corpus formats this benchmark parses (robots.txt, text and feeds are not sitemaps
#: every peer reads).
REAL_FORMATS = ("urlset", "sitemapindex")
#: Persian path words (raw UTF-8 in the non-ASCII file, lower-case escapes in the other).
WORDS = ("محصولات", "دسته", "کالای", "ویژه", "جدید", "تخفیف", "مقاله", "راهنما")
ORIGINS = {"plain": "https://www.example.com", "port": "http://127.0.0.1:8765"}

#: A benchmark variant: parses the body, returns the URLs it saw (None: does not count).
Runner = Callable[[bytes], int | None]


# --------------------------------------------------------------------------- generation


def loc_for(rng: random.Random, index: int, shape: str) -> tuple[str, str]:
    """(loc as written in the file, its path) for URL ``index`` of the given shape."""
    if shape in ("non-ASCII", "lower %xx"):
        words = "/".join(rng.choice(WORDS) for _ in range(2))
        path = f"/{words}/{rng.choice(WORDS)}-{index}/"
        if shape == "lower %xx":
            path = "".join(
                c if c.isascii() else "".join(f"%{b:02x}" for b in c.encode()) for c in path
            )
        return f"https://fa.example.com{path}", path
    path = f"/products/category-{rng.randrange(1, 200)}/item-{index}"
    query = f"?ref={rng.choice(('abc', 'nav', 'home'))}&amp;page={rng.randrange(1, 9)}"
    return f"{ORIGINS.get(shape, ORIGINS['plain'])}{path}{query}", path


def url_entry(rng: random.Random, index: int, shape: str) -> str:
    """One ``<url>`` element with realistic values; ``fat`` adds images and hreflang links."""
    loc, path = loc_for(rng, index, shape)
    day = rng.randrange(1, 29)
    parts = [
        "  <url>\n",
        f"    <loc>{loc}</loc>\n",
        f"    <lastmod>2024-{rng.randrange(1, 13):02d}-{day:02d}T{rng.randrange(24):02d}:"
        f"{rng.randrange(60):02d}:00+00:00</lastmod>\n",
        f"    <changefreq>{rng.choice(CHANGEFREQS)}</changefreq>\n",
        f"    <priority>{rng.randrange(11) / 10:.1f}</priority>\n",
    ]
    if shape == "fat":
        for n in range(3):
            img = f"https://cdn.example.com/img/{index}/{n}-{rng.randrange(10**6)}.jpg"
            parts.append(f"    <image:image><image:loc>{img}</image:loc></image:image>\n")
        for lang in LANGS:
            href = f"https://www.example.com/{lang}{path}"
            parts.append(f'    <xhtml:link rel="alternate" hreflang="{lang}" href="{href}"/>\n')
    parts.append("  </url>\n")
    return "".join(parts)


#: The synthetic files, in table order.
SHAPES = ("plain", "port", "non-ASCII", "lower %xx", "fat")


def iter_sitemap(count: int, shape: str, seed: int = 12345) -> Iterator[bytes]:
    """The sitemap as ~64 KiB byte chunks, generated on the fly (nothing kept)."""
    rng = random.Random(seed)
    batch: list[str] = [HEADER]
    size = len(HEADER)
    for index in range(count):
        entry = url_entry(rng, index, shape)
        batch.append(entry)
        size += len(entry)
        if size >= CHUNK:
            yield "".join(batch).encode()
            batch, size = [], 0
    batch.append(FOOTER)
    yield "".join(batch).encode()


def make_sitemap(count: int, shape: str) -> bytes:
    """The whole sitemap in memory."""
    return b"".join(iter_sitemap(count, shape))


def real_corpus() -> list[tuple[str, bytes, int]]:
    """(name, body, URL count from the manifest) of every real XML sitemap; [] if absent."""
    manifest = REALDATA / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    found = []
    for row in csv.DictReader(manifest.open(encoding="utf-8"), delimiter="\t"):
        path = REALDATA / "files" / row["local_name"]
        if row["format"] in REAL_FORMATS and path.is_file():
            found.append((row["local_name"], path.read_bytes(), int(row["url_count"] or 0)))
    return found


def chunks(body: bytes) -> Iterator[bytes]:
    """64 KiB slices of ``body``."""
    view = memoryview(body)
    for start in range(0, len(body), CHUNK):
        yield bytes(view[start : start + CHUNK])


# --------------------------------------------------------------------------- variants


def run_ours(body: bytes) -> int:
    """Our SitemapParser, 64 KiB chunks; consumes every record (URLs and child sitemaps)."""
    parser = SitemapParser(SITEMAP_URL)  # on the active path (native.using)
    count = 0
    for chunk in chunks(body):
        for item in parser.feed(chunk):
            count += isinstance(item, UrlRecord | SitemapRef)
    for item in parser.close():
        count += isinstance(item, UrlRecord | SitemapRef)
    return count


def run_floor(body: bytes) -> None:
    """pyexpat with buffer_text and no-op Python handlers: the floor for a Python parser."""

    def start(name: str, attrs: dict[str, str]) -> None:
        pass

    def end(name: str) -> None:
        pass

    def data(text: str) -> None:
        pass

    parser = pyexpat.ParserCreate(namespace_separator="}")
    parser.buffer_text = True
    parser.buffer_size = CHUNK
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    for chunk in chunks(body):
        parser.Parse(chunk, False)
    parser.Parse(b"", True)
    return None


def run_defusedxml(body: bytes) -> int:
    """defusedxml.ElementTree.iterparse over a BytesIO, clearing each <url> (or <sitemap>)."""
    from defusedxml.ElementTree import iterparse

    entry_tags = ("{" + URL_TAG, "{" + NS + "}sitemap")
    names = ["{" + NS + "}" + field for field in FIELDS]
    count = 0
    for _event, elem in iterparse(io.BytesIO(body), events=("end",)):
        if elem.tag in entry_tags:
            values = [elem.findtext(name) for name in names]
            count += values[0] is not None
            elem.clear()
    return count


def load_scrapy() -> Runner | None:
    """Scrapy's Sitemap iterator, or None when scrapy is not installed."""
    try:
        from scrapy.utils.sitemap import Sitemap
    except ImportError:
        return None

    def run(body: bytes) -> int:
        return sum(1 for _entry in Sitemap(body))

    return run


def load_usp() -> Runner | None:
    """ultimate-sitemap-parser's sitemap_from_str, or None when it is not installed."""
    try:
        from usp.tree import sitemap_from_str
    except ImportError:
        return None
    logging.getLogger("usp").setLevel(logging.ERROR)

    def run(body: bytes) -> int:
        return sum(1 for _page in sitemap_from_str(body.decode()).all_pages())

    return run


# --------------------------------------------------------------------------- measurement


@dataclass(frozen=True, slots=True)
class Timing:
    """Best wall time of one variant on one file, and the URL count it reported."""

    seconds: float
    count: int | None


def timed(runner: Runner, body: bytes) -> Timing:
    """One run of ``runner`` on ``body``, with the GC settled first.

    The clock is this thread's CPU time (every variant parses on the calling thread): on
    a shared machine wall time mostly measures the other processes, CPU time far less.
    """
    gc.collect()
    started = time.thread_time()
    count = runner(body)
    return Timing(time.thread_time() - started, count)


def faster(old: Timing | None, new: Timing) -> Timing:
    """The better of two timings (None: no timing yet)."""
    return new if old is None or new.seconds < old.seconds else old


@dataclass(frozen=True, slots=True)
class Variant:
    """A named runner, or the reason it is skipped."""

    name: str
    runner: Runner | None
    note: str = ""


def on_path(path: str) -> Runner:
    """run_ours with the parser on ``path`` (``native`` or ``pure``)."""

    def run(body: bytes) -> int:
        with native.using("native" if path == "native" else "pure"):
            return run_ours(body)

    return run


def run_c_floor(body: bytes) -> None:
    """C expat through pyexpat's capsule with three empty C handlers (the compiled floor)."""
    native.CORE.null_parse(chunks(body), False)


def loadavg() -> str:
    """The load average, to print beside a table."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())


#: Which of our paths the tables show (``--path``).
PATHS: list[str] = ["native", "pure"] if native.CORE is not None else ["pure"]
OURS = "sitemap-reader SitemapParser, {} (64 KiB feed)"


def variants() -> list[Variant]:
    """Every variant in table order (the floor first)."""
    scrapy = load_scrapy()
    usp = load_usp()
    compiled = native.CORE is not None
    return [
        Variant("floor: pyexpat, no-op handlers (64 KiB feed)", run_floor),
        Variant(
            "C expat, empty C handlers (64 KiB feed)",
            run_c_floor if compiled else None,
            "" if compiled else "skipped: the compiled parser is not built",
        ),
        *[Variant(OURS.format(path), on_path(path)) for path in PATHS],
        Variant("defusedxml.ElementTree.iterparse + clear()", run_defusedxml),
        Variant(
            "scrapy.utils.sitemap.Sitemap (whole body)",
            scrapy,
            "" if scrapy else "skipped: scrapy not installed",
        ),
        Variant(
            "usp sitemap_from_str (whole body, str)",
            usp,
            "" if usp else "skipped: ultimate-sitemap-parser not installed",
        ),
    ]


@dataclass(frozen=True, slots=True)
class Workload:
    """One column of the table: one synthetic file, or a set of real files summed."""

    label: str
    files: list[tuple[str, bytes, int]]  # (name, body, expected entries)

    @property
    def expected(self) -> int:
        return sum(expected for _, _, expected in self.files)

    @property
    def megabytes(self) -> float:
        return sum(len(body) for _, body, _ in self.files) / 1e6


def workloads(count: int, real: bool) -> list[Workload]:
    """The synthetic files, then (when present and wanted) the real corpus, split."""
    chosen = [Workload(shape, [(shape, make_sitemap(count, shape), count)]) for shape in SHAPES]
    if not real:
        return chosen
    corpus = real_corpus()
    if not corpus:
        print(f"(real corpus skipped: {REALDATA} not found)", file=sys.stderr)
        return chosen
    extended = {name for name, kind in real_features().items() if kind}
    chosen.append(Workload("real", corpus))
    chosen.append(Workload("real, plain", [f for f in corpus if f[0] not in extended]))
    chosen.append(Workload("real, extensions", [f for f in corpus if f[0] in extended]))
    return chosen


def real_features() -> dict[str, bool]:
    """Real file name -> True when the manifest lists sitemap extensions in it."""
    manifest = REALDATA / "MANIFEST.tsv"
    marks = ("images=", "alternates=", "news=", "videos=")
    return {
        row["local_name"]: any(mark in (row["notes"] or "") for mark in marks)
        for row in csv.DictReader(manifest.open(encoding="utf-8"), delimiter="\t")
    }


def usable(chosen: list[Variant], files: list[tuple[str, bytes, int]]) -> list[str]:
    """Names of the real files some variant fails on (left out of every sum, so the
    sums stay comparable); the failure is printed."""
    bad = []
    for name, body, _ in files:
        for variant in chosen:
            if variant.runner is None:
                continue
            try:
                variant.runner(body)
            except Exception as error:  # a peer's own failure on a real file
                print(f"(real file {name} left out: {variant.name}: {error!r})", file=sys.stderr)
                bad.append(name)
                break
    return bad


def speed_tables(count: int, repeat: int, real: bool) -> tuple[str, dict[str, float]]:
    """The markdown tables, and per workload our ratio to the floor (plus "real vs
    scrapy": our throughput on the real corpus over Scrapy's)."""
    chosen = variants()
    loads = workloads(count, real)
    for load in loads:
        if load.label.startswith("real"):
            bad = set(usable(chosen, load.files))
            load.files[:] = [f for f in load.files if f[0] not in bad]
    # best[variant][workload][file index]; round-robin repeats, so a burst of load on a
    # shared machine hits every variant alike instead of spoiling all repeats of one.
    best: dict[str, dict[str, list[float]]] = {
        v.name: {w.label: [float("inf")] * len(w.files) for w in loads} for v in chosen
    }
    counts: dict[str, dict[str, int | None]] = {v.name: {} for v in chosen}
    for _ in range(repeat):
        for variant in chosen:
            if variant.runner is None:
                continue
            for load in loads:
                seen: int | None = 0
                for index, (_, body, _) in enumerate(load.files):
                    timing = timed(variant.runner, body)
                    cell = best[variant.name][load.label]
                    cell[index] = min(cell[index], timing.seconds)
                    seen = None if seen is None or timing.count is None else seen + timing.count
                counts[variant.name][load.label] = seen
    totals = {
        v.name: {w.label: sum(best[v.name][w.label]) for w in loads if v.runner} for v in chosen
    }
    floor = totals[chosen[0].name]
    header = "| parser | " + " | ".join(w.label for w in loads) + " |"
    rule = "|---|" + "---:|" * len(loads)
    sizes = ", ".join(
        f"{w.label} {w.expected:,} URLs/{w.megabytes:.1f} MB"
        + (f" in {len(w.files)} files" if len(w.files) > 1 else "")
        for w in loads
    )
    lines = [
        f"{sizes}; best of {repeat} (round-robin); Python {sys.version.split()[0]}, expat "
        f"{'.'.join(map(str, pyexpat.version_info))}; load average {loadavg()} "
        f"(at the end of the run)",
        "",
        "URLs/s:",
        "",
        header,
        rule,
    ]
    for variant in chosen:
        cells = []
        for load in loads:
            seconds = totals[variant.name].get(load.label)
            if seconds is None:
                cells.append("n/a")
                continue
            text = f"{load.expected / seconds:,.0f}"
            seen = counts[variant.name].get(load.label)
            if seen is not None and seen != load.expected and not load.label.startswith("real"):
                text += f" (counted {seen:,}!)"
            cells.append(text)
        name = variant.name + (f" ({variant.note})" if variant.note else "")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Ratio to the floor (higher is better; the floor is 1.00):", "", header, rule]
    for variant in chosen:
        cells = [
            f"{floor[w.label] / totals[variant.name][w.label]:.2f}"
            if w.label in totals[variant.name]
            else "n/a"
            for w in loads
        ]
        lines.append(f"| {variant.name} | " + " | ".join(cells) + " |")
    c_floor = totals.get("C expat, empty C handlers (64 KiB feed)")
    if c_floor:
        lines += ["", "Ratio to C expat with empty C handlers (1.00 = the compiled floor):", ""]
        lines += [header, rule]
        for variant in chosen:
            cells = [
                f"{c_floor[w.label] / totals[variant.name][w.label]:.2f}"
                if w.label in totals[variant.name]
                else "n/a"
                for w in loads
            ]
            lines.append(f"| {variant.name} | " + " | ".join(cells) + " |")
    ours = totals[OURS.format(PATHS[0])]
    ratios = {label: floor[label] / seconds for label, seconds in ours.items()}
    scrapy = totals["scrapy.utils.sitemap.Sitemap (whole body)"]
    if "real" in scrapy and "real" in ours:
        ratios["real vs scrapy"] = scrapy["real"] / ours["real"]
    return "\n".join(lines), ratios


# --------------------------------------------------------------------------- memory


def max_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB.

    On Linux ``VmHWM`` is read: ``ru_maxrss`` keeps the parent's peak across fork+exec,
    which would hide everything the child adds.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / (1024 * 1024)


def stream_through_parser(count: int) -> int:
    """Feed a generated ``count``-URL stream to SitemapParser; return the URLs seen.

    The stream is far beyond the protocol's 50 MB, so the byte limit is lifted: this
    measures the parser's own memory, not how early a limit stops it.
    """
    parser = SitemapParser(SITEMAP_URL, limits=Limits(max_decompressed_bytes=1 << 40))
    seen = 0
    for chunk in iter_sitemap(count, "plain", seed=7):
        seen += sum(isinstance(item, UrlRecord) for item in parser.feed(chunk))
    seen += sum(isinstance(item, UrlRecord) for item in parser.close())
    return seen


def memory_child(count: int, use_tracemalloc: bool) -> None:
    """Subprocess body: warm up, then stream ``count`` URLs; print a JSON line."""
    stream_through_parser(2_000)  # import and warm every code path first
    gc.collect()
    before = max_rss_mib()
    started = time.perf_counter()
    if use_tracemalloc:
        import tracemalloc

        tracemalloc.start()
        seen = stream_through_parser(count)
        peak = tracemalloc.get_traced_memory()[1] / (1024 * 1024)
        tracemalloc.stop()
    else:
        seen = stream_through_parser(count)
        peak = -1.0
    report = {
        "urls": seen,
        "seconds": time.perf_counter() - started,
        "rss_before": before,
        "rss_after": max_rss_mib(),
        "tracemalloc_peak": peak,
    }
    print(json.dumps(report))


def measure_memory(count: int, use_tracemalloc: bool) -> dict[str, float]:
    """Run :func:`memory_child` in a fresh interpreter and return its report."""
    command = [sys.executable, str(Path(__file__).resolve()), "--memory-child", str(count)]
    if use_tracemalloc:
        command.append("--tracemalloc")
    env = dict(os.environ, PYTHONHASHSEED="0")
    if PATHS[0] == "pure":
        env[native.ENV] = "1"
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"memory child failed:\n{done.stderr}")
    report: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def memory_report(count: int, use_tracemalloc: bool) -> tuple[str, float]:
    """Markdown lines about memory, and the RSS added in MiB."""
    report = measure_memory(count, use_tracemalloc=False)
    added = report["rss_after"] - report["rss_before"]
    verdict = "meets" if added < TARGET_MIB else "MISSES"
    lines = [
        f"Memory: streaming {count:,} URLs (generated on the fly, 64 KiB chunks) through "
        f"SitemapParser ({PATHS[0]}) in a fresh process: peak RSS {report['rss_before']:.1f} -> "
        f"{report['rss_after']:.1f} MiB, **added {added:.1f} MiB** ({verdict} the "
        f"< {TARGET_MIB:.0f} MiB target); {report['urls']:,.0f} URLs in "
        f"{report['seconds']:.1f} s.",
    ]
    if use_tracemalloc:
        traced = measure_memory(count, use_tracemalloc=True)
        lines.append(f"tracemalloc peak while streaming: {traced['tracemalloc_peak']:.1f} MiB.")
    return "\n".join(lines), added


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    cli.add_argument("--repeat", type=int, default=5, help="repeats per measurement (best kept)")
    cli.add_argument("--quick", action="store_true", help="10k URLs, 1 repeat, 100k-URL stream")
    cli.add_argument("--urls", type=int, default=50_000, help="URLs per benchmark file")
    cli.add_argument("--memory-urls", type=int, default=1_000_000, help="URLs in the stream")
    cli.add_argument("--tracemalloc", action="store_true", help="also report tracemalloc peak")
    cli.add_argument("--no-real", action="store_true", help="skip the real corpus")
    cli.add_argument(
        "--path",
        choices=["native", "pure", "both"],
        default="both",
        help="which of our parser paths to measure (default: both, where the compiled is built)",
    )
    cli.add_argument("--memory-child", type=int, default=0, help=argparse.SUPPRESS)
    return cli.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Print the speed table and the memory figure; exit 1 when a target is missed."""
    args = parse_args(argv)
    if args.path != "both":
        if args.path == "native" and native.CORE is None:
            raise SystemExit(f"--path native: {native.describe()}")
        PATHS[:] = [args.path]
    if args.memory_child:
        memory_child(args.memory_child, args.tracemalloc)
        return 0
    count, repeat, stream = args.urls, max(1, args.repeat), args.memory_urls
    if args.quick:
        count, repeat, stream = min(count, 10_000), 1, min(stream, 100_000)
    memory, added = memory_report(stream, args.tracemalloc)  # first: the parent is small
    tables, ratios = speed_tables(count, repeat, real=not args.no_real)
    print(tables)
    print()
    ok = added < TARGET_MIB
    for label, target in TARGETS.items():
        ratio = ratios.get(label)
        if ratio is not None:
            verdict = "meets" if ratio >= target else "MISSES"
            ok = ok and ratio >= target
            print(
                f"Ours ({PATHS[0]}) vs floor on the {label} file: **{ratio:.2f}** ({verdict} "
                f">= {target})."
            )
    versus = ratios.get("real vs scrapy")
    if versus is not None:
        verdict = "meets" if versus >= TARGET_REAL_VS_SCRAPY else "MISSES"
        ok = ok and versus >= TARGET_REAL_VS_SCRAPY
        print(
            f"Ours ({PATHS[0]}) vs Scrapy's Sitemap on the real corpus: **{versus:.2f}x** "
            f"({verdict} >= {TARGET_REAL_VS_SCRAPY}x)."
        )
    print(memory)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
