"""Compiled libraries with wheels on PyPI, measured against what the hot path does today.

1. URL normalisation: ``normalize_url`` (our fast regex, yarl's quoters, yarl) against
   ``can_ada.parse(u).href`` and ``ada_url.URL(u).href`` (WHATWG parsers in C++), and our
   compiled path's C normal-form test; time per URL and how often each gives our result.
2. Inflate: ``zlib`` against ``isal.isal_zlib`` and ``zlib_ng.zlib_ng``, in the parser's
   way (``decompressobj(31)``, ``decompress(data, 64 KiB)`` steps); output MB/s.
3. Records: our ``url_record_builder`` (slot stores on a twin class), the frozen dataclass
   ``__init__``, a ``msgspec.Struct`` of the same 17 fields (``frozen=True, gc=False``);
   and the writers' per-record cost (``jsonl_text``, msgspec inside) against ``to_dict`` and
   ``json.dumps``.

Inputs: the real corpus's locations (read in place) and the synthetic shapes of
``benchmarks/parse.py``. Thread CPU, best of ``--repeat``; load average printed.
Candidates missing from the environment are reported as such
(``pip install can_ada ada-url isal zlib-ng``).

Run: ``.venv/bin/python benchmarks/native/candidates.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import html
import importlib
import json
import random
import re
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # the checkout (run as a script)

from benchmarks.native.bench import loadavg  # noqa: E402
from benchmarks.native.common import REALDATA, bench_parse, core  # noqa: E402
from sitemap_reader.delivery.writers import jsonl_text  # noqa: E402
from sitemap_reader.parse.normalize import normalize_url  # noqa: E402
from sitemap_reader.records import UrlRecord, url_record_builder  # noqa: E402
from sitemap_reader.records.scoring import make_scorer  # noqa: E402

bench = bench_parse()
LOC = re.compile(rb"<(?:\w+:)?loc>\s*(.*?)\s*</(?:\w+:)?loc>", re.DOTALL)


def optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def best(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.thread_time()
        func()
        times.append(time.thread_time() - started)
    return min(times)


# --------------------------------------------------------------------------- URLs


def url_sets() -> dict[str, list[str]]:
    """Locations as sitemaps write them (entities decoded), per shape."""
    sets: dict[str, list[str]] = {}
    if REALDATA.is_dir():
        found = []
        for path in sorted(REALDATA.glob("*.xml")):
            found += [
                html.unescape(m.decode("utf-8", "replace")) for m in LOC.findall(path.read_bytes())
            ]
        sets["real corpus (page and image locs)"] = found
    rng = random.Random(7)
    for shape in ("plain", "port", "non-ASCII", "lower %xx"):
        sets[shape] = [html.unescape(bench.loc_for(rng, i, shape)[0]) for i in range(20_000)]
    return sets


def urls_table(repeat: int) -> str:
    can_ada, ada_url = optional("can_ada"), optional("ada_url")
    candidates: dict[str, Callable[[str], object]] = {"normalize_url (ours)": normalize_url}
    if can_ada is not None:
        candidates["can_ada.parse(u).href"] = lambda u: can_ada.parse(u).href
    if ada_url is not None:
        candidates["ada_url.URL(u).href"] = lambda u: ada_url.URL(u).href
    candidates["C normal-form test (compiled path)"] = core.url_normal
    lines = [
        f"load average: {loadavg()}",
        "",
        "| URLs | candidate | ns/URL | same string as ours | parse errors |",
        "|---|---|---:|---:|---:|",
    ]
    for name, urls in url_sets().items():
        ours = [normalize_url(u) for u in urls]
        for label, func in candidates.items():

            def run(func: Callable[[str], object] = func, urls: list[str] = urls) -> None:
                for u in urls:
                    with contextlib.suppress(ValueError):
                        func(u)

            seconds = best(run, repeat)
            same = errors = 0
            for u, mine in zip(urls, ours, strict=True):
                try:
                    got = func(u)
                except ValueError:
                    errors += 1
                    continue
                if label.startswith("C normal-form"):
                    same += bool(got) == (mine == u)  # says "already normal" exactly when so
                else:
                    same += got == mine
            lines.append(
                f"| {name} ({len(urls):,}) | {label} | {seconds / len(urls) * 1e9:,.0f} | "
                f"{same / len(urls):.1%} | {errors:,} |"
            )
    return "\n".join(lines)


# --------------------------------------------------------------------------- inflate


def inflate_with(module: Any, data: bytes) -> int:
    """Decompress a gzip body the way parse/gunzip.py does: bounded 64 KiB steps."""
    decoder = module.decompressobj(31)
    total = 0
    while data:
        piece = decoder.decompress(data, 65536)
        total += len(piece)
        data = decoder.unconsumed_tail
        if not piece and not data:
            break
    return total


def inflate_table(repeat: int) -> str:
    isal = optional("isal.isal_zlib")
    zng = optional("zlib_ng.zlib_ng")
    bodies = {"plain 50k": bench.make_sitemap(50_000, "plain")}
    if REALDATA.is_dir():
        bodies["real corpus (joined)"] = b"".join(
            p.read_bytes() for p in sorted(REALDATA.glob("*.xml"))
        )
    modules = {"zlib": zlib, "isal.isal_zlib": isal, "zlib_ng.zlib_ng": zng}
    lines = [
        f"load average: {loadavg()}",
        "",
        "| body | inflater | MB/s out | x zlib |",
        "|---|---|---:|---:|",
    ]
    for name, body in bodies.items():
        packed = gzip.compress(body, 6)
        base = 0.0
        for label, module in modules.items():
            if module is None:
                lines.append(f"| {name} | {label} | not installed | |")
                continue
            assert inflate_with(module, packed) == len(body)

            def inflate(module: Any = module, packed: bytes = packed) -> None:
                inflate_with(module, packed)

            seconds = best(inflate, repeat)
            rate = len(body) / seconds / 1e6
            base = base or rate
            lines.append(f"| {name} ({len(body) / 1e6:.1f} MB) | {label} | {rate:,.0f} | "
                         f"{rate / base:.2f} |")  # fmt: skip
    return "\n".join(lines)


# --------------------------------------------------------------------------- records


def records_table(repeat: int) -> str:
    msgspec = optional("msgspec")
    now = datetime(2025, 6, 1, tzinfo=UTC)
    build = url_record_builder(make_scorer(now))
    rng = random.Random(3)
    rows = [
        (f"https://www.example.com/p/{i}", datetime(2024, 1 + i % 12, 1 + i % 28, tzinfo=UTC),
         "daily", rng.randrange(11) / 10)
        for i in range(50_000)
    ]  # fmt: skip
    empty: tuple[()] = ()
    lines = [
        f"load average: {loadavg()}",
        "",
        "| construction (score included where the record has one) | ns/record |",
        "|---|---:|",
    ]

    def ours() -> None:
        for url, lastmod, freq, prio in rows:
            build(url, lastmod, freq, prio, "https://www.example.com/s.xml", empty, empty,
                  empty, None, None)  # fmt: skip

    def dataclass_init() -> None:
        for url, lastmod, freq, prio in rows:
            UrlRecord(url, lastmod, freq, prio, 0.5, "https://www.example.com/s.xml")

    variants: dict[str, Callable[[], None]] = {
        "url_record_builder (slot stores + make_scorer)": ours,
        "UrlRecord(...) frozen dataclass __init__ (no score)": dataclass_init,
    }
    if msgspec is not None:
        fields = [(name, Any) for name in UrlRecord.__slots__]
        struct = msgspec.defstruct("UrlStruct", fields, frozen=True, gc=False)
        score = make_scorer(now)

        def msgspec_struct() -> None:
            for url, lastmod, freq, prio in rows:
                struct(url, lastmod, freq, prio, score(prio, freq, lastmod),
                       "https://www.example.com/s.xml", empty, empty, empty, None, None, False,
                       None, False, empty, None, None)  # fmt: skip

        variants["msgspec Struct, 17 fields, frozen, gc=False (+ make_scorer)"] = msgspec_struct
    for label, func in variants.items():
        seconds = best(func, repeat)
        lines.append(f"| {label} | {seconds / len(rows) * 1e9:,.0f} |")
    records = [build(u, m, f, p, "https://www.example.com/s.xml", empty, empty, empty, None, None)
               for u, m, f, p in rows]  # fmt: skip
    lines += ["", "| writing JSON Lines | ns/record |", "|---|---:|"]
    writers: dict[str, Callable[[Sequence[UrlRecord]], object]] = {
        "jsonl_text (writers.py: msgspec in batches)": jsonl_text,
        "to_dict() + json.dumps per record": lambda b: [json.dumps(r.to_dict()) for r in b],
        "to_dict() alone": lambda b: [r.to_dict() for r in b],
    }
    for label, write in writers.items():

        def batches(write: Callable[[Sequence[UrlRecord]], object] = write) -> None:
            for i in range(0, len(records), 1000):
                write(records[i : i + 1000])

        seconds = best(batches, repeat)
        lines.append(f"| {label} | {seconds / len(records) * 1e9:,.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    for title, table in (
        ("URL normalisation", urls_table),
        ("Inflate", inflate_table),
        ("Records and writers", records_table),
    ):
        print(f"### {title}\n")
        print(table(args.repeat))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
