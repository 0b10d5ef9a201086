"""The reader-to-emitter contract (parse.entry): slot names and shapes."""

from __future__ import annotations

from sitemap_reader.parse import entry
from sitemap_reader.parse.kinds import F_CHANGEFREQ, F_LASTMOD, F_LOC, F_PRIORITY, F_TITLE


def test_slots_are_the_positions_drain_unpacks() -> None:
    """The named slots are 0..ENTRY_SIZE-1 in the order the emitter unpacks them."""
    names = [
        "LOC",
        "LASTMOD",
        "CHANGEFREQ",
        "PRIORITY",
        "LINK",
        "GUID",
        "PUBLISHED",
        "TITLE",
        "ALTERNATES",
        "IMAGES",
        "VIDEOS",
        "NEWS",
        "EXTRA",
    ]
    assert [getattr(entry, name) for name in names] == list(range(entry.ENTRY_SIZE))


def test_field_kinds_map_to_their_slots() -> None:
    """A core field's kind minus F_LOC is the slot it fills."""
    assert F_LOC - F_LOC == entry.LOC
    assert F_LASTMOD - F_LOC == entry.LASTMOD
    assert F_CHANGEFREQ - F_LOC == entry.CHANGEFREQ
    assert F_PRIORITY - F_LOC == entry.PRIORITY
    assert F_TITLE - F_LOC == entry.TITLE


def test_loc_entry_holds_only_the_location() -> None:
    """A text line's entry has its location and every other slot absent."""
    made = entry.loc_entry("https://a.example/")
    assert made[entry.LOC] == "https://a.example/"
    assert made[1:] == [None] * (entry.ENTRY_SIZE - 1)
    assert entry.new_entry() == [None] * entry.ENTRY_SIZE
