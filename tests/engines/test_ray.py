"""sitemap_reader.engines.ray on a real local Ray (2 CPUs, no dashboard, loopback only), offline.

The farm's 13 sites (tests/engines/kit.py), each given twice in two spellings, through
``discover`` and Ray's Parquet writer fused into the same tasks, with the Ray worker
reading the gated site SIGKILLed mid-target: every URL exactly once, one summary per
site with its status. Then the contract and the peak RSS of a 200k-URL target.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import ray

from sitemap_reader.engines import ray as engine
from sitemap_reader.engines.batch import SCHEMA
from sitemap_reader.errors import UsageError, install_line
from tests.engines.conftest import guard_loaded
from tests.engines.farm import Farm
from tests.engines.kit import (
    FARM,
    Figures,
    Killer,
    reset_peaks,
    spellings,
    tally,
    worker_peaks,
)
from tests.engines.test_batch import check_contract

#: What the command line of Ray's worker processes starts with (their process title).
WORKER = "ray::"


def _dataset(ray: Any, targets: list[str]) -> Any:
    return ray.data.from_items([{"url": t, "n": i} for i, t in enumerate(targets)])


def _read(path: Path) -> list[dict[str, Any]]:
    table = pq.read_table(path)
    assert table.schema.names == SCHEMA.names
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def test_every_worker_runs_under_the_guard(ray_cluster: Any) -> None:
    """The network guard is loaded in Ray's worker processes too."""

    probe = ray_cluster.remote(guard_loaded)
    assert ray_cluster.get([probe.remote() for _ in range(4)]) == [True] * 4


def test_a_killed_worker_loses_and_repeats_nothing(ray_cluster: Any, tmp_path: Path) -> None:
    """13 sites, the worker reading one SIGKILLed mid-target: every URL once in the
    files Ray's writer made."""
    out = tmp_path / "out"
    with Farm(FARM) as farm:
        killer = Killer(farm, WORKER).start()
        started = time.monotonic()
        dataset = engine.discover(
            _dataset(ray_cluster, spellings(farm)),
            "url",
            partitions=3,
            parallel=4,
            batch_rows=20,
            allow_private=True,
        )
        dataset.write_parquet(str(out))
        seconds = time.monotonic() - started
        killer.join()
        gated = farm.site("gated")
        retried = farm.hits[gated.port, gated.child_path(gated.children - 1)]
    rows = _read(out)
    urls, lost, duplicated = tally(rows, farm)
    Figures(
        "ray", "13 sites x2 spellings, kill", len(farm.sites), urls, len(killer.killed),
        lost, duplicated, round(seconds, 2), worker_peaks(WORKER),
    ).save()  # fmt: skip
    assert killer.killed and retried >= 2
    check_contract(rows, farm.sites)
    assert lost == duplicated == 0


def test_write_parquet_under_a_kill_writes_every_url_once(ray_cluster: Any, tmp_path: Path) -> None:
    """The writing door: 13 sites, the worker reading one SIGKILLed mid-target; the
    files the tasks wrote hold every URL once, the dead attempt's hidden file is gone,
    and the files returned are the folder's."""
    out = tmp_path / "out"
    with Farm(FARM) as farm:
        killer = Killer(farm, WORKER).start()
        started = time.monotonic()
        files = engine.write_parquet(
            _dataset(ray_cluster, spellings(farm)), out, "url", partitions=3, parallel=4,
            batch_rows=20, allow_private=True,
        )  # fmt: skip
        seconds = time.monotonic() - started
        killer.join()
    assert sorted(str(f) for f in out.iterdir()) == files
    rows = _read(out)
    urls, lost, duplicated = tally(rows, farm)
    Figures(
        "ray", "13 sites x2 spellings, kill, write_parquet", len(farm.sites), urls,
        len(killer.killed), lost, duplicated, round(seconds, 2), worker_peaks(WORKER),
    ).save()  # fmt: skip
    assert killer.killed
    check_contract(rows, farm.sites)
    assert lost == duplicated == 0


def test_write_parquet_memory_follows_the_batch_not_the_site(
    ray_cluster: Any, tmp_path: Path
) -> None:
    """One 1M-URL site written by the writing door with batch_rows=1,000: the worker
    that read it peaks under 300 MiB (the fused writer held the task's whole output:
    539 MiB)."""
    with Farm([("ok", 20, 50_000)]) as farm:
        reset_peaks(WORKER)
        started = time.monotonic()
        files = engine.write_parquet(
            _dataset(ray_cluster, [farm.sites[0].target]), tmp_path / "big", "url",
            partitions=1, batch_rows=1_000, allow_private=True,
        )  # fmt: skip
        seconds = time.monotonic() - started
    peaks = worker_peaks(WORKER)
    urls = sum(pq.read_metadata(f).num_rows for f in files) - 1  # one summary row
    Figures("ray", "one 1M-URL site, write_parquet", 1, urls, 0, 1_000_000 - min(urls, 1_000_000),
            max(0, urls - 1_000_000), round(seconds, 2), peaks).save()  # fmt: skip
    assert urls == 1_000_000
    assert peaks and max(peaks) < 300, peaks


def test_write_parquet_refuses_an_object_store(ray_cluster: Any) -> None:
    """A path of an object store is a UsageError saying what to use instead."""
    with pytest.raises(UsageError, match=r"discover\(\.\.\.\)\.write_parquet"):
        engine.write_parquet(ray.data.from_items([{"target": "a.example"}]), "s3://b/x")


def test_the_contract(ray_cluster: Any, tmp_path: Path) -> None:
    """Columns exactly SCHEMA's; failures are rows (refused port, a private target
    without allow_private); max_urls caps each target; an ok target's error is null."""
    with Farm([("ok", 2, 50), ("plain", 1, 20), ("down", 0, 0)]) as farm:
        targets = [s.target for s in farm.sites]
        plain = engine.discover(_dataset(ray_cluster, targets), "url", partitions=2)
        assert plain.schema().names == SCHEMA.names
        plain.write_parquet(str(tmp_path / "private"))
        capped = engine.discover(
            _dataset(ray_cluster, targets), "url", partitions=2, max_urls=7, batch_rows=3,
            parallel=1, allow_private=True,
        )  # fmt: skip
        capped.write_parquet(str(tmp_path / "capped"))
    refused = _read(tmp_path / "private")
    assert {r["kind"] for r in refused} == {"summary"} and len(refused) == 3
    assert all(r["status"] == "failed" and "allow_private" in r["error"] for r in refused)
    rows = _read(tmp_path / "capped")
    for site in farm.sites:
        mine = [r for r in rows if r["target"] == site.target]
        (summary,) = [r for r in mine if r["kind"] == "summary"]
        assert summary["urls"] == len(mine) - 1 <= 7
        if site.kind == "down":
            assert summary["status"] == "failed" and summary["error"]
        else:
            assert summary["urls"] == 7 and summary["status"] == "partial"


def test_the_default_partitions_follow_the_cpus(
    ray_cluster: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Not told ``partitions``, discover spreads the targets over two blocks per CPU of
    the cluster (4 on the 2-CPU test cluster), not Ray Data's shuffle default, and says so
    in the log; a bad number is a UsageError before any task."""
    caplog.set_level(logging.INFO, logger="sitemap_reader")
    engine.discover(ray.data.from_items([{"target": "a.example"}]), "target")
    (line,) = [r.getMessage() for r in caplog.records if "discovery tasks" in r.getMessage()]
    assert line.startswith("sitemap_reader.engines.ray.discover: 4 discovery tasks (2 per core")
    with pytest.raises(UsageError, match="partitions"):
        engine.discover(ray.data.from_items([{"target": "a.example"}]), "target", partitions=0)


def test_bad_input_is_refused_before_any_task(ray_cluster: Any) -> None:
    """A missing target column or one of numbers is one UsageError naming the column,
    raised by discover itself (a lazy Dataset: nothing has run), not a traceback inside
    a task once the job started."""
    numbers = ray.data.from_items([{"target": 1}, {"target": 2}])
    with pytest.raises(UsageError, match="column 'target' does not hold text"):
        engine.discover(numbers, "target")
    texts = ray.data.from_items([{"target": "a.example"}])
    with pytest.raises(UsageError, match=r"no column 'taget' in the input \(did you mean"):
        engine.discover(texts, "taget")


def test_an_ok_target_streams_with_a_null_error(ray_cluster: Any) -> None:
    """Read as a stream (iter_batches): a whole site is ok, its error null."""
    with Farm([("plain", 1, 60)]) as farm:
        dataset: Any = engine.discover(
            _dataset(ray_cluster, [farm.sites[0].target]), "url", partitions=1,
            allow_private=True, batch_rows=7,
        )  # fmt: skip
        rows = [row for b in dataset.iter_batches(batch_format="pyarrow") for row in b.to_pylist()]
    check_contract(rows, farm.sites)


def test_peak_rss_of_a_200k_url_target(ray_cluster: Any) -> None:
    """A 200k-URL site streamed through one Ray task: the workers' peak RSS stays bounded."""
    with Farm([("ok", 4, 50_000)]) as farm:
        started = time.monotonic()
        dataset: Any = engine.discover(
            _dataset(ray_cluster, [farm.sites[0].target]), "url", partitions=1,
            allow_private=True,
        )  # fmt: skip
        urls = 0
        for batch in dataset.iter_batches(batch_format="pyarrow", batch_size=None):
            urls += sum(1 for kind in batch.column("kind").to_pylist() if kind == "url")
        seconds = time.monotonic() - started
    peaks = worker_peaks(WORKER)
    Figures("ray", "one 200k-URL site, streamed", 1, urls, 0, 200_000 - min(urls, 200_000),
            max(0, urls - 200_000), round(seconds, 2), peaks).save()  # fmt: skip
    assert urls == 200_000
    assert peaks and max(peaks) < 600, peaks


def test_without_ray_the_message_names_the_extra() -> None:
    """Importing sitemap_reader.engines.ray without Ray says which extra to install."""
    code = "import sys; sys.modules['ray'] = None\nimport sitemap_reader.engines.ray"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert install_line("ray") in done.stderr
