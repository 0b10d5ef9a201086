"""sitemap_reader.records.fields: every schema of records is read off UrlRecord.

Each format's schema names exactly the record's fields, in its order, with the type its
kind maps to; a record type with one more field gets a column of it in each; and a record
with every field set keeps every value through each format (the fast paths included),
so a field a format leaves out fails here, whichever format lags.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sitemap_reader.delivery import frame, parquet, writers
from sitemap_reader.engines import batch
from sitemap_reader.records import (
    RECORD_FIELDS,
    Alternate,
    DataObject,
    Image,
    News,
    UrlRecord,
    Video,
)
from sitemap_reader.records.fields import Kind, RecordField, describe, holds, names
from sitemap_reader.store import progress

NAMES = [item.name for item in dataclasses.fields(UrlRecord)]
#: A value of each nested field (a new nested field needs one here: the test says so).
NESTED_SAMPLES: dict[str, Any] = {
    "alternates": (Alternate("de", "https://example.com/de/a"),),
    "images": (Image("https://example.com/a.jpg", title="Ä"),),
    "videos": (Video(title="V", duration=60),),
    "news": News(title="N", publication_name="P", language="de"),
    "pagemaps": (DataObject("doc", "1", (("a", "b"),)),),
}


def sample(field: RecordField) -> Any:
    """A value of ``field`` that is not its default."""
    if field.kind is Kind.NESTED:
        assert field.name in NESTED_SAMPLES, f"add a sample of the nested field {field.name}"
        return NESTED_SAMPLES[field.name]
    return {
        Kind.TEXT: "ours",
        Kind.SITE_TEXT: f"https://example.com/{field.name}",
        Kind.TIMESTAMP: datetime(2024, 3, 5, 14, 30, tzinfo=UTC),
        Kind.ENUM: field.choices[-1] if field.choices else "x",
        Kind.FLOAT: 0.5,
        Kind.FLAG: True,
    }[field.kind]


def full(nested: bool = True) -> UrlRecord:
    """A record with every field set (the nested ones only when ``nested``)."""
    values = {f.name: sample(f) for f in RECORD_FIELDS if nested or f.kind is not Kind.NESTED}
    return UrlRecord(**values)


def wider() -> type:
    """UrlRecord's fields and two more: a float and a nested one."""
    own: list[tuple[str, Any, Any]] = [
        (item.name, item.type, dataclasses.field(default=item.default, metadata=item.metadata))
        for item in dataclasses.fields(UrlRecord)
    ]
    more: list[tuple[str, Any, Any]] = [
        ("added_float", "float", dataclasses.field(default=0.0, metadata=holds(Kind.FLOAT))),
        ("added_nested", "tuple", dataclasses.field(default=(), metadata=holds(Kind.NESTED))),
    ]
    return dataclasses.make_dataclass("Wider", own + more, frozen=True, slots=True)


# --------------------------------------------------------------------------- the description


def test_description_is_the_records_fields_in_order() -> None:
    """RECORD_FIELDS names every field of UrlRecord, in its order, each with its kind."""
    assert names(RECORD_FIELDS) == tuple(NAMES)
    assert describe(UrlRecord) == RECORD_FIELDS
    assert names(RECORD_FIELDS, Kind.NESTED) == tuple(NESTED_SAMPLES)
    assert names(RECORD_FIELDS, Kind.TIMESTAMP, Kind.ENUM) == ("lastmod", "changefreq")


def test_a_field_without_its_kind_is_refused() -> None:
    """A record field declared without what it holds stops describe(), named."""
    bare = dataclasses.make_dataclass("Bare", [("url", str), ("extra", int, 0)])
    with pytest.raises(TypeError, match=r"Bare\.url is declared without what it holds"):
        describe(bare)


# --------------------------------------------------------------------------- each schema


def test_csv_columns_are_the_records_fields() -> None:
    """CSV: a column per field in order; JSON cells are the nested fields, site text
    the nested fields and the site's text."""
    assert tuple(NAMES) == writers.CSV_COLUMNS
    assert set(NESTED_SAMPLES) == writers._JSON_COLUMNS
    assert set(NESTED_SAMPLES) | {"url", "sitemap", "title"} == writers._SITE_TEXT_COLUMNS
    header = io.StringIO()
    writers.CsvWriter(header)
    assert header.getvalue() == ",".join(NAMES) + "\n"


def test_dataframe_columns_and_dtypes_follow_the_kinds() -> None:
    """DataFrame: a column per field in order, its dtype the one of its kind."""
    assert tuple(NAMES) == frame.COLUMNS
    for records in ([], [full()]):
        table = frame.to_dataframe(records)
        assert list(table.columns) == NAMES
        for field in RECORD_FIELDS:
            assert str(table[field.name].dtype) == frame._DTYPES[field.kind], field.name
    changefreq = frame.to_dataframe([full()])["changefreq"]
    assert list(changefreq.cat.categories) == list(frame.CHANGEFREQ_ORDER)


def test_parquet_schema_follows_the_kinds(tmp_path: Path) -> None:
    """Parquet: a column per field in order, typed by its kind (the file's schema too)."""
    path = tmp_path / "records.parquet"
    with path.open("w") as stream:
        writer = parquet.ParquetWriter(stream)
        writer.close()
    schema = pq.read_schema(path)
    assert schema.names == NAMES
    assert schema == writer.schema == parquet.parquet_schema(pa, RECORD_FIELDS)
    assert schema.field("lastmod").type == pa.timestamp("ns", tz="UTC")
    assert schema.field("changefreq").type == pa.dictionary(pa.int8(), pa.string())
    assert {schema.field(n).type for n in names(RECORD_FIELDS, Kind.FLOAT)} == {pa.float64()}
    assert {schema.field(n).type for n in names(RECORD_FIELDS, Kind.FLAG)} == {pa.bool_()}
    assert {schema.field(n).type for n in names(RECORD_FIELDS, Kind.NESTED)} == {pa.string()}


def test_engines_schema_is_the_records_fields_between_the_summary_columns() -> None:
    """The engines' Arrow schema: target and kind, a column per record field in order,
    typed by its kind, then the summary row's columns."""
    summary = ["status", "urls", "error", "stats", "verdict", "evidence"]
    assert batch.SCHEMA.names == ["target", "kind", *NAMES, *summary]
    for field in RECORD_FIELDS:
        assert batch.SCHEMA.field(field.name).type == batch.ARROW_TYPES[field.kind], field.name


def test_progress_file_keeps_every_field() -> None:
    """The progress file: version 1's JSON fields, and every other field pickled."""
    pickled = [name for name, _ in progress._PICKLED]
    assert sorted([*progress._FLAT, *pickled]) == sorted(NAMES)
    assert not set(progress._FLAT) & set(names(RECORD_FIELDS, Kind.NESTED))
    assert set(names(RECORD_FIELDS, Kind.NESTED)) <= set(pickled)


def test_every_kind_has_a_type_in_every_format() -> None:
    """Each format maps every kind (a new kind fails here before it fails a user)."""
    assert set(frame._DTYPES) == set(Kind)
    assert set(batch.ARROW_TYPES) == set(Kind)
    every = [RecordField(kind.value, kind, ("a",)) for kind in Kind]
    assert parquet.parquet_schema(pa, every).names == [kind.value for kind in Kind]


# --------------------------------------------------------------------------- a new field


def test_a_new_field_is_a_column_of_every_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """A record type with one more float and one more nested field: each schema derived
    from its description has both, typed by their kinds."""
    record_type = wider()
    described = describe(record_type)
    assert names(described)[-2:] == ("added_float", "added_nested")
    assert "added_nested" in names(described, Kind.NESTED)
    schema = parquet.parquet_schema(pa, described)
    assert schema.field("added_float").type == pa.float64()
    assert schema.field("added_nested").type == pa.string()
    arrow = dict(batch.record_columns(described))
    assert arrow["added_float"] == pa.float64() and arrow["added_nested"] == pa.string()
    monkeypatch.setattr(frame, "RECORD_FIELDS", described)
    table = frame.to_dataframe([record_type(url="https://example.com/", added_float=2.0)])
    assert list(table.columns)[-2:] == ["added_float", "added_nested"]
    assert str(table["added_float"].dtype) == "float64"
    assert str(table["added_nested"].dtype) == "object"


# --------------------------------------------------------------------------- every value kept


def test_json_and_csv_carry_every_field() -> None:
    """to_dict, JSONL and CSV carry every field of a record that has them all; a plain
    one goes the fast path to the same bytes as the reference path."""
    record = full()
    assert list(record.to_dict()) != NAMES  # the JSON shape has its own key order
    assert set(record.to_dict()) == set(NAMES)
    plain = full(nested=False)
    pair = [plain, plain]
    assert writers.jsonl_text(pair) == writers.json_line(plain) * 2
    assert set(json.loads(writers.json_line(plain))) == set(NAMES) - set(NESTED_SAMPLES)
    for raw in (False, True):
        assert writers.csv_text(pair, raw=raw) == writers.csv_row(plain, raw=raw) * 2
    [cells] = csv.reader([writers.csv_row(record)])
    assert len(cells) == len(NAMES) and all(cells), dict(zip(NAMES, cells, strict=True))


def test_dataframe_parquet_and_arrow_rows_carry_every_field(tmp_path: Path) -> None:
    """A record with every field set has a value in every column of a DataFrame, a
    Parquet file and the engines' Arrow rows."""
    record = full()
    row = frame.to_dataframe([record]).iloc[0]
    assert all(not pd.isna(row[name]) for name in NAMES if name not in NESTED_SAMPLES)
    path = tmp_path / "records.parquet"
    with path.open("w") as stream:
        writer = parquet.ParquetWriter(stream)
        writer.write(record)
        writer.close()
    [stored] = pq.read_table(path).to_pylist()
    assert [name for name, value in stored.items() if value is None] == []
    rows = batch.Rows()
    rows.add_records("example.com", [record])
    [arrow] = rows.take().to_pylist()
    assert [name for name in NAMES if arrow[name] is None] == []


def test_progress_file_keeps_every_value() -> None:
    """A record with every field set comes back whole from the progress file; one with
    no value beyond version 1's fields is stored as version 1 stored it."""
    for record in (full(), full(nested=False)):
        assert progress.load_record(progress.dump_record(record)) == record
    bare = UrlRecord("https://example.com/", score=0.5, robots="allowed")
    stored = b'["https://example.com/",null,null,null,0.5,null,null,false,null,false,"allowed"]'
    assert progress.dump_record(bare) == stored
    assert progress.load_record(stored) == bare
