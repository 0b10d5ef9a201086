"""What each field of a URL record holds: the one description every record format reads.

Each field of :class:`~sitemap_reader.records.UrlRecord` is declared with its
:class:`Kind` beside its default (``field(default=None, metadata=holds(Kind.TIMESTAMP))``),
and :func:`describe` reads them off the record type, in its order
(:data:`~sitemap_reader.records.RECORD_FIELDS`). Every schema of records is derived from
that description, each format mapping a kind to a type of its own: the CSV columns and
which cells hold JSON or site text (:mod:`sitemap_reader.delivery.writers`), the
DataFrame's columns and dtypes (:mod:`sitemap_reader.delivery.frame`), the Parquet
schema (:mod:`sitemap_reader.delivery.parquet`), the engines' Arrow schema
(:mod:`sitemap_reader.engines.batch`) and what the loader's progress file keeps of a
record (:mod:`sitemap_reader.store.progress`). So a field added to the record is a column
of every format at once, a field declared without its kind stops the import, and so does
a kind a format has no type for.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

#: The metadata key of a field's kind (and of an enum's words).
_KIND: Final = "kind"
_CHOICES: Final = "choices"


class Kind(enum.Enum):
    """What a record field holds, as the formats see it."""

    #: Our own words (``"allowed"``, ``"html"``): written as they are.
    TEXT = "text"
    #: Text the site chose (a URL, a title): a CSV cell a spreadsheet might read as a formula.
    SITE_TEXT = "site text"
    #: An aware UTC datetime, or None.
    TIMESTAMP = "timestamp"
    #: One word of a fixed set (the field's ``choices``, in their order), or None.
    ENUM = "enum"
    #: A float, or None.
    FLOAT = "float"
    #: True or False.
    FLAG = "flag"
    #: Extension values (a tuple of them, or one): JSON text in the flat formats.
    NESTED = "nested"


@dataclass(frozen=True, slots=True)
class RecordField:
    """One field of a record type: its name, its kind and, for an enum, its words."""

    name: str
    kind: Kind
    choices: tuple[str, ...] = ()


def holds(kind: Kind, choices: tuple[str, ...] = ()) -> dict[str, Any]:
    """The metadata of a record field holding ``kind`` (an enum: one of ``choices``)."""
    return {_KIND: kind, _CHOICES: choices}


def describe(record_type: type) -> tuple[RecordField, ...]:
    """The fields of a record dataclass with their kinds, in its order; a TypeError names
    a field declared without one.

    >>> from sitemap_reader.records import UrlRecord
    >>> describe(UrlRecord)[1]
    RecordField(name='lastmod', kind=<Kind.TIMESTAMP: 'timestamp'>, choices=())
    """
    described: list[RecordField] = []
    for item in dataclasses.fields(record_type):
        kind = item.metadata.get(_KIND)
        if not isinstance(kind, Kind):
            raise TypeError(
                f"{record_type.__name__}.{item.name} is declared without what it holds: "
                "field(..., metadata=holds(Kind....))"
            )
        described.append(RecordField(item.name, kind, item.metadata[_CHOICES]))
    return tuple(described)


def names(fields: Iterable[RecordField], *kinds: Kind) -> tuple[str, ...]:
    """The names of the ``fields`` of those ``kinds`` (all of them without ``kinds``), in
    their order.

    >>> from sitemap_reader.records import RECORD_FIELDS
    >>> names(RECORD_FIELDS, Kind.FLAG)
    ('removed', 'mobile')
    """
    return tuple(f.name for f in fields if not kinds or f.kind in kinds)
