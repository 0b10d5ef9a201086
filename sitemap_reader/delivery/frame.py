"""pandas DataFrames of URL records and of sitemap trees (the ``pandas`` extra).

:func:`to_dataframe` turns records into typed columns, one per record field, typed by
what it holds (:mod:`sitemap_reader.records.fields`): ``lastmod`` as
``datetime64[ns, UTC]``, ``changefreq`` as a categorical of the protocol's values (in
their order, most frequent first), ``priority`` and ``score`` as floats (NaN when absent),
the nested fields as lists of dicts. :func:`tree_dataframe` gives one row per robots.txt,
sitemap or probe of a run. pandas is imported only when they are called; without it the
error names the extra to install. :func:`write_parquet` does the same with pyarrow.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from sitemap_reader.errors import missing_extra
from sitemap_reader.records import CHANGEFREQS, RECORD_FIELDS, UrlRecord
from sitemap_reader.records.fields import Kind, RecordField, names

if TYPE_CHECKING:
    from sitemap_reader.discovery.model import Run, SitemapNode

#: The protocol's changefreq values, most frequent first (the categorical's order).
CHANGEFREQ_ORDER: Final = CHANGEFREQS
#: The columns of :func:`to_dataframe`: every field of :class:`UrlRecord`, in its order
#: (derived: a new field is a new column, as in CSV and Parquet).
COLUMNS: Final = names(RECORD_FIELDS)


def _pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise missing_extra("DataFrames need pandas", "pandas") from None
    return pandas


def to_dataframe(records: Iterable[UrlRecord]) -> Any:
    """A ``pandas.DataFrame`` of the records, one row each, typed columns.

    >>> import sitemap_reader as sr
    >>> frame = sr.to_dataframe(sr.parse(b"https://example.com/a\\n").urls)
    >>> str(frame["lastmod"].dtype), str(frame["changefreq"].dtype)
    ('datetime64[ns, UTC]', 'category')
    """
    pd = _pandas()
    rows = list(records)
    return pd.DataFrame(
        {f.name: _series(pd, f, [_cell(getattr(r, f.name)) for r in rows]) for f in RECORD_FIELDS}
    )


def _cell(value: Any) -> Any:
    """A field's value in the frame: extension values as dicts (a list of them)."""
    if isinstance(value, tuple):
        return [item.to_dict() for item in value]
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if to_dict is not None else value


#: The pandas dtype of the columns of each kind (timestamps and enums are made apart).
_DTYPES: Final = {
    Kind.TEXT: "string",
    Kind.SITE_TEXT: "string",
    Kind.TIMESTAMP: "datetime64[ns, UTC]",
    Kind.ENUM: "category",
    Kind.FLOAT: "float64",
    Kind.FLAG: "bool",
    Kind.NESTED: "object",  # a list of dicts (or one dict) per row
}


def _series(pd: Any, field: RecordField, values: list[Any]) -> Any:
    """One typed column: dates in UTC, an enum a categorical of its words in their order,
    numbers, flags, text, dicts."""
    if field.kind is Kind.TIMESTAMP:
        series = pd.to_datetime(pd.Series(values, dtype="object"), utc=True)
        return series.astype(_DTYPES[Kind.TIMESTAMP])
    if field.kind is Kind.ENUM:
        return pd.Categorical(values, categories=field.choices)
    return pd.Series(values, dtype=_DTYPES[field.kind])


def tree_dataframe(tree: Run | Iterable[SitemapNode], extra: Any = None) -> Any:
    """One row per node of a run's tree (or of the given root nodes), depth first.

    Columns: ``url``, ``final_url``, ``kind``, ``depth``, ``parent``, ``format``,
    ``status``, ``bytes`` (as received), ``urls``, ``ok``, ``skipped``, ``problems``
    (count), ``lastmod`` (from the index, ``datetime64[ns, UTC]``), ``last_modified``
    (the HTTP header as sent), ``seconds`` (download time, None where not measured).
    ``extra`` maps a node's URL to more columns (``sitemap-reader report`` adds
    ``uncompressed`` from its second read).
    """
    pd = _pandas()
    roots = tree.tree if hasattr(tree, "tree") else list(tree)
    rows: list[dict[str, Any]] = []

    def walk(node: SitemapNode, up: str | None) -> None:
        row = {
            "url": node.url,
            "final_url": node.final_url,
            "kind": node.kind,
            "depth": node.depth,
            "parent": up,
            "format": node.format,
            "status": node.status,
            "bytes": node.bytes,
            "urls": node.urls,
            "ok": node.ok,
            "skipped": node.skipped,
            "problems": sum(p.count for p in node.problems),
            "lastmod": node.lastmod,
            "last_modified": node.last_modified,
            "seconds": node.seconds,
        }
        if extra is not None:
            row.update(extra.get(node.final_url or node.url, {}))
        rows.append(row)
        for child in node.children:
            walk(child, node.final_url or node.url)

    for root in roots:
        walk(root, None)
    frame = pd.DataFrame(rows)
    if rows:
        frame["status"] = frame["status"].astype("Int64")
        frame["lastmod"] = pd.to_datetime(frame["lastmod"], utc=True).astype("datetime64[ns, UTC]")
    return frame


def write_parquet(frame: Any, path: str) -> None:
    """Write a frame as Parquet (needs pyarrow: the ``parquet`` extra)."""
    require_pyarrow()
    frame.to_parquet(path, index=False)


def require_pyarrow() -> Any:
    """The pyarrow module, or a MissingExtraError naming the ``parquet`` extra."""
    try:
        import pyarrow
    except ImportError:
        raise missing_extra("Parquet needs pyarrow", "parquet") from None
    return pyarrow
