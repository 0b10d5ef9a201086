"""Flat keywords sorted onto the option groups: what every Python door does with ``**flat``.

A door (``SitemapReader``, ``iter_urls``, the loader, the engines) takes an option by its
field name; :func:`split` finds each one's group, :func:`make_group` builds the group, and an
unknown name is a :class:`~sitemap_reader.errors.UsageError` naming the door, with the
nearest name suggested.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Mapping
from typing import TypeVar

from sitemap_reader._safe_text import masked
from sitemap_reader.errors import UsageError
from sitemap_reader.options.declare import OptionError

G = TypeVar("G")


def names(groups: Mapping[str, type]) -> dict[str, str]:
    """Every flat keyword of ``groups``: a field's name -> its group's name (a group's
    own name maps to itself)."""
    found: dict[str, str] = {}
    for group_name, group in groups.items():
        found[group_name] = group_name
        for item in dataclasses.fields(group):
            found[item.name] = group_name
    return found


def unknown(door: str, name: str, known: Iterable[str], *, what: str = "keyword") -> UsageError:
    """The error for a keyword (or a setting: ``what``) ``door`` does not take, with the
    nearest one suggested."""
    near = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return UsageError(f"{door}: unknown {what} {name!r}{hint}")


def split(
    door: str, flat: Mapping[str, object], groups: Mapping[str, type], own: Iterable[str] = ()
) -> dict[str, dict[str, object]]:
    """Flat keywords sorted by the name of their group (a whole group given by its name
    goes with its fields); an unknown one is a UsageError naming ``door`` (``own`` are the
    door's other parameters, for the suggestion)."""
    known = names(groups)
    sorted_: dict[str, dict[str, object]] = {}
    for name, value in flat.items():
        group = known.get(name)
        if group is None:
            raise unknown(door, name, [*known, *own])
        sorted_.setdefault(group, {})[name] = value
    return sorted_


def make_group(
    door: str, name: str, group: type[G], start: G | None, given: Mapping[str, object]
) -> G:
    """The group ``name`` from flat keywords over ``start`` (``given[name]`` is a whole
    value to start from); a refused value is a UsageError naming ``door``."""
    given = dict(given)
    whole = given.pop(name, None)
    if whole is not None:
        if not isinstance(whole, group):
            raise UsageError(f"{door}: {name} must be {group.__name__}, not {masked(whole)}")
        start = whole
    try:
        if start is None:
            return group(**given)
        return dataclasses.replace(start, **given) if given else start  # type: ignore[type-var]
    except OptionError as exc:
        raise exc.at(door) from None
