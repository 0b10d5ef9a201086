"""The option flags of the commands, derived from the option declarations.

Each option whose declaration shows the CLI door (:mod:`sitemap_reader.options`) is a
flag: ``--`` and its name with dashes (or the flag its declaration names), its help the
declaration's meaning and default. A boolean is a switch (one whose default is True is
turned off by its flag: ``--no-robots``); a repeatable option collects its values; the
rest take one value, read by the option's own converter, so a bad value is argparse's
usage error naming the flag. :func:`options_from` builds the :class:`Options` of a run
from the flags given; the options not given keep their declared defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from sitemap_reader.cli.usage import nearest
from sitemap_reader.errors import UsageError
from sitemap_reader.options import GROUPS, Options
from sitemap_reader.options.declare import OptionError, convert_value, spec_of
from sitemap_reader.options.doors import cli_flag, shown_default

G = TypeVar("G")

#: The argument group titles, by option group.
TITLES = {
    "walk": "what to read",
    "politeness": "politeness and robots.txt",
    "timeouts": "time",
    "parallelism": "how much at once",
    "network": "network",
    "incremental": "incremental runs",
    "delivery": "what is delivered (which records, how many, in what order)",
    "worker": "the worker's limits",
    "limits": "bounds",
}


#: The options whose flags a command's short ``--help`` only names (not ``common``).
RARE_OPTIONS: frozenset[str] = frozenset(
    item.name
    for group in GROUPS.values()
    for item in dataclasses.fields(group)
    if cli_flag(item) is not None and not spec_of(item).common
)


def add_option_flags(
    parser: argparse.ArgumentParser,
    groups: Mapping[str, type] = GROUPS,
    *,
    skip: Iterable[str] = (),
) -> None:
    """Add a flag for every CLI option of ``groups`` (but those named in ``skip``)."""
    left_out = set(skip)
    for group_name, group in groups.items():
        items = [
            item
            for item in dataclasses.fields(group)
            if cli_flag(item) is not None and item.name not in left_out
        ]
        if not items:
            continue
        section = parser.add_argument_group(TITLES.get(group_name, group_name))
        for item in items:
            _add_flag(section, item)


def _add_flag(section: Any, item: dataclasses.Field[Any]) -> None:
    spec = spec_of(item)
    flag = cli_flag(item)
    default = item.default
    settings: dict[str, Any] = {"dest": item.name, "default": argparse.SUPPRESS}
    if isinstance(default, bool) and spec.const is None:
        settings["action"] = "store_false" if default else "store_true"
        settings["help"] = f"turn off: {spec.help}" if default else spec.help
    else:
        settings["help"] = f"{spec.help} (default: {shown_default(item)})"
        settings["metavar"] = spec.metavar or (
            "{" + ",".join(spec.choices) + "}" if spec.choices else "VALUE"
        )
        if spec.repeat:
            settings["action"] = "append"
            settings["help"] = f"{spec.help} (repeatable)"
        settings["type"] = _argparse_type(item)
        if spec.const is not None:
            settings["nargs"] = "?"
            settings["const"] = spec.const
    section.add_argument(flag, **settings)


def _argparse_type(item: dataclasses.Field[Any]) -> Callable[[str], Any]:
    """An argparse ``type``: the option's converter (of one value, for a repeatable
    option, whose converter takes a list), its refusal argparse's error."""
    spec = spec_of(item)

    def parse(text: str) -> Any:
        if spec.choices is not None and text.strip().lower() not in spec.choices:
            choices = ", ".join(spec.choices)
            hint = nearest(text.strip().lower(), spec.choices)
            refusal = f"expected one of {choices}, got {text!r}" + (f" ({hint})" if hint else "")
            raise argparse.ArgumentTypeError(refusal)
        try:
            if spec.repeat:
                return convert_value(item, [text])[0]  # type: ignore[index]
            return convert_value(item, text)
        except OptionError as exc:
            raise argparse.ArgumentTypeError(exc.reason) from None

    return parse


def options_from(
    args: argparse.Namespace,
    more: Mapping[str, object] | None = None,
    groups: Mapping[str, type] = GROUPS,
) -> Options:
    """The :class:`Options` the flags of ``args`` ask for (``more`` on top, by flat name).

    A value refused only in combination (``--changed-only`` without ``--state``) is a
    UsageError naming the flag."""
    given = vars(args)
    flat: dict[str, object] = {}
    for group in groups.values():
        for item in dataclasses.fields(group):
            if item.name in given and cli_flag(item) is not None:
                flat[item.name] = given[item.name]
    flat.update(more or {})
    try:
        return Options.of(None, door="sitemap-reader", **flat)
    except OptionError as exc:
        raise UsageError(_flagged(exc, groups)) from None


def group_from(args: argparse.Namespace, group: type[G]) -> G:
    """One option group of a door of its own (the worker's knobs) from the flags given;
    the rest keep their defaults. A refused value is a UsageError naming the flag."""
    given = vars(args)
    values = {
        item.name: given[item.name]
        for item in dataclasses.fields(group)  # type: ignore[arg-type]
        if item.name in given and cli_flag(item) is not None
    }
    try:
        return group(**values)
    except OptionError as exc:
        raise UsageError(_flagged(exc, {"worker": group})) from None


def _flagged(exc: OptionError, groups: Mapping[str, type]) -> str:
    """An option error as the CLI user sees it: the flag, not the Python name."""
    for group in groups.values():
        for item in dataclasses.fields(group):
            if item.name == exc.name and (flag := cli_flag(item)) is not None:
                return f"{flag}: {exc.reason}"
    return str(exc)
