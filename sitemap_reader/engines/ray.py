"""Ray Data: discover the targets of a Dataset, in Ray tasks (the ``ray`` extra).

>>> out = discover(ray.data.read_text("domains.txt").rename_columns({"text": "target"}),
...                parallel=32, max_urls=1_000_000)                 # doctest: +SKIP
>>> out.write_parquet("s3://bucket/sitemaps/")                      # doctest: +SKIP

Theory of operation
-------------------
The target column is spelled the reader's canonical way and reduced to one row per
spelling (a group-by), so one site is never read by two tasks at once. The distinct
targets then go through ``map_batches`` with a generator: each block's targets run in
:func:`~sitemap_reader.engines.batch.discover_batches`, up to ``parallel`` at once on one event
loop per task, and its record batches stream out as they fill, so a giant site stays
within the block size. Nothing is written from a task: whatever writes the Dataset owns
the output.

Exactly once, on Ray. A task whose worker dies is run again (Ray retries system
failures), and what the two attempts emitted meets downstream by position: Ray keeps the
blocks the dead attempt had already handed on and takes the new attempt's blocks only
after them. Discovery is not deterministic (sites answer in any order, and live
sitemaps change), so a consumer that reads the stream itself (``iter_batches``, a
following ``map_batches`` in other tasks) can see the target that was in flight twice
or in part. A Ray writer fused into the same task (``write_parquet`` right after
``discover``, the default plan) writes each task's file whole under a name made of the
write's id and the task's index, so a retry replaces the dead attempt's file: the
output files hold every URL exactly once. That writer builds a task's file from all of
the task's blocks in memory (Ray's write step keeps every block of its task until the
file is written), so a task's memory follows its targets' sizes.

:func:`write_parquet` is the bounded way: the discovery task writes its own Parquet file
as its record batches fill (one row group each), to a hidden name of its own attempt in
the output folder, and renames it to the task's name when its targets are done. The name
is the run's id and a digest of the task's targets, which a retry reads again from the
same block, so a retry replaces a dead attempt's file whole and the folder holds every
URL exactly once; the driver removes the hidden files of dead attempts at the end. A
task then holds ``batch_rows`` x ``parallel`` records at most, whatever one target's size.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

from sitemap_reader.errors import missing_extra

try:
    import ray
    import ray.data
except ImportError as exc:  # tested in a subprocess without Ray
    raise missing_extra("sitemap_reader.engines.ray needs Ray Data", "ray") from exc

import pyarrow as pa
import pyarrow.parquet as pq

from sitemap_reader.engines.batch import (
    SCHEMA,
    canonical_target,
    check_target_column,
    chosen_partitions,
    discover_batches,
    engine_arguments,
)
from sitemap_reader.errors import UsageError

if TYPE_CHECKING:
    from ray.data import Dataset

__all__ = ["discover", "write_parquet"]

#: The name of the one column between the stages.
_KEY: Final = "target"


def _canonical(table: pa.Table, column: str) -> pa.Table:
    """Each target spelled the canonical way, in a column of its own."""
    spelled = [canonical_target(text) for text in table.column(column).to_pylist()]
    return pa.table({_KEY: pa.array(spelled, pa.string())})


def _discover(table: pa.Table, **arguments: Any) -> Iterator[pa.Table]:
    """One block's targets through :func:`discover_batches`, streamed out."""
    targets = table.column(_KEY).to_pylist()
    for batch in discover_batches(targets, **arguments):
        yield pa.Table.from_batches([batch])


def _write(table: pa.Table, *, folder: str, run: str, **arguments: Any) -> Iterator[pa.Table]:
    """One block's targets through :func:`discover_batches`, written as they come into
    the task's own file (see the module's theory of operation); one row saying so."""
    targets = table.column(_KEY).to_pylist()
    digest = hashlib.blake2b("\n".join(targets).encode(), digest_size=10).hexdigest()
    final = os.path.join(folder, f"{run}-{digest}.parquet")
    scratch = os.path.join(folder, f".{run}-{digest}.{uuid.uuid4().hex}.tmp")
    rows = 0
    writer: pq.ParquetWriter | None = None
    try:
        for batch in discover_batches(targets, **arguments):
            if writer is None:
                writer = pq.ParquetWriter(scratch, SCHEMA)
            writer.write_batch(batch)
            rows += batch.num_rows
    finally:
        if writer is not None:
            writer.close()
    if writer is not None:
        os.replace(scratch, final)
    yield pa.table({"file": [final if rows else None], "rows": [rows]})


def write_parquet(
    ds: Dataset,
    path: str | os.PathLike[str],
    target_col: str = "target",
    *,
    partitions: int | None = None,
    **options: Any,
) -> list[str]:
    """Discover every target of ``ds[target_col]`` and write the rows as Parquet files
    into the folder ``path``, in the discovery tasks themselves, as they come; the files
    written, once all are.

    The rows and the keywords are :func:`discover`'s. Unlike ``discover(ds).write_parquet``
    (whose write step holds a task's whole output), a task holds at most ``batch_rows`` x
    ``parallel`` records, whatever one site's size, and the folder holds every URL exactly
    once when a worker dies mid-task (see the module's theory of operation). ``path`` is
    a folder every worker can write (local, or a shared mount); object stores are written
    with ``discover(...).write_parquet``. Each call writes files of its own (a run id in
    their names): write each run to a fresh folder.
    """
    door = "sitemap_reader.engines.ray.write_parquet"
    folder = os.fspath(path)
    if "://" in folder and not folder.startswith("file://"):
        raise UsageError(
            f"{door}: path: a folder the workers share, not {folder!r} "
            "(for an object store use discover(...).write_parquet)"
        )
    folder = os.path.abspath(folder.removeprefix("file://"))
    os.makedirs(folder, exist_ok=True)
    run = uuid.uuid4().hex[:12]
    distinct = _distinct(door, ds, target_col, partitions)
    arguments = engine_arguments(door, options)
    written = distinct.map_batches(
        functools.partial(_write, folder=folder, run=run, **arguments),
        batch_format="pyarrow",
        batch_size=None,
    )
    files = sorted(row["file"] for row in written.take_all() if row["file"])
    for stray in glob.glob(os.path.join(glob.escape(folder), f".{run}-*.tmp")):
        os.remove(stray)  # a dead attempt's file, replaced by its retry's
    return files


def discover(
    ds: Dataset, target_col: str = "target", *, partitions: int | None = None, **options: Any
) -> Dataset:
    """A Dataset of the URL and summary rows of every target in ``ds[target_col]``.

    Its columns are exactly :data:`~sitemap_reader.engines.batch.SCHEMA`'s, in order (``ds``'s
    other columns are not carried through; join on ``target``, the canonical spelling,
    to bring them back). ``options`` go to
    :func:`~sitemap_reader.engines.batch.discover_batches`: ``parallel``, ``batch_rows``, and
    every reader option (``max_urls``, ``allow_private``, ``since``, ... or
    ``options=Options(...)``); a bad one is a UsageError here, on the driver.
    ``partitions`` sets how many blocks (so tasks) the distinct targets are spread over
    (the group-by's partitions; default: two per CPU of the Ray cluster, or of this
    machine before Ray starts, said in the log).

    A target that fails is a ``failed`` summary row, never a failed job. For
    exactly-once files, write the result directly (``.write_parquet(path)``): see the
    module's theory of operation.
    """
    door = "sitemap_reader.engines.ray.discover"
    arguments = engine_arguments(door, options)
    distinct = _distinct(door, ds, target_col, partitions)
    return distinct.map_batches(
        functools.partial(_discover, **arguments), batch_format="pyarrow", batch_size=None
    )


def _distinct(door: str, ds: Dataset, target_col: str, partitions: int | None) -> Dataset:
    """The distinct canonical targets of ``ds[target_col]``, spread over the tasks."""
    column = check_target_column(door, target_col, _text_columns(ds))
    keyed = ds.map_batches(functools.partial(_canonical, column=column), batch_format="pyarrow")
    count = chosen_partitions(door, partitions, _cores())
    return keyed.groupby(_KEY, num_partitions=count).count().select_columns([_KEY])


def _cores() -> int:
    """The Ray cluster's CPUs once Ray runs, else this machine's (discover() does not
    start Ray: the Dataset is lazy)."""
    if ray.is_initialized():
        return int(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call,unused-ignore]
    return os.cpu_count() or 1


def _text_columns(ds: Dataset) -> dict[str, bool | None] | None:
    """Each column of ``ds`` and whether it holds strings, as far as Ray knows without
    running anything (None: a Dataset whose schema needs a run is not checked here; its
    bad values become failed rows)."""
    schema = ds.schema(fetch_if_missing=False)
    if schema is None:
        return None
    found: dict[str, bool | None] = {}
    for name, kind in zip(schema.names, schema.types, strict=True):
        is_text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
        found[name] = True if is_text else None if kind is object else False
    return found
