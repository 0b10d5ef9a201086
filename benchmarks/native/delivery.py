"""The per-record work after the parse, in C: the run-wide dedupe set and the JSON Lines
writer, checked against the reference and measured.

- ``_expatcore.UrlSet`` against ``discovery.dedupe.UrlSet`` (same keys, so the same
  answers, the same table size);
- ``_expatcore.jsonl(records, UrlRecord, json_line)`` against ``writers.jsonl_text``: the
  same text byte for byte, on random records (hostile text, odd floats, time zones,
  extension lists that the C writer hands to the reference ``json_line``) and on the
  records of the real corpus.

Run: ``.venv/bin/python benchmarks/native/delivery.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # the checkout (run as a script)

from benchmarks.native.bench import loadavg  # noqa: E402
from benchmarks.native.common import REALDATA, core  # noqa: E402
from sitemap_reader.delivery.writers import json_line, jsonl_text  # noqa: E402
from sitemap_reader.discovery.dedupe import UrlSet  # noqa: E402
from sitemap_reader.parse.parser import parse  # noqa: E402
from sitemap_reader.records import Alternate, Image, UrlRecord  # noqa: E402

TEXTS = ["https://e.com/a", 'q"uote\\', "tab\there\nnl", "\x00\x1f\x7f\x85\u2028\u2029x",
         "\ud800lone", "é中😀", "", "a" * 300]  # fmt: skip


def random_records(count: int, seed: int) -> list[UrlRecord]:
    rng = random.Random(seed)

    def number() -> float:
        odd = [1e-5, 1e16, 123.456, float("nan"), float("inf"), -0.0, 0.44375, 0.12345, 0.00005]
        return rng.choice([0.0, 1.0, 0.5, 0.1, rng.random(), rng.random() * 1e-3, *odd])

    two_hours = timezone(timedelta(hours=2))
    dates = [None, datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC), datetime(1, 1, 1, tzinfo=UTC),
             datetime(2024, 5, 6, 7, 8, 9, 123, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=two_hours),
             datetime(2024, 1, 1)]  # fmt: skip
    records = []
    for _ in range(count):
        priority: Any = rng.choice([None, number(), 1])
        records.append(
            UrlRecord(
                rng.choice(TEXTS), rng.choice(dates), rng.choice([None, "daily", "x\u2028"]),
                priority, rng.choice([number(), 0.5]), rng.choice([None, *TEXTS]),
                images=rng.choice([(), (), (Image("https://e.com/i"),),
                                   (Image("x", title=rng.choice(TEXTS), license="l"),)]),
                alternates=rng.choice([(), (Alternate(rng.choice(TEXTS), "https://e.com/d"),)]),
                revisit=rng.choice([None, 3600.0, 2.5, 3.5, number()]),
                removed=rng.random() < 0.2, title=rng.choice([None, *TEXTS]),
                mobile=rng.random() < 0.2, robots=rng.choice([None, "allowed"]),
                source=rng.choice([None, "html"]),
            )
        )  # fmt: skip
    return records


def corpus_records() -> list[UrlRecord]:
    found: list[UrlRecord] = []
    for path in sorted(REALDATA.glob("*.xml")) if REALDATA.is_dir() else []:
        found += parse(path.read_bytes(), "https://example.com/sitemap.xml").urls
    return found


def native_jsonl(batch: list[UrlRecord]) -> str:
    text: str = core.jsonl(batch, UrlRecord, Image, Alternate, json_line)
    return text


def text_or_error(write: Callable[[], str]) -> str:
    try:
        return write()
    except Exception as exc:  # the two must fail alike too
        return f"error {type(exc).__name__}"


def check() -> int:
    bad = 0
    for name, records in (("random", random_records(20_000, 5)), ("corpus", corpus_records())):
        for i in range(0, len(records), 100):
            batch = records[i : i + 100]
            ref = text_or_error(lambda: jsonl_text(batch))  # noqa: B023 - called at once
            got = text_or_error(lambda: native_jsonl(batch))  # noqa: B023 - called at once
            if ref != got:
                bad += 1
                print(f"jsonl differs ({name}, batch {i // 100})")
        print(f"jsonl: {len(records):,} {name} records checked")
    rng = random.Random(9)
    urls = [f"https://e.com/{rng.randrange(30_000)}" for _ in range(60_000)]
    a, b = UrlSet(), core.UrlSet()
    same = [a.add(u) for u in urls] == [b.add(u) for u in urls]
    same = same and len(a) == len(b) and a.nbytes == b.nbytes
    same = same and all((u in a) == (u in b) for u in [*urls[:2000], "x", "https://e.com/x"])
    if not same:
        bad += 1
        print("UrlSet differs")
    return bad


def best(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.thread_time()
        func()
        times.append(time.thread_time() - started)
    return min(times)


def plain_records() -> list[UrlRecord]:
    """The records of benchmarks/parse.py's plain 50k-URL sitemap."""
    from benchmarks.native.bench import workload

    body, _ = workload("plain")
    return parse(body, "https://www.example.com/sitemap.xml").urls


def measure(repeat: int, label: str, records: list[UrlRecord]) -> str:
    urls = [r.url for r in records]
    for url in urls:
        hash(url)  # (the parser's strings carry their hash by the time they are deduped)

    def batches(write: Callable[[list[UrlRecord]], object]) -> Callable[[], None]:
        def run() -> None:
            for i in range(0, len(records), 1000):
                write(records[i : i + 1000])

        return run

    def adds(make: Callable[[], Any]) -> Callable[[], None]:
        def run() -> None:
            add = make().add
            for url in urls:
                add(url)

        return run

    rows = {
        "jsonl_text (writers.py, msgspec in batches)": batches(jsonl_text),
        "jsonl in C": batches(lambda b: core.jsonl(b, UrlRecord, Image, Alternate, json_line)),
        "json_line per record (to_dict + json.dumps)": batches(lambda b: list(map(json_line, b))),
        "UrlSet.add (dedupe.py)": adds(UrlSet),
        "UrlSet.add in C": adds(core.UrlSet),
    }
    lines = [
        f"{len(records):,} records of {label} (load average: {loadavg()})",
        "",
        "| work | ns/record |",
        "|---|---:|",
    ]
    for label, run in rows.items():
        lines.append(f"| {label} | {best(run, repeat) / len(records) * 1e9:,.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    bad = check()
    print(measure(args.repeat, "the real corpus", corpus_records()))
    print()
    print(measure(args.repeat, "the plain 50k-URL sitemap", plain_records()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
