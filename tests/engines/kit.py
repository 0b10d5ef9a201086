"""What the Spark and Ray tests share: the farm's layout, the killer, the figures file."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tests.engines.farm import DEADLINE, Farm, owner_of, peak_rss_mib, processes

ROOT = Path(__file__).resolve().parents[2]
#: 13 sites: eight ordinary ones, one 10x larger, one with only /sitemap.xml, one refusing
#: connections, one with a broken gzip child, and one whose last child waits at a gate
#: (the worker reading it is killed there).
FARM = [("ok", 2, 50)] * 8 + [("ok", 20, 50), ("plain", 1, 60), ("down", 0, 0)]
FARM += [("badgz", 3, 40), ("gated", 3, 50)]
#: Where the tests leave their measurements (one JSON object a line) for the report.
FIGURES = ROOT / "build" / "engine-figures.jsonl"


def spellings(farm: Farm) -> list[str]:
    """Every site's target, and a second spelling of each (the same site)."""
    return [s.target for s in farm.sites] + [s.base for s in farm.sites]


@dataclass
class Killer:
    """A thread that waits until a worker reads the gated child, SIGKILLs the process
    holding that connection, then opens the gate (for the retry)."""

    farm: Farm
    marker: str
    killed: list[int] = field(default_factory=list)
    cmdlines: list[str] = field(default_factory=list)
    error: list[BaseException] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Killer:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            if not self.farm.gate_reached.wait(DEADLINE):
                raise AssertionError("no worker reached the gated child")
            assert self.farm.gated_peer is not None
            pid = owner_of(self.farm.gated_peer)
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            self.cmdlines.append(cmdline)
            if self.marker not in cmdline:
                raise AssertionError(f"the reader is not a worker: {pid} {cmdline}")
            os.kill(pid, signal.SIGKILL)
            self.killed.append(pid)
        except BaseException as exc:
            self.error.append(exc)
        finally:
            self.farm.open_gate()

    def join(self) -> None:
        self._thread.join(DEADLINE)
        if self.error:
            raise self.error[0]


def reset_peaks(marker: str) -> None:
    """Start the peak RSS of every live worker whose command line has ``marker`` afresh
    (Linux's ``clear_refs`` 5), so the next :func:`worker_peaks` is the next job's."""
    for pid in processes(marker):
        try:
            Path(f"/proc/{pid}/clear_refs").write_text("5")
        except OSError:
            continue  # it ended meanwhile


def worker_peaks(marker: str) -> list[float]:
    """Peak RSS (MiB) of each live worker process whose command line has ``marker``."""
    peaks = []
    for pid in processes(marker):
        try:
            peaks.append(round(peak_rss_mib(pid), 1))
        except (OSError, LookupError):
            continue  # it ended meanwhile
    return peaks


@dataclass
class Figures:
    """One measured run of an engine, for the report."""

    engine: str
    run: str
    targets: int
    urls: int
    kills: int
    lost: int
    duplicated: int
    seconds: float
    peak_rss_mib: list[float]
    load: str = field(default_factory=lambda: Path("/proc/loadavg").read_text().strip())
    at: float = field(default_factory=time.time)

    def save(self) -> None:
        FIGURES.parent.mkdir(parents=True, exist_ok=True)
        with FIGURES.open("a", encoding="utf-8") as out:
            out.write(json.dumps(asdict(self)) + "\n")


def tally(rows: list[dict[str, object]], farm: Farm) -> tuple[int, int, int]:
    """(URL rows, expected URLs missing, URL rows beyond the first of their URL)."""
    got = Counter((r["target"], r["url"]) for r in rows if r["kind"] == "url")
    expected = {(s.target, url) for s in farm.sites for url in s.expected_urls()}
    lost = len(expected - set(got))
    duplicated = sum(n - 1 for n in got.values())
    return sum(got.values()), lost, duplicated
