"""sitemap_reader.engines.spark on a real local Spark (local[2,3], Java 17), offline.

The farm's 13 sites (tests/engines/kit.py), each given twice in two spellings, through
``discover`` and Spark's Parquet writer, with the Python worker reading the gated site
SIGKILLed mid-target: every URL exactly once, one summary per site with its status, and
``_SUCCESS``. Then the contract (columns, failures as rows, ``max_urls``) and the peak
RSS of a 200k-URL target.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from sitemap_reader.engines import spark as engine
from sitemap_reader.engines.batch import SCHEMA
from sitemap_reader.errors import UsageError, install_line
from tests.engines.conftest import guard_loaded
from tests.engines.farm import Farm
from tests.engines.kit import FARM, Figures, Killer, spellings, tally, worker_peaks
from tests.engines.test_batch import check_contract

#: What the command line of Spark's Python workers holds.
WORKER = "pyspark.daemon"


def _frame(spark: Any, targets: list[str]) -> Any:
    return spark.createDataFrame([(t, i) for i, t in enumerate(targets)], "url string, n int")


def _read(path: Path) -> list[dict[str, Any]]:
    table = pq.read_table(path)
    assert table.schema.names == SCHEMA.names
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def test_every_python_worker_runs_under_the_guard(spark: Any) -> None:
    """The network guard is loaded in Spark's Python workers too."""

    def probe(_: Any) -> Any:
        from tests.engines.conftest import guard_loaded

        yield guard_loaded()

    assert guard_loaded()
    assert set(spark.sparkContext.parallelize(range(4), 2).mapPartitions(probe).collect()) == {True}


def test_a_killed_worker_loses_and_repeats_nothing(spark: Any, tmp_path: Path) -> None:
    """13 sites, one Python worker SIGKILLed mid-target: every URL once, _SUCCESS."""
    out = tmp_path / "out"
    with Farm(FARM) as farm:
        killer = Killer(farm, WORKER).start()
        started = time.monotonic()
        frame = engine.discover(
            _frame(spark, spellings(farm)),
            "url",
            partitions=3,
            parallel=4,
            batch_rows=20,
            allow_private=True,
        )
        frame.write.parquet(str(out))
        seconds = time.monotonic() - started
        killer.join()
        gated = farm.site("gated")
        retried = farm.hits[gated.port, gated.child_path(gated.children - 1)]
    rows = _read(out)
    urls, lost, duplicated = tally(rows, farm)
    Figures(
        "spark", "13 sites x2 spellings, kill", len(farm.sites), urls, len(killer.killed),
        lost, duplicated, round(seconds, 2), worker_peaks(WORKER),
    ).save()  # fmt: skip
    assert (out / "_SUCCESS").exists()
    assert killer.killed and retried >= 2
    check_contract(rows, farm.sites)
    assert lost == duplicated == 0


def test_the_contract(spark: Any, tmp_path: Path) -> None:
    """Columns exactly SCHEMA's; failures are rows (refused port, a private target
    without allow_private); ok has a null error; max_urls caps each target."""
    with Farm([("ok", 2, 50), ("ok", 3, 20), ("down", 0, 0)]) as farm:
        targets = [s.target for s in farm.sites]
        plain = engine.discover(_frame(spark, targets), "url", partitions=2)
        assert plain.columns == SCHEMA.names
        plain.write.parquet(str(tmp_path / "private"))
        capped = engine.discover(
            _frame(spark, targets), "url", partitions=2, max_urls=7, batch_rows=3,
            parallel=1, allow_private=True,
        )  # fmt: skip
        capped.write.parquet(str(tmp_path / "capped"))
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


def test_the_default_partitions_follow_the_cores(
    spark: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Not told ``partitions``, discover runs two tasks per core of the session (4 on
    local[2]), whatever ``spark.sql.shuffle.partitions`` says (Spark's default 200 made
    1,000 small sites five times slower), and says so in the log; a bad number is a
    UsageError on the driver."""
    caplog.set_level(logging.INFO, logger="sitemap_reader")
    shuffle = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "200")
    try:
        df = engine.discover(_frame(spark, ["a.example", "b.example"]), "url")
        assert df.rdd.getNumPartitions() == 2 * spark.sparkContext.defaultParallelism == 4
        told = engine.discover(_frame(spark, ["a.example"]), "url", partitions=3)
        assert told.rdd.getNumPartitions() == 3
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", shuffle)
    (line,) = [r.getMessage() for r in caplog.records if "discovery tasks" in r.getMessage()]
    assert line.startswith("sitemap_reader.engines.spark.discover: 4 discovery tasks (2 per core")
    with pytest.raises(UsageError, match="partitions"):
        engine.discover(_frame(spark, ["a.example"]), "url", partitions=0)


def test_bad_input_is_refused_before_any_job(spark: Any) -> None:
    """A missing target column or one of numbers is one UsageError naming the column,
    raised on the driver with no Spark job started (numbers were cast to "1", "2" and
    ran as failed rows)."""
    context = spark.sparkContext
    context.setJobGroup("bad-input", "discover's checks")
    numbers = spark.createDataFrame([(1,), (2,)], "target int")
    with pytest.raises(UsageError, match="column 'target' does not hold text"):
        engine.discover(numbers, "target")
    with pytest.raises(UsageError, match=r"no column 'ulr' in the input \(did you mean 'url'"):
        engine.discover(_frame(spark, ["a.example"]), "ulr")
    with pytest.raises(UsageError, match="max_urls"):
        engine.discover(_frame(spark, ["a.example"]), "url", max_urls=-1)
    assert list(context.statusTracker().getJobIdsForGroup("bad-input")) == []
    context.setJobGroup("other", "")


def test_an_ok_target_has_a_null_error(spark: Any, tmp_path: Path) -> None:
    """A whole site: status ok, error null, urls its URL rows."""
    with Farm([("plain", 1, 60)]) as farm:
        site = farm.sites[0]
        frame = engine.discover(_frame(spark, [site.target]), "url", allow_private=True)
        frame.write.parquet(str(tmp_path / "ok"))
    rows = _read(tmp_path / "ok")
    check_contract(rows, farm.sites)


def test_peak_rss_of_a_200k_url_target(spark: Any, tmp_path: Path) -> None:
    """A 200k-URL site through one Python worker: its peak RSS stays bounded."""
    with Farm([("ok", 4, 50_000)]) as farm:
        started = time.monotonic()
        frame = engine.discover(
            _frame(spark, [farm.sites[0].target]), "url", partitions=1, allow_private=True
        )
        frame.write.parquet(str(tmp_path / "big"))
        seconds = time.monotonic() - started
    peaks = worker_peaks(WORKER)
    rows = _read(tmp_path / "big")
    urls, lost, duplicated = tally(rows, farm)
    Figures("spark", "one 200k-URL site", 1, urls, 0, lost, duplicated, round(seconds, 2),
            peaks).save()  # fmt: skip
    assert urls == 200_000 and lost == duplicated == 0
    assert peaks and max(peaks) < 400, peaks


def test_without_pyspark_the_message_names_the_extra() -> None:
    """Importing sitemap_reader.engines.spark without PySpark says which extra to install."""
    import subprocess

    code = "import sys; sys.modules['pyspark'] = None\nimport sitemap_reader.engines.spark"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1
    assert install_line("spark") in done.stderr
