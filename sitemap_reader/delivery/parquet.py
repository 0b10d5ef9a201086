"""``dump --format parquet``: records into a Parquet file, one row group per batch.

pyarrow is optional (the ``parquet`` extra); without it the command stops at once with a
message naming the extra. The schema is fixed, so every row group matches: a column per
record field, in its order, typed by what it holds (:func:`parquet_schema`): ``lastmod`` a
UTC timestamp, ``changefreq`` a dictionary column (a categorical in pandas), numbers as
float64, and the nested fields as JSON text (their shapes vary from record to record, as
in the CSV output).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any, Final

from sitemap_reader.delivery.frame import require_pyarrow
from sitemap_reader.delivery.writers import RecordWriter, make_writer
from sitemap_reader.errors import MissingExtraError, UsageError
from sitemap_reader.records import RECORD_FIELDS, UrlRecord
from sitemap_reader.records.fields import Kind, RecordField, names

#: Records per row group: large enough for good compression, small enough to stay flat.
ROW_GROUP: Final = 10_000
_JSON_FIELDS: Final = names(RECORD_FIELDS, Kind.NESTED)


def record_writer(fmt: str, stream: IO[str], *, csv_raw: bool = False) -> RecordWriter:
    """The writer for ``--format``: parquet here, the text formats from ``output``."""
    if fmt == "parquet":
        return ParquetWriter(stream)
    return make_writer(fmt, stream, csv_raw=csv_raw)


def check_parquet(fmt: str, output: str | None) -> None:
    """UsageError when ``--format parquet`` cannot work (no pyarrow, no ``-o FILE``)."""
    if fmt != "parquet":
        return
    try:
        require_pyarrow()
    except MissingExtraError as exc:
        raise UsageError(str(exc)) from None
    if output is None:
        raise UsageError("parquet is written to a file: name one (-o FILE)")


def parquet_schema(pa: Any, fields: Sequence[RecordField]) -> Any:
    """The Parquet schema of records described by ``fields``: a column per field, in
    their order, typed by what it holds."""
    text = pa.string()
    types = {
        Kind.TEXT: text,
        Kind.SITE_TEXT: text,
        Kind.TIMESTAMP: pa.timestamp("ns", tz="UTC"),
        Kind.ENUM: pa.dictionary(pa.int8(), text),
        Kind.FLOAT: pa.float64(),
        Kind.FLAG: pa.bool_(),
        Kind.NESTED: text,  # JSON
    }
    return pa.schema([(f.name, types[f.kind]) for f in fields])


class ParquetWriter:
    """Buffers :data:`ROW_GROUP` records, then writes them as one row group."""

    def __init__(self, stream: IO[str]) -> None:
        pa = require_pyarrow()
        import pyarrow.parquet as pq

        self._pa = pa
        self.schema = parquet_schema(pa, RECORD_FIELDS)
        binary: Any = getattr(stream, "buffer", stream)
        self._file = binary
        self._writer = pq.ParquetWriter(binary, self.schema, compression="zstd")
        self._rows: list[UrlRecord] = []

    def write(self, record: UrlRecord) -> None:
        """Add one record (written with its row group)."""
        self.write_batch([record])

    def write_batch(self, batch: Sequence[UrlRecord]) -> None:
        """Add records; each full row group is written."""
        self._rows.extend(batch)
        while len(self._rows) >= ROW_GROUP:
            self._flush(ROW_GROUP)

    def _flush(self, count: int | None = None) -> None:
        if not self._rows:
            return
        if count is None:
            rows, self._rows = self._rows, []
        else:
            rows, self._rows = self._rows[:count], self._rows[count:]
        columns: dict[str, list[Any]] = {
            name: [getattr(r, name) for r in rows]
            for name in self.schema.names
            if name not in _JSON_FIELDS
        }
        for name in _JSON_FIELDS:
            # Nearly every record has none: to_dict only for those that do.
            values = [getattr(r, name) for r in rows]
            pairs = zip(rows, values, strict=True)
            columns[name] = [_json(r, name) if v else None for r, v in pairs]
        table = self._pa.Table.from_pydict(columns, schema=self.schema)
        self._writer.write_table(table)

    def close(self) -> None:
        """Write the last row group and the file footer."""
        self._flush()
        self._writer.close()
        self._file.flush()


def _json(record: UrlRecord, name: str) -> str | None:
    value = record.to_dict().get(name)
    return None if value is None else json.dumps(value, ensure_ascii=False)
