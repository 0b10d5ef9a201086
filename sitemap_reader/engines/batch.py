"""Many targets on one event loop, out as Arrow record batches: what the engines share.

:func:`discover_batches` is the engine-neutral core of :mod:`sitemap_reader.engines.spark` and
:mod:`sitemap_reader.engines.ray` (and of any other engine that can call a Python generator per
partition): it takes an iterable of targets and yields :class:`pyarrow.RecordBatch` values
of :data:`SCHEMA`, one row per URL record and one summary row per target.

>>> for batch in discover_batches(["example.com"], allow_private=True):  # doctest: +SKIP
...     print(batch.num_rows)

Theory of operation
-------------------
One :class:`~sitemap_reader.SitemapReader` (one connection pool, one DNS cache, one pool of
parsing processes) serves every target of the call. A feeder walks the targets lazily,
spells each one the reader's canonical way (:func:`canonical_target`), drops the repeats,
and keeps at most ``parallel`` of them running, each as its own run of the reader (so each
has its own budgets: ``max_urls``, ``deadline``, ``max_sitemaps`` are per target). A run's
record lists go into one bounded queue, then its summary; a builder takes from the queue
until ``batch_rows`` rows are in, and the generator yields them as one record batch.

The event loop runs only while a batch is being filled: between two ``next()`` calls the
loop is parked, so a slow consumer holds the reads instead of letting rows pile up. What
is held at any time is bounded by ``batch_rows`` plus, per running target, the reader's
channel and one queued list (at most 2,048 records each). What grows with a target is
only the reader's run-wide dedupe table (17 to 25 bytes per URL, see
:mod:`sitemap_reader.discovery.dedupe`): a process reading a 200k-URL site peaked 17 MiB
above one reading a 20k-URL site.

A target's summary comes after all its URL rows. Its status is ``ok`` when every sitemap
was read whole; otherwise (a sitemap failed, a budget such as ``max_urls`` or ``deadline``
stopped the run, the run raised: unreachable, refused, nothing found) it is ``partial``
when URLs came and ``failed`` when none did.
``urls`` counts the URL rows of the target; ``error`` says why a target is not ``ok``.

Targets are data, as on the distributed queue: a loopback or private address, or a name
that resolves to one, is refused unless ``allow_private=True`` (the reader's default
trusts a target that is one, and a typed name wherever it resolves, which suits a target
typed by hand, not one read from a table: :func:`~sitemap_reader.discovery.addresses.from_data`),
and local files are refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import hashlib
import itertools
import json
import logging
import os
import secrets
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Unpack

from sitemap_reader.errors import missing_extra

try:
    import pyarrow as pa
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise missing_extra("sitemap_reader.engines.batch needs pyarrow", "parquet") from exc

from sitemap_reader._safe_text import printable
from sitemap_reader._words import stop_phrase
from sitemap_reader.discovery.addresses import NOT_HTTP, data_refusal, from_data
from sitemap_reader.discovery.targets import canonical_spelling
from sitemap_reader.errors import DiscoveryError, UsageError, error_line
from sitemap_reader.options import Options
from sitemap_reader.options.declare import OptionError, PrivateSetting, count
from sitemap_reader.options.groups import options_of
from sitemap_reader.records import RECORD_FIELDS, UrlRecord
from sitemap_reader.records.fields import Kind, RecordField, names
from sitemap_reader.records.outcomes import Evidence, Verdict
from sitemap_reader.store.files import create_new

logger = logging.getLogger("sitemap_reader")

if TYPE_CHECKING:
    from sitemap_reader.crawl import SitemapReader
    from sitemap_reader.discovery.model import Run
    from sitemap_reader.discovery.observer import Observer
    from sitemap_reader.options._keywords import ReaderKeywords

__all__ = [
    "SCHEMA",
    "ChunkReport",
    "canonical_target",
    "discover_batches",
    "engine_arguments",
    "run_in_chunks",
]

#: Targets run at once in one call: sitemap reading waits on the network, so one loop
#: keeps dozens busy; 32 matches a few times the reader's default ``concurrency`` (16).
PARALLEL: Final = 32
#: Rows per record batch: Arrow and the engines move batches of thousands of rows at a
#: time cheaply; 10,000 rows of URL records are a few MiB.
BATCH_ROWS: Final = 10_000

_TEXT = pa.string()
#: The Arrow type of the record columns of each kind: the nested fields as JSON text
#: (their shapes vary from record to record), as in ``dump --format parquet`` and the CSV
#: output.
ARROW_TYPES: Final = {
    Kind.TEXT: _TEXT,
    Kind.SITE_TEXT: _TEXT,
    Kind.TIMESTAMP: pa.timestamp("us", tz="UTC"),
    Kind.ENUM: _TEXT,
    Kind.FLOAT: pa.float64(),
    Kind.FLAG: pa.bool_(),
    Kind.NESTED: _TEXT,
}


def record_columns(fields: Sequence[RecordField]) -> list[tuple[str, pa.DataType]]:
    """The columns of records described by ``fields``: one per field, in their order."""
    return [(f.name, ARROW_TYPES[f.kind]) for f in fields]


#: The columns only a summary row fills: ``status`` (ok, partial, failed), ``urls``,
#: ``error`` (null when ok), ``stats`` (the run's counters as JSON), ``verdict`` (the
#: target's: ok, partial, empty, absent, blocked, unreachable, broken, refused, stopped)
#: and ``evidence`` (what the verdict rests on, as JSON).
SUMMARY_COLUMNS: Final = (
    ("status", _TEXT),
    ("urls", pa.int64()),
    ("error", _TEXT),
    ("stats", _TEXT),
    ("verdict", _TEXT),
    ("evidence", _TEXT),
)
#: One row per URL record (``kind == "url"``) and one per target (``kind == "summary"``):
#: URL rows carry every record field, the summary columns null; summary rows the
#: summary columns, their record fields null.
SCHEMA: Final = pa.schema(
    [("target", _TEXT), ("kind", _TEXT), *record_columns(RECORD_FIELDS), *SUMMARY_COLUMNS]
)
#: The record fields written as JSON text.
_NESTED: Final = frozenset(names(RECORD_FIELDS, Kind.NESTED))

#: Errors quoted in a summary are cut to this many characters (a target's site chooses
#: some of the text; a row stays a row).
ERROR_CHARS: Final = 1_000
#: Failed sitemaps named in a partial target's error.
FAILURES_SHOWN: Final = 3


# --------------------------------------------------------------------------- targets


def canonical_target(text: str | None) -> str:
    """The one spelling of a target, by the reader's rule (the distributed queue's): a
    domain or an https site on its default port is ``host[:port]``, any other URL the
    reader's normal form. Text that is no http(s) target comes back stripped (its run
    then fails with the reason); None is the empty string.

    >>> [canonical_target(t) for t in ("Example.COM", "https://example.com:443/", " x y ")]
    ['example.com', 'example.com', 'x y']
    """
    if text is None:
        return ""
    try:
        return canonical_spelling(text)
    except UsageError:
        return text.strip()


def _taken(given: object, allow_private: PrivateSetting) -> tuple[str, str | None]:
    """A target as the engine's input gave it: its canonical spelling and why it is not
    run (None: it is run). Anything but text (a number, NaN from a pandas column) is its
    own refused row, shown as its text."""
    if given is None or isinstance(given, str):
        target = canonical_target(given)
        return target, refusal(target, allow_private)
    shown = printable(str(given))[:ERROR_CHARS]
    return shown, f"refused: a target is text, not {type(given).__name__}: {shown!r}"


def refusal(target: str, allow_private: PrivateSetting) -> str | None:
    """Why a target read from data is not run (None: it is run): the guard's rule for
    targets from data (:func:`~sitemap_reader.discovery.addresses.data_refusal`)."""
    reason = data_refusal(target, allow_private)
    if reason == NOT_HTTP:
        return f"{reason}: {printable(target)!r}"
    return None if reason is None else f"{reason} needs allow_private=True"


# --------------------------------------------------------------------------- rows


class Summary(NamedTuple):
    """The end of one target's run: its summary row."""

    target: str
    status: str
    urls: int
    error: str | None
    stats: str | None
    verdict: str
    evidence: str


def _json(value: Any) -> str | None:
    """A nested field's value as JSON text (None when it has none). News keeps
    ``json.dumps``'s ASCII escapes (these columns' bytes as they were; the tuples here and
    every nested field in Parquet are written without)."""
    if not value:
        return None
    if isinstance(value, tuple):
        return json.dumps([item.to_dict() for item in value], ensure_ascii=False)
    return json.dumps(value.to_dict())


class Rows:
    """Columns of one record batch being filled."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in SCHEMA.names}
        self.count = 0

    def add_records(self, target: str, records: Sequence[UrlRecord]) -> None:
        """One URL row per record."""
        n = len(records)
        c = self.columns
        c["target"].extend([target] * n)
        c["kind"].extend(["url"] * n)
        for name in names(RECORD_FIELDS):
            values = [getattr(r, name) for r in records]
            c[name].extend(list(map(_json, values)) if name in _NESTED else values)
        for name, _ in SUMMARY_COLUMNS:
            c[name].extend([None] * n)
        self.count += n

    def add_summary(self, summary: Summary) -> None:
        """The summary row of a target."""
        values = {"kind": "summary", **summary._asdict()}
        for name, column in self.columns.items():
            column.append(values.get(name))
        self.count += 1

    def take(self) -> pa.RecordBatch:
        """The rows so far as a record batch; the builder starts again empty."""
        batch = pa.RecordBatch.from_pydict(self.columns, schema=SCHEMA)
        self.columns = {name: [] for name in SCHEMA.names}
        self.count = 0
        return batch


# --------------------------------------------------------------------------- one target


def _describe(exc: BaseException, target: str) -> str:
    """One line for a target's error (the row names the target): the reason alone."""
    return exc.reason(target) if isinstance(exc, DiscoveryError) else error_line(exc)


def _verdict(run: Run | None, urls: int, error: str | None) -> tuple[str, str | None]:
    """(status, error) of a target from its run and what came of it: ok, or partial when
    some URLs came, failed when none did."""
    if error is None:
        assert run is not None
        error = _shortfall(run)
        if error is None:
            return "ok", None
    return ("partial" if urls else "failed"), error[:ERROR_CHARS]


def _shortfall(run: Run) -> str | None:
    """Why a finished run did not read its whole site (None: it did)."""
    if run.stats.stopped:  # the sitemaps the stop cut short are not failures of the site
        return stop_phrase(run.stats.stopped)
    failures = run.failures()
    if not failures:
        return None
    shown = "; ".join(f"{node.url}: {node.reason}" for node in failures[:FAILURES_SHOWN])
    more = len(failures) - FAILURES_SHOWN
    tail = f"; {more} more" if more > 0 else ""
    return f"{len(failures)} sitemap(s) failed: {shown}{tail}"


def _stats(run: Run | None) -> str | None:
    if run is None:
        return None
    return json.dumps(run.stats.to_dict())


def _capture(reader: SitemapReader, box: list[Run]) -> Callable[[Observer], Observer]:
    """An ``observe`` hook that keeps the run it is called for: ``batches()`` calls it
    right after making the run, before its first await, so ``last_run`` is that run even
    while other targets share the reader."""

    def observe(observer: Observer) -> Observer:
        assert reader.last_run is not None
        box.append(reader.last_run)
        return observer

    return observe


Item = tuple[str, Sequence[UrlRecord]] | Summary


async def _run_target(
    reader: SitemapReader, target: str, refused: str | None, out: asyncio.Queue[Item | None]
) -> None:
    """Discover one target into ``out``: its record lists, then its summary."""
    urls = 0
    error = refused
    box: list[Run] = []
    if refused is None:
        try:
            stream = reader.batches(target, observe=_capture(reader, box))
            async with contextlib.aclosing(stream) as records:
                async for batch in records:
                    urls += len(batch)
                    await out.put((target, batch))
        except Exception as exc:  # any failure of one target is that target's row
            error = _describe(exc, target)
    run = box[0] if box else None
    status, error = _verdict(run, urls, error)
    verdict = next(iter(run.verdicts.values()), None) if run is not None else None
    if verdict is None:  # refused before any run (the guard, a target that is no target)
        verdict = Verdict(
            target, "refused", 0, (Evidence(target, None, "refused", (error or "",)),)
        )
    evidence = json.dumps(evidence_of(verdict))
    await out.put(Summary(target, status, urls, error, _stats(run), verdict.kind, evidence))


def evidence_of(verdict: Verdict) -> list[dict[str, object]]:
    """The summary row's evidence: the verdict's, then, when the client ladder read the
    target again (``client="auto"``), the first attempt's, each marked with that
    attempt's verdict (``"ladder": "blocked"``)."""
    found: list[dict[str, object]] = [e.to_dict() for e in verdict.evidence]
    if verdict.ladder is not None:
        kind = verdict.ladder.kind
        found += [{**e.to_dict(), "ladder": kind} for e in verdict.ladder.evidence]
    return found


# --------------------------------------------------------------------------- the call


class BatchRun:
    """The state of one :func:`discover_batches` call, driven from a parked loop."""

    def __init__(
        self, targets: Iterable[str | None], options: Options, parallel: int, batch_rows: int
    ) -> None:
        self.targets = targets
        self.options = options
        self.parallel = parallel
        self.batch_rows = batch_rows
        self.rows = Rows()
        self.pending: deque[Item] = deque()
        self.done = False
        self.reader: SitemapReader | None = None
        self.queue: asyncio.Queue[Item | None] | None = None
        self.feeder: asyncio.Task[None] | None = None
        self.running: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Open the reader and start feeding targets."""
        from sitemap_reader.crawl import SitemapReader

        private = from_data(self.options.network.allow_private)  # targets are data
        reader = SitemapReader(self.options.replace(allow_private=private))
        reader.one_of_many = True  # one target a run: per_target names the others too
        self.reader = await reader.__aenter__()
        self.queue = asyncio.Queue(self.parallel)
        self.feeder = asyncio.create_task(self._feed())

    async def _feed(self) -> None:
        assert self.reader is not None and self.queue is not None
        slots = asyncio.Semaphore(self.parallel)
        seen: set[str] = set()
        private = self.options.network.allow_private
        for given in self.targets:
            target, refused = _taken(given, private)
            if target in seen:
                continue
            seen.add(target)
            await slots.acquire()
            task = asyncio.create_task(_run_target(self.reader, target, refused, self.queue))
            self.running.add(task)
            task.add_done_callback(self.running.discard)
            task.add_done_callback(lambda _: slots.release())
        while self.running:
            await asyncio.gather(*self.running)
        await self.queue.put(None)

    async def next_batch(self) -> pa.RecordBatch | None:
        """Fill the next record batch (None once every target was summarized)."""
        assert self.queue is not None and self.feeder is not None
        while self.rows.count < self.batch_rows:
            if not self.pending:
                if self.done:
                    break
                item = await self._next_item()
                if item is None:
                    self.done = True
                    break
                self.pending.append(item)
            self._take_pending()
        return self.rows.take() if self.rows.count else None

    async def _next_item(self) -> Item | None:
        """The next queued item; the feeder's own error (the engine's input broke)
        ends the call."""
        assert self.queue is not None and self.feeder is not None
        getter = asyncio.ensure_future(self.queue.get())
        try:
            await asyncio.wait({getter, self.feeder}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not getter.done():
                getter.cancel()  # a cancelled get leaves its item in the queue
        if getter.done() and not getter.cancelled():
            return getter.result()
        self.feeder.result()  # raises what broke the feeder
        return await self.queue.get()

    def _take_pending(self) -> None:
        item = self.pending.popleft()
        if isinstance(item, Summary):
            self.rows.add_summary(item)
            return
        target, records = item
        room = self.batch_rows - self.rows.count
        if len(records) > room:
            self.pending.appendleft((target, records[room:]))
            records = records[:room]
        self.rows.add_records(target, records)

    async def close(self) -> None:
        """Stop whatever still runs and close the reader."""
        tasks = [t for t in (self.feeder, *self.running) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.reader is not None:
            await self.reader.__aexit__(None, None, None)
            self.reader = None


def _count(name: str, value: object, door: str = "discover_batches") -> int:
    """A keyword of the engines' own that is a whole number >= 1 (read by the options'
    converter: a NumPy integer too); a refusal names ``door`` and the keyword."""
    try:
        number: int = _WHOLE(value)
    except ValueError as exc:
        raise OptionError(name, str(exc), door) from None
    return number


_WHOLE: Final = count(1)


def check_target_column(door: str, name: object, columns: Mapping[str, bool | None] | None) -> str:
    """The target column's name, once the input is seen to have it as text: ``columns`` maps
    each column of the input to whether it holds strings (None: not known without reading
    the data; ``columns`` None: the input's columns are not known). Refused before any job
    starts (a UsageError naming ``door`` and the column): a missing column, or one of
    numbers or other values, which would otherwise become a failed row per value or targets
    like ``"1"``. Nulls in a text column are failed rows, like any bad target."""
    if not isinstance(name, str):
        raise UsageError(f"{door}: target_col must be a column's name, not {printable(repr(name))}")
    if columns is None:
        return name
    if name not in columns:
        known = ", ".join(map(repr, columns)) or "none"
        near = difflib.get_close_matches(name, list(columns), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise UsageError(f"{door}: no column {name!r} in the input{hint}; its columns: {known}")
    if columns[name] is False:
        raise UsageError(
            f"{door}: column {name!r} does not hold text; targets are strings (a domain, "
            "a URL): cast it to strings first if that is what it holds"
        )
    return name


#: Discovery tasks per core of the engine when an engine door is not told ``partitions``:
#: a task's time is mostly waiting on sites, so two per core keep the cores busy, and a
#: handful of tasks on a laptop keeps the job's start-up and the output files few (Spark's
#: 200 shuffle partitions made 1,000 small sites 103 s on ``local[2]``, 21 s with 4).
TASKS_PER_CORE: Final = 2


def chosen_partitions(door: str, partitions: object, cores: int) -> int:
    """How many discovery tasks an engine door runs: ``partitions`` when given (a whole
    number >= 1, else a UsageError naming ``door``), else :data:`TASKS_PER_CORE` per core
    of the engine, said in the log (logger ``sitemap_reader``, INFO)."""
    if partitions is not None:
        return _count("partitions", partitions, door)
    chosen = TASKS_PER_CORE * max(1, cores)
    logger.info(
        "%s: %d discovery tasks (%d per core, %d cores; partitions= sets another number)",
        door, chosen, TASKS_PER_CORE, cores,
    )  # fmt: skip
    return chosen


def discover_batches(
    targets: Iterable[str | None],
    *,
    parallel: int = PARALLEL,
    batch_rows: int = BATCH_ROWS,
    options: Options | None = None,
    **flat: Unpack[ReaderKeywords],
) -> Generator[pa.RecordBatch, None, None]:
    """Discover every target, ``parallel`` at once, as record batches of :data:`SCHEMA`.

    Runs an event loop of its own in the calling thread (call it from synchronous code:
    an engine's task, a script). Each batch holds at most ``batch_rows`` rows: URL rows,
    and one summary row per target after its URL rows (see the module's theory of
    operation). The reader's options are an :class:`~sitemap_reader.options.Options`
    value or its flat keywords, as for :class:`~sitemap_reader.SitemapReader`; a bad one
    is a :class:`~sitemap_reader.errors.UsageError` before anything runs. Targets are
    spelled the canonical way and repeats dropped; a target that fails, or is not text
    at all (a number, a NaN of a pandas column), becomes a ``failed`` summary row, never
    an exception. Only a broken ``targets`` iterable raises.

    >>> rows = [b.to_pylist() for b in discover_batches(["a.invalid"])]  # doctest: +SKIP
    >>> rows[0][0]["status"]                                              # doctest: +SKIP
    'failed'
    """
    parallel = _count("parallel", parallel)
    batch_rows = _count("batch_rows", batch_rows)
    resolved = options_of("discover_batches", options, flat, _OWN)
    if resolved.incremental.state is not None:
        raise UsageError(
            "discover_batches: state (an incremental SQLite file) is per machine; "
            "the engines run without it"
        )
    return _batches(BatchRun(targets, resolved, parallel, batch_rows))


def _batches(run: BatchRun) -> Generator[pa.RecordBatch, None, None]:
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(run.start())
        while (batch := loop.run_until_complete(run.next_batch())) is not None:
            yield batch
    finally:
        try:
            loop.run_until_complete(run.close())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())  # the DNS threads
        finally:
            loop.close()


# --------------------------------------------------------------------------- engine doors

#: The keywords an engine adapter passes to :func:`discover_batches` beside the options.
_OWN: Final = ("parallel", "batch_rows", "options")


def engine_arguments(door: str, flat: dict[str, Any]) -> dict[str, Any]:
    """An engine door's ``**options`` checked on the driver, before any task starts: the
    keywords of :func:`discover_batches`, with the reader's options resolved into one
    picklable :class:`~sitemap_reader.options.Options` (a bad or unknown one is a
    UsageError naming ``door``)."""
    own: dict[str, Any] = {name: flat[name] for name in _OWN if name in flat}
    rest = {name: value for name, value in flat.items() if name not in _OWN}
    options = options_of(door, own.pop("options", None), rest, _OWN)
    if options.incremental.state is not None:
        raise UsageError(f"{door}: state (an incremental SQLite file) is per machine")
    for name in ("parallel", "batch_rows"):
        if name in own:
            own[name] = _count(name, own[name], door)
    return {**own, "options": options}


# --------------------------------------------------------------------------- giant runs

#: Targets per chunk of :func:`run_in_chunks`: a chunk is one engine job, long enough to
#: amortize the job's start (seconds), short enough that a crash costs little (100,000
#: targets at a few seconds each over a cluster's tasks is minutes to an hour).
CHUNK_TARGETS: Final = 100_000


@dataclass(slots=True)
class ChunkReport:
    """What :func:`run_in_chunks` did: the chunks it ran and those it found done."""

    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _digest(chunk: Sequence[str]) -> str:
    hashed = hashlib.blake2b(digest_size=16)
    for target in chunk:
        hashed.update(target.encode("utf-8", "surrogatepass") + b"\n")
    return hashed.hexdigest()


def run_in_chunks(
    targets: Iterable[str],
    run: Callable[[str, list[str]], None],
    *,
    markers: str | os.PathLike[str],
    chunk_targets: int = CHUNK_TARGETS,
) -> ChunkReport:
    """Run a giant list of targets as chunks, each one to its end at most once per
    success: ``run(name, targets)`` is called for each chunk of ``chunk_targets`` targets
    (in the list's order; ``name`` is ``chunk-000000``, ``chunk-000001``, ...) that has no
    done marker yet, and when it returns, ``markers/NAME.done`` is written (atomically,
    by the driver). Run it again after a crash: finished chunks are skipped, the rest run.
    A marker whose chunk no longer holds the same targets (the list changed) is a
    UsageError rather than a silent skip.

    ``run`` starts one engine job and writes its output where the name says, replacing
    what an unfinished earlier try left (Spark: ``.write.mode("overwrite")``; Ray: a
    fresh folder per try). Give the list deduplicated by :func:`canonical_target` (each
    job drops repeats only within itself).

    >>> def run(name, chunk):                                          # doctest: +SKIP
    ...     df = spark.createDataFrame([(t,) for t in chunk], "target string")
    ...     discover(df).write.mode("overwrite").parquet(f"s3a://b/out/{name}")
    >>> run_in_chunks(open("domains.txt").read().split(), run, markers="done/")  # doctest: +SKIP
    """
    size = _count("chunk_targets", chunk_targets, _DOOR)
    folder = os.fspath(markers)
    os.makedirs(folder, exist_ok=True)
    report = ChunkReport()
    it = iter(targets)
    for index in itertools.count():
        chunk = list(itertools.islice(it, size))
        if not chunk:
            return report
        name = f"chunk-{index:06d}"
        marker = os.path.join(folder, name + ".done")
        digest = _digest(chunk)
        if os.path.exists(marker):
            if _marked_digest(marker) != digest:
                raise OptionError(
                    "markers", f"{marker} is of another list: its chunk {name} changed", _DOOR
                )
            report.skipped.append(name)
            continue
        run(name, chunk)
        _write_marker(marker, {"digest": digest, "targets": len(chunk), "done": time.time()})
        report.ran.append(name)
    raise AssertionError("unreachable")  # pragma: no cover


def _marked_digest(path: str) -> str:
    """The digest a done marker holds; a marker that cannot be read as ours is a
    UsageError naming it (delete it to run its chunk again)."""
    try:
        with open(path, "rb") as done:
            content = json.loads(done.read(_MARKER_BYTES))
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise OptionError("markers", f"{path} is damaged ({reason}): delete it", _DOOR) from None
    if not isinstance(content, dict) or not isinstance(content.get("digest"), str):
        raise OptionError("markers", f"{path} is damaged (no digest): delete it", _DOOR)
    digest: str = content["digest"]
    return digest


#: The door :func:`run_in_chunks` names in its errors, and the most a marker holds.
_DOOR: Final = "run_in_chunks"
_MARKER_BYTES: Final = 4096


def _write_marker(path: str, content: dict[str, Any]) -> None:
    tmp = f"{path}.{secrets.token_hex(8)}.tmp"  # new: a link in its place is refused
    with open(create_new(tmp), "w", encoding="utf-8") as out:
        json.dump(content, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
