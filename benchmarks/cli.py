"""The main job against its goals (issue 39): ``sitemap-reader dump SITE -o urls.jsonl``.

Serves the synthetic port site of ``benchmarks/discovery.py`` (robots.txt -> index ->
children of 50,000 URLs each, every URL with a port) on 127.0.0.1 and runs, each in its
own process, in turns (interleaved), best of ``--repeat``:

- ``iterate``: the library iterating ``SitemapReader.batches`` (discovery.py's worker);
- ``dump jsonl`` / ``dump csv`` / ``dump txt``: ``sitemap-reader dump SITE -o FILE``;
- ``dump state``: the same with ``--state S`` on an empty state file (a first run);
- ``scrapy feed``: Scrapy's ``SitemapSpider`` writing every entry as a JSON line;
- ``usp ls``: ultimate-sitemap-parser's ``usp ls -f pages SITE > FILE``;
- ``advertools json``: ``sitemap_to_df(robots).to_json(FILE, orient="records", lines=True)``;
- ``scrapy``, ``advertools``, ``usp``: the peers' library iteration (discovery.py's workers).

Each is measured from outside: wall time from spawn to exit, CPU time and peak RSS of the
process (``wait4``), and the time to its first output byte (the output directory polled
every 5 ms; for the iteration workers, their first URL). Interpreter start and imports
count for every tool alike. Then ``benchmarks/parse.py``'s measurements in a child (ours
against the expat floor on the host, port, non-ASCII and lower-hex files; Scrapy's
``Sitemap`` against ours on ``../shared/realdata``).

``--path native|pure|both`` (default both where the compiled parser is built) measures our
tools on the compiled path, on the pure-Python one (``SITEMAP_READER_NO_EXTENSIONS=1``), or
on both, interleaved, each a column beside the peers (parse.py's rows likewise).

``--source DIR`` also measures our tools from the checkout in DIR (``git worktree add
/tmp/before eb12ba8``, or ``git archive eb12ba8 | tar -x -C /tmp/before``), interleaved
with the current ones, and prints both: before and after, in one run, on one machine.
The peers are installed by the ``bench`` extra: ``.venv/bin/pip install -e '.[bench]'``;
a missing one is skipped. Benchmarks mean something only on a quiet machine: the load
average is printed with every table, and a table taken above 1.5 says LOADED.

    .venv/bin/python benchmarks/cli.py                          # 200k and 1M, best of 3
    .venv/bin/python benchmarks/cli.py --source /tmp/before     # before and after
    .venv/bin/python benchmarks/cli.py --quick                  # 200k, once, small parse
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE_ENV = "SITEMAP_BENCH_SOURCE"
if __package__ in (None, ""):  # as in discovery.py: this folder off the path
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    sys.path.insert(0, os.environ.get(SOURCE_ENV) or str(HERE.parent))


def _load(name: str) -> ModuleType:
    """A sibling benchmark module, by its file (this folder stays off sys.path)."""
    spec = importlib.util.spec_from_file_location(f"sitemap_bench_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


discovery = _load("discovery")

#: Set: our tools run on the pure-Python parser path (sitemap_reader/parse/native.py).
NO_EXTENSIONS = "SITEMAP_READER_NO_EXTENSIONS"
#: The columns of our tools: an older checkout, then this one's parser paths.
SIDES = ("before", "native", "pure")
#: The key of a peer's runs (measured once per round, whatever our sides).
PEER = "peer"
#: The load average above which a table is marked LOADED (2 cores).
QUIET_LOAD = 1.5
POLL = 0.005
#: Our tools (measured again from ``--source``) and the peers' modules.
OURS = ("iterate", "dump jsonl", "dump csv", "dump txt", "dump state")
PEERS = {
    "scrapy feed": "scrapy",
    "usp ls": "usp",
    "advertools json": "advertools",
    "scrapy": "scrapy",
    "advertools": "advertools",
    "usp": "usp",
}


# --------------------------------------------------------------------------- one run


@dataclass
class Result:
    """One process's run, measured from outside."""

    wall: float
    cpu: float
    rss: float  # MiB
    first: float | None  # seconds to the first output byte


def _first_byte(folder: Path, started: float, done: threading.Event, out: list[float]) -> None:
    """Poll ``folder`` until some file in it holds a byte; the time since ``started``."""
    while not done.is_set():
        for entry in os.scandir(folder):
            if entry.is_file() and entry.stat().st_size > 0:
                out.append(time.perf_counter() - started)
                return
        time.sleep(POLL)


def run_process(
    command: list[str], env: dict[str, str], folder: Path, stdout: Path | None
) -> Result:
    """Run ``command`` once; wall, CPU and peak RSS by ``wait4``; first byte in ``folder``."""
    done, first = threading.Event(), list[float]()
    sink = open(stdout, "wb") if stdout is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        started = time.perf_counter()
        process = subprocess.Popen(
            command, env=env, cwd=folder, stdout=sink, stderr=subprocess.PIPE
        )
        watcher = threading.Thread(target=_first_byte, args=(folder, started, done, first))
        watcher.start()
        assert process.stderr is not None
        errors = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
    finally:
        done.set()
        if stdout is not None:
            sink.close()  # type: ignore[union-attr]
    watcher.join()
    if process.returncode != 0:
        tail = errors.decode(errors="replace")[-2000:]
        raise SystemExit(f"{command} failed ({process.returncode}):\n{tail}")
    rss = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return Result(wall, usage.ru_utime + usage.ru_stime, rss, first[0] if first else None)


@dataclass
class Bench:
    """The commands of every tool on one served site."""

    port: int
    children: int
    source: str | None  # None: this checkout
    scratch: Path
    env: dict[str, str] = field(default_factory=dict)
    pure: bool = False  # our tools forced onto the pure-Python parser path

    @property
    def site(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def environment(self, ours: bool) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        env.pop(SOURCE_ENV, None)
        env.pop(NO_EXTENSIONS, None)
        if ours:
            root = self.source or str(HERE.parent)
            env["PYTHONPATH"] = root
            env[SOURCE_ENV] = root
            if self.pure:
                env[NO_EXTENSIONS] = "1"
        return env

    def run(self, tool: str) -> Result:
        """Run ``tool`` once in a fresh folder."""
        folder = Path(tempfile.mkdtemp(dir=self.scratch))
        try:
            command, stdout, ours = self.command(tool, folder)
            env = self.environment(ours)
            if tool in ("iterate", "scrapy", "advertools", "usp"):
                env[discovery.FIRST_URL_ENV] = str(folder / "first")
            return run_process(command, env, folder, stdout)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def command(self, tool: str, folder: Path) -> tuple[list[str], Path | None, bool]:
        """The command line, the file its stdout goes to, whether it is ours."""
        python = sys.executable
        urls = str(self.children * discovery.URLS_PER_CHILD)
        site_args = ["--variant", "port", "--port", str(self.port), "--urls", urls]
        if tool == "iterate" or tool in ("scrapy", "advertools", "usp"):
            worker = "ours" if tool == "iterate" else tool
            return (
                [python, str(HERE / "discovery.py"), "--work", worker, *site_args],
                None,
                tool == "iterate",
            )
        if tool.startswith("dump"):
            fmt = tool.split()[1] if tool != "dump state" else "jsonl"
            command = [python, "-m", "sitemap_reader", "dump", self.site, "-q", "--no-progress"]
            command += ["-o", str(folder / f"urls.{fmt}"), "--format", fmt]
            if tool == "dump state":
                command += ["--state", str(self.scratch / f"state-{folder.name}.db")]
            return command, None, True
        if tool == "usp ls":
            usp = Path(python).with_name("usp")
            return [str(usp), "ls", "-f", "pages", self.site], folder / "urls.txt", False
        work = {"scrapy feed": "scrapy-feed", "advertools json": "advertools-json"}[tool]
        command = [python, __file__, "--work", work, "--port", str(self.port)]
        return [*command, "--out", str(folder / "urls.jsonl")], None, False


# --------------------------------------------------------------------------- peer workers


def work_scrapy_feed(port: int, out: str) -> None:
    """Scrapy's SitemapSpider from robots.txt, writing each urlset entry as a JSON line.

    The line is written by the spider itself (``json.dumps`` of the entry dict), as the
    issue's baseline did: Scrapy's own feed exports (``FEEDS``, one item through the
    engine per entry) measured ten times slower, which would flatter us."""
    from collections.abc import Iterable, Iterator

    from scrapy.crawler import CrawlerProcess
    from scrapy.spiders import SitemapSpider

    with open(out, "w", encoding="utf-8") as stream:

        class FeedSpider(SitemapSpider):
            name = "feed"
            sitemap_urls = [f"http://127.0.0.1:{port}/robots.txt"]  # noqa: RUF012

            def sitemap_filter(self, entries: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
                if getattr(entries, "type", None) != "urlset":
                    yield from entries  # an index: follow its children
                    return
                write = stream.write
                for entry in entries:
                    write(json.dumps(entry, ensure_ascii=False) + "\n")

        settings = {
            "LOG_LEVEL": "ERROR",
            "TELNETCONSOLE_ENABLED": False,
            "ROBOTSTXT_OBEY": False,
            "DOWNLOAD_WARNSIZE": 0,
        }
        process = CrawlerProcess(settings=settings)
        process.crawl(FeedSpider)
        process.start()


def work_advertools_json(port: int, out: str) -> None:
    """advertools: sitemap_to_df on robots.txt, written as JSON Lines."""
    import logging

    import advertools

    logging.disable(logging.CRITICAL)
    frame = advertools.sitemap_to_df(f"http://127.0.0.1:{port}/robots.txt")
    frame.to_json(out, orient="records", lines=True, date_format="iso")


def work_parse(count: int, repeat: int, path: str | None) -> None:
    """benchmarks/parse.py's speed tables in this process; its ratios as JSON on stdout."""
    parse = _load("parse")
    if path is not None:
        parse.PATHS[:] = [path]
    _, ratios = parse.speed_tables(count, repeat, real=True)
    print(json.dumps(ratios), flush=True)


# --------------------------------------------------------------------------- the table


def load_average() -> str:
    one, five, _ = os.getloadavg()
    mark = "" if one < QUIET_LOAD else " LOADED: figures not valid for goals"
    return f"load average {one:.2f} (5 min {five:.2f}){mark}"


Key = tuple[str, str]  # (tool, "before" | "after")


def measure_site(
    children: int,
    repeat: int,
    tools: list[str],
    source: str | None,
    scratch: Path,
    paths: list[str],
) -> dict[Key, Result]:
    """Best of ``repeat`` per tool (ours per source and parser path), runs interleaved."""
    server, port = discovery.start_server(children, 0.0, ["port"])
    try:
        benches = {p: Bench(port, children, None, scratch, pure=p == "pure") for p in paths}
        if source is not None:
            benches["before"] = Bench(port, children, source, scratch)
        sides = [s for s in SIDES if s in benches]
        order: list[Key] = [(t, s) for t in tools for s in sides if t in OURS]
        order += [(t, PEER) for t in tools if t not in OURS]
        best: dict[Key, Result] = {}
        for round_ in range(repeat):
            print(
                f"  {children * 50}k URLs, round {round_ + 1}/{repeat}; {load_average()}",
                file=sys.stderr,
                flush=True,
            )
            for key in order:
                result = benches[paths[0] if key[1] == PEER else key[1]].run(key[0])
                print(f"    {key[0]} ({key[1]}): {result}", file=sys.stderr, flush=True)
                old = best.get(key)
                if old is None or result.wall < old.wall:
                    best[key] = result
        return best
    finally:
        server.kill()
        server.wait()


@dataclass(frozen=True)
class Row:
    """A line of the goal table: a ratio of two walls, and its goal."""

    label: str
    top: str
    bottom: str
    goal: float
    at_most: bool  # the goal is a ceiling (ours / baseline), else a floor (peer / ours)


ROWS = (
    Row("`dump -o F` JSONL / library iteration", "dump jsonl", "iterate", 1.1, True),
    Row("`dump -o F --format csv` / library iteration", "dump csv", "iterate", 1.2, True),
    Row("`dump -o F --format txt` / library iteration", "dump txt", "iterate", 1.05, True),
    Row("`dump --state S` first run / stateless dump", "dump state", "dump jsonl", 1.15, True),
    Row("Scrapy SitemapSpider JSONL feed / our dump", "scrapy feed", "dump jsonl", 3.0, False),
    Row("`usp ls` / our dump", "usp ls", "dump jsonl", 8.0, False),
    Row("advertools `to_json(lines=True)` / our dump", "advertools json", "dump jsonl", 4.0, False),
    Row("library iteration: Scrapy / ours", "scrapy", "iterate", 3.0, False),
    Row("library iteration: advertools / ours", "advertools", "iterate", 4.0, False),
    Row("library iteration: usp / ours", "usp", "iterate", 8.0, False),
)


def ratio(best: dict[Key, Result], row: Row, side: str, what: str = "wall") -> float | None:
    """``row``'s ratio of walls (or of CPU times) on ``side`` (a peer: its one run)."""

    def value(tool: str) -> float | None:
        found = best.get((tool, side)) or best.get((tool, PEER))
        return None if found is None else float(getattr(found, what))

    top, bottom = value(row.top), value(row.bottom)
    return None if top is None or bottom is None else top / bottom


def cell(value: float | None, row_goal: float, at_most: bool, cpu: float | None = None) -> str:
    if value is None:
        return "n/a"
    met = value <= row_goal if at_most else value >= row_goal
    text = f"{value:.2f}x" + ("" if met else " (misses)")
    return text if cpu is None else f"{text}, CPU {cpu:.2f}x"


def print_tables(sites: dict[int, dict[Key, Result]], parse: dict[str, dict[str, float]]) -> None:
    sides = [s for s in SIDES if any(k[1] == s for b in sites.values() for k in b)]
    print(f"\n{load_average()}; Python {sys.version.split()[0]}; best of the runs")
    print("(each cell: the ratio of walls, the goal's measure, then the ratio of CPU times)\n")
    header = (
        ["run"]
        + [f"{n * 50 // 1000}M {s}" if n >= 20 else f"{n * 50}k {s}" for n in sites for s in sides]
        + ["goal"]
    )
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for row in ROWS:
        cells = [
            cell(ratio(best, row, s), row.goal, row.at_most, ratio(best, row, s, "cpu"))
            for best in sites.values()
            for s in sides
        ]
        goal = ("<= " if row.at_most else ">= ") + f"{row.goal:g}x"
        print(f"| {row.label} | " + " | ".join(cells) + f" | {goal} |")
    parse_sides = [s for s in SIDES if s in parse]
    if parse_sides:
        print(f"\n| parse (benchmarks/parse.py) | {' | '.join(parse_sides)} | goal |")
        print("|---|" + "---:|" * (len(parse_sides) + 1))
    labels = {"plain": "host", "port": "port", "non-ASCII": "non-ASCII", "lower %xx": "lower-hex"}
    for shape, name in labels.items() if parse_sides else ():
        cells = [cell(parse[s].get(shape), 2.0, False) for s in parse_sides]
        print(f"| x the expat floor: {name} | " + " | ".join(cells) + " | >= 2.0 |")
    if parse_sides:
        cells = [cell(parse[s].get("real vs scrapy"), 2.0, False) for s in parse_sides]
        print("| the real corpus: Scrapy / ours | " + " | ".join(cells) + " | >= 2x |")
    print(f"\n{load_average()}\n")
    print("| URLs | tool | side | wall (s) | CPU (s) | peak RSS (MiB) | first byte (s) |")
    print("|---:|---|---|---:|---:|---:|---:|")
    for children, best in sites.items():
        for (tool, side), r in best.items():
            first = "n/a" if r.first is None else f"{r.first:.3f}"
            print(
                f"| {children * 50_000 + discovery.DUPLICATES:,} | {tool} | {side} | {r.wall:.2f} "
                f"| {r.cpu:.2f} | {r.rss:.0f} | {first} |"
            )


def parse_ratios(
    source: str | None, count: int, repeat: int, path: str | None = None
) -> dict[str, float]:
    """parse.py's ratios, measured in a child process running ``source``'s parser (on
    ``path``, for this checkout)."""
    env = dict(os.environ.items())
    env[SOURCE_ENV] = source or str(HERE.parent)
    command = [sys.executable, __file__, "--work", "parse", "--count", str(count)]
    if path is not None:
        command += ["--path", path]
    done = subprocess.run(
        [*command, "--repeat", str(repeat)], env=env, stdout=subprocess.PIPE, text=True, check=True
    )
    ratios: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return ratios


def main() -> None:
    cli = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cli.add_argument(
        "--urls",
        type=discovery.size,
        nargs="+",
        default=[200_000, 1_000_000],
        help="site sizes (default: 200k 1M)",
    )
    cli.add_argument("--repeat", type=int, default=3, help="runs per tool, best kept (default 3)")
    cli.add_argument("--source", help="a checkout to measure as 'before' beside this one")
    cli.add_argument("--quick", action="store_true", help="200k only, once, a 10k-URL parse")
    cli.add_argument("--tools", nargs="+", choices=[*OURS, *PEERS], help="a subset of the tools")
    cli.add_argument("--no-parse", action="store_true", help="skip the parse rows")
    cli.add_argument(
        "--path",
        choices=["native", "pure", "both"],
        default="both",
        help="our parser path(s): native, pure or both (default, where the compiled is built)",
    )
    cli.add_argument("--work", help=argparse.SUPPRESS)
    cli.add_argument("--port", type=int, help=argparse.SUPPRESS)
    cli.add_argument("--out", help=argparse.SUPPRESS)
    cli.add_argument("--count", type=int, default=50_000, help=argparse.SUPPRESS)
    args = cli.parse_args()
    workers: dict[str, Callable[[], None]] = {
        "scrapy-feed": lambda: work_scrapy_feed(args.port, args.out),
        "advertools-json": lambda: work_advertools_json(args.port, args.out),
        "parse": lambda: work_parse(
            args.count, args.repeat, None if args.path == "both" else args.path
        ),
    }
    if args.work:
        workers[args.work]()
        return
    sizes, repeat, count = args.urls, max(1, args.repeat), 50_000
    if args.quick:
        sizes, repeat, count = [200_000], 1, 10_000
    source = str(Path(args.source).resolve()) if args.source else None
    built = importlib.util.find_spec("sitemap_reader.parse._native._expatcore") is not None
    paths = (["native", "pure"] if built else ["pure"]) if args.path == "both" else [args.path]
    if "native" in paths and not built:
        raise SystemExit("--path native: the compiled parser is not built (pip install -e .)")
    tools = list(args.tools or [*OURS, *PEERS])
    for tool in [t for t in tools if t in PEERS and importlib.util.find_spec(PEERS[t]) is None]:
        print(f"skipped {tool}: not installed (pip install -e '.[bench]')", file=sys.stderr)
        tools.remove(tool)
    print(f"before: {source or '(none)'}; after: {HERE.parent}; {load_average()}", file=sys.stderr)
    sites: dict[int, dict[Key, Result]] = {}
    with tempfile.TemporaryDirectory(prefix="sitemap-bench-cli-") as scratch:
        for urls in sizes:
            children = max(1, urls // discovery.URLS_PER_CHILD)
            sites[children] = measure_site(children, repeat, tools, source, Path(scratch), paths)
    parse: dict[str, dict[str, float]] = {}
    if not args.no_parse:
        if source is not None:
            parse["before"] = parse_ratios(source, count, repeat)
        for path in paths:
            parse[path] = parse_ratios(None, count, repeat, path)
    print_tables(sites, parse)


if __name__ == "__main__":
    main()
