"""``dump --format parquet``: records into a Parquet file, one row group per batch.

pyarrow is optional (the ``parquet`` extra); without it the command stops at once with a
message naming the extra. The schema is fixed, so every row group matches: ``lastmod`` a
UTC timestamp, ``changefreq`` a dictionary column (a categorical in pandas), numbers as
float64, and the extension fields as JSON text (their shapes vary from record to record,
as in the CSV output).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any, Final

from sitemap_reader.delivery.frame import COLUMNS, MissingExtraError, require_pyarrow
from sitemap_reader.delivery.writers import RecordWriter, make_writer
from sitemap_reader.errors import UsageError
from sitemap_reader.records import UrlRecord

#: Records per row group: large enough for good compression, small enough to stay flat.
ROW_GROUP: Final = 10_000
_JSON_FIELDS: Final = ("alternates", "images", "videos", "news", "pagemaps")


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
        raise UsageError("--format parquet writes a file: add -o FILE")


class ParquetWriter:
    """Buffers :data:`ROW_GROUP` records, then writes them as one row group."""

    def __init__(self, stream: IO[str]) -> None:
        pa = require_pyarrow()
        import pyarrow.parquet as pq

        self._pa = pa
        text = pa.string()
        types = {
            "lastmod": pa.timestamp("ns", tz="UTC"),
            "changefreq": pa.dictionary(pa.int8(), text),
            **dict.fromkeys(("priority", "score", "revisit"), pa.float64()),
            **dict.fromkeys(("removed", "mobile"), pa.bool_()),
        }
        # Every record field is a column, in the record's order (JSON text for extensions).
        self.schema = pa.schema([(name, types.get(name, text)) for name in COLUMNS])
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
            name: [getattr(r, name) for r in rows] for name in COLUMNS if name not in _JSON_FIELDS
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
