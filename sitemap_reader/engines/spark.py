"""PySpark: discover the targets of a DataFrame, on the executors (the ``spark`` extra).

>>> out = discover(spark.read.text("domains.txt").withColumnRenamed("value", "target"),
...                parallel=32, max_urls=1_000_000)                 # doctest: +SKIP
>>> out.write.mode("overwrite").parquet("s3a://bucket/sitemaps/")   # doctest: +SKIP

Theory of operation
-------------------
Two stages. The first spells each target the reader's canonical way (``mapInArrow`` over
the target column) and hash-partitions the rows by that spelling, so every copy of one
site lands in the same partition, where :func:`~sitemap_reader.engines.batch.discover_batches`
drops the repeats: one site is never read by two tasks at once, and per-host politeness
needs no limiter across tasks. The second runs ``discover_batches`` over each partition
(``mapInArrow`` again): up to ``parallel`` targets at once on one event loop per Python
worker, record batches streamed to the JVM as they fill. Nothing is written from a task;
the DataFrame is lazy, and whatever writes it (``df.write.parquet``, a table format) owns
the output. Spark's commit protocol then makes the files exactly-once: a task attempt
writes to its own temporary place and only the attempt the driver commits becomes
visible (a killed or speculative attempt is discarded), and ``_SUCCESS`` marks a job
whose every task was committed.

The reader's options are checked on the driver, before any task starts, and shipped to
the executors as one picklable :class:`~sitemap_reader.options.Options` value.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

from sitemap_reader.errors import missing_extra

try:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError as exc:  # tested in a subprocess without PySpark
    raise missing_extra("sitemap_reader.engines.spark needs PySpark", "spark") from exc

import pyarrow as pa

from sitemap_reader.engines.batch import (
    SCHEMA,
    canonical_target,
    check_target_column,
    chosen_partitions,
    discover_batches,
    engine_arguments,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["SPARK_SCHEMA", "discover"]

_DDL: Final = {
    pa.string(): "string",
    pa.float64(): "double",
    pa.int64(): "bigint",
    pa.bool_(): "boolean",
    pa.timestamp("us", tz="UTC"): "timestamp",
}
#: :data:`~sitemap_reader.engines.batch.SCHEMA` in Spark's DDL: the output columns, in order.
SPARK_SCHEMA: Final = ", ".join(f"`{f.name}` {_DDL[f.type]}" for f in SCHEMA)
#: The name of the one column between the two stages.
_KEY: Final = "target"


def _canonical(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Stage one: each target spelled the canonical way."""
    for batch in batches:
        spelled = [canonical_target(text) for text in batch.column(0).to_pylist()]
        yield pa.RecordBatch.from_arrays([pa.array(spelled, pa.string())], names=[_KEY])


def _discover(batches: Iterator[pa.RecordBatch], **arguments: Any) -> Iterator[pa.RecordBatch]:
    """Stage two: one partition's targets through :func:`discover_batches`."""
    targets = (text for batch in batches for text in batch.column(0).to_pylist())
    yield from discover_batches(targets, **arguments)


def discover(
    df: DataFrame, target_col: str = "target", *, partitions: int | None = None, **options: Any
) -> DataFrame:
    """A DataFrame of the URL and summary rows of every target in ``df[target_col]``.

    Its columns are exactly :data:`~sitemap_reader.engines.batch.SCHEMA`'s, in order (``df``'s
    other columns are not carried through; join on ``target``, the canonical spelling,
    to bring them back). ``options`` go to
    :func:`~sitemap_reader.engines.batch.discover_batches`: ``parallel``, ``batch_rows``, and
    every reader option (``max_urls``, ``allow_private``, ``since``, ... or
    ``options=Options(...)``); a bad one is a UsageError here, on the driver.
    ``partitions`` is the number of discovery tasks (default: two per core of the
    session's default parallelism, said in the log); each runs up to ``parallel``
    targets at once.

    A target that fails is a ``failed`` summary row, never a failed job. Write the result
    with Spark's writers (``.write.parquet(path)``): the commit protocol keeps exactly one
    attempt of each task.
    """
    door = "sitemap_reader.engines.spark.discover"
    arguments = engine_arguments(door, options)
    text = {field.name: isinstance(field.dataType, T.StringType) for field in df.schema.fields}
    column = check_target_column(door, target_col, text)
    count = chosen_partitions(door, partitions, _cores(df.sparkSession))
    keyed = df.select(F.col(column).alias(_KEY)).mapInArrow(_canonical, f"`{_KEY}` string")
    spread = keyed.repartition(count, _KEY)
    return spread.mapInArrow(functools.partial(_discover, **arguments), SPARK_SCHEMA)


def _cores(spark: Any) -> int:
    """The session's default parallelism (its cores), or this machine's where the session
    does not say (Spark Connect has no SparkContext)."""
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # any session without a SparkContext (Spark Connect)
        return os.cpu_count() or 1
