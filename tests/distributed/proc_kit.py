"""Running the distributed commands as real processes, and reading what they left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from sitemap_reader.distributed.config import GROUP, Keys, output_name

CLI = [sys.executable, "-m", "sitemap_reader"]
ROOT = Path(__file__).resolve().parents[2]
#: Seconds any single wait of these tests may take before it fails.
DEADLINE = 60.0


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``sitemap-reader ARGS`` to completion."""
    return subprocess.run(
        [*CLI, *args], input=stdin, capture_output=True, text=True, timeout=DEADLINE, cwd=ROOT
    )


def start_worker(
    url: str, ns: str, out: Path, *extra: str, allow_private: bool = True
) -> subprocess.Popen[str]:
    """Start ``sitemap-reader worker`` (short lease, quick retries) in the background; it
    may read the loopback farm unless told otherwise."""
    command = [
        *CLI, "worker", "--redis", url, "--namespace", ns, "-o", str(out),
        "--lease", "1", "--retry-delay", "0", "--no-progress",
        *(["--allow-private"] if allow_private else []), *extra,
    ]  # fmt: skip
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Wait for a worker; its exit code and stderr."""
    _, err = process.communicate(timeout=DEADLINE)
    return process.returncode, err


def wait_until(condition: Callable[[], bool], what: str, timeout: float = DEADLINE) -> None:
    """Poll ``condition`` until it holds; fail the test past the deadline."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)  # the poll interval of a bounded wait


class Peek:
    """A synchronous look at a queue's keys."""

    def __init__(self, url: str, ns: str) -> None:
        self.client = redis.Redis.from_url(url, decode_responses=True)
        self.keys = Keys(ns)

    def close(self) -> None:
        """Close the connection."""
        self.client.close()

    def done(self) -> dict[str, dict[str, Any]]:
        """Target -> summary of every target done."""
        raw: dict[str, str] = self.client.hgetall(self.keys.done)  # type: ignore[assignment]
        return {t: json.loads(s) for t, s in raw.items()}

    def pending(self) -> list[dict[str, Any]]:
        """The pending entries: message_id, consumer, time_since_delivered, times_delivered."""
        if not self.client.exists(self.keys.targets):
            return []
        rows: list[dict[str, Any]] = self.client.xpending_range(
            self.keys.targets, GROUP, min="-", max="+", count=1000
        )
        return rows

    def dead(self) -> list[dict[str, str]]:
        """The dead-letter entries' fields."""
        entries: Any = self.client.xrange(self.keys.dead)
        return [fields for _id, fields in entries]

    def records(self) -> list[dict[str, str]]:
        """The records stream's entries' fields."""
        entries: Any = self.client.xrange(self.keys.records)
        return [fields for _id, fields in entries]


def outputs(directory: Path) -> dict[str, list[str]]:
    """File name -> the URLs of its lines, for every output file (hidden temp files not)."""
    found = {}
    for path in sorted(directory.iterdir()):
        if path.name.startswith("."):
            continue
        found[path.name] = [json.loads(line)["url"] for line in path.read_text().splitlines()]
    return found


def temp_files(directory: Path) -> list[str]:
    """The temporary files a killed worker left behind."""
    return [p.name for p in directory.iterdir() if p.name.startswith(".")]


def file_of(target: str) -> str:
    """The output file name of a target."""
    return output_name(target)


def env_without(name: str) -> dict[str, str]:
    """The environment with one variable removed."""
    return {k: v for k, v in os.environ.items() if k != name}
