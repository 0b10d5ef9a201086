"""Every option is declared once, and every door derives it: Python keywords, CLI flags,
Scrapy settings, the option table of the docs and the typed keywords; one meaning at every door.

The guard: for each declared option, a sample value (not its default) given at each door
that shows it reaches the same :class:`Options` field; a door that lacks an option, or
reads it otherwise, fails here.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import typing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import sitemap_reader as sr
from sitemap_reader.cli.args import build_parser
from sitemap_reader.cli.flags import options_from
from sitemap_reader.engines.batch import discover_batches
from sitemap_reader.errors import MissingExtraError, UsageError
from sitemap_reader.options import GROUPS, GROUPS_AND_LOADER, Options, _keywords
from sitemap_reader.options.declare import spec_of
from sitemap_reader.options.derive import (
    OPTIONS_PAGE,
    TABLE_BEGIN,
    TABLE_END,
    keywords_module,
    markdown,
)
from sitemap_reader.options.doors import cli_flag, scrapy_setting
from tests.conftest import browser_extra

ROOT = Path(__file__).resolve().parents[2]
BEGIN, END = TABLE_BEGIN, TABLE_END

#: Values whose text form differs from the value (the rest are derived from the default).
SAMPLES: dict[str, tuple[object, str]] = {
    "scope": ("host", "host"),
    "follow": ((re.compile("/blog/"),), "/blog/"),
    "headers": ((("X-A", "1"),), "X-A: 1"),
    "guess_paths": (("/a.xml", "/b.xml"), "/a.xml,/b.xml"),
    "since": (datetime(2026, 1, 1, tzinfo=UTC), "2026-01-01"),
    "html": ("always", "always"),
    "user_agent": ("mybot/1.0", "mybot/1.0"),
    "robots_agent": ("mybot", "mybot"),
    "header_hosts": ("any", "any"),
    "proxy": ("http://proxy.example:3128", "http://proxy.example:3128"),
    "host_budget": ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
    "per_target": (
        (("a.example", (("proxy", "http://p.example:3128"),)),),
        '{"a.example": {"proxy": "http://p.example:3128"}}',
    ),
    "allow_private": ("never", "never"),
    "client": ("auto", "auto"),
    "state": ("state.db", "state.db"),
    "state_commit": ("run", "run"),
    "progress": ("progress.db", "progress.db"),
    "deadline": (60.0, "60"),
    "read_depth": (2, "2"),
    "max_urls": (10, "10"),
    "max_urls_per_sitemap": (10, "10"),
    "max_wire_bytes": (10, "10"),
    "processes": (2, "2"),
    "include": ((re.compile("/blog/"),), "/blog/"),
    "exclude": ((re.compile("/tag/"),), "/tag/"),
    "top": (5, "5"),
    "sample": (5, "5"),
    "seed": (7, "7"),
}


def sample(item: dataclasses.Field[Any]) -> tuple[object, str]:
    """A valid value other than the default, and how a user types it."""
    if item.name in SAMPLES:
        return SAMPLES[item.name]
    default = item.default
    if isinstance(default, bool):
        return not default, str(not default)
    if isinstance(default, int):
        return default + 1, str(default + 1)
    if isinstance(default, float):
        return default + 1.5, str(default + 1.5)
    raise AssertionError(f"no sample value for {item.name}: add one to SAMPLES")


def every_option() -> list[tuple[str, dataclasses.Field[Any]]]:
    return [(g, item) for g, group in GROUPS.items() for item in dataclasses.fields(group)]


def value_of(options: Options, group: str, name: str) -> object:
    return getattr(getattr(options, group), name)


def test_names_are_unique_across_the_groups() -> None:
    """A flat keyword names one option: no field name twice, no field named like a group."""
    names = [f.name for g in GROUPS_AND_LOADER.values() for f in dataclasses.fields(g)]
    assert len(names) == len(set(names))
    assert not set(names) & set(GROUPS_AND_LOADER)


@pytest.mark.parametrize(("group", "item"), every_option(), ids=lambda v: getattr(v, "name", v))
def test_the_python_keyword(group: str, item: dataclasses.Field[Any]) -> None:
    """Each option is a keyword of the reader (and of its Options), with its meaning."""
    value, _ = sample(item) if item.name != "score" else (len, "")
    if item.name in ("changed_only", "removed", "trust_index_lastmod"):
        options = Options.of(None, **{item.name: value, "state": "s.db"})  # type: ignore[arg-type]
    elif item.name == "seed":
        options = Options.of(None, seed=value, sample=5)
    else:
        options = Options.of(None, **{item.name: value})  # type: ignore[arg-type]
    assert value_of(options, group, item.name) == value
    assert value_of(Options(), group, item.name) == item.default
    if item.name == "client" and not browser_extra():  # the option names the extra instead
        with pytest.raises(MissingExtraError, match=r"\[browser\]"):
            sr.SitemapReader(options)
        return
    reader = sr.SitemapReader(options)
    assert reader.options == options


@pytest.mark.parametrize(("group", "item"), every_option(), ids=lambda v: getattr(v, "name", v))
def test_the_cli_flag(group: str, item: dataclasses.Field[Any]) -> None:
    """Each option shown on the CLI is a flag of dump (the incremental ones included) and
    of tree; its typed text reaches the same field. A flag-less option says why."""
    spec = spec_of(item)
    flag = cli_flag(item)
    if flag is None:
        assert isinstance(spec.cli, str) and spec.cli, f"{item.name}: no CLI flag, no reason"
        return
    value, text = sample(item)
    switch = isinstance(item.default, bool) and spec.const is None
    argv = ["dump", "x.example", flag] if switch else None
    argv = argv or ["dump", "x.example", flag, text]
    if item.name in ("changed_only", "removed"):
        argv += ["--state", "s.db"]
    if item.name == "trust_index_lastmod":
        argv += ["--since", "2026-01-01"]
    if item.name == "seed":
        argv += ["--sample", "5"]
    parser = build_parser(lambda a: 0, lambda a: 0, lambda a: 0)
    args = parser.parse_args(argv)
    assert value_of(options_from(args), group, item.name) == value


@pytest.mark.parametrize(("group", "item"), every_option(), ids=lambda v: getattr(v, "name", v))
def test_the_scrapy_setting(group: str, item: dataclasses.Field[Any]) -> None:
    """Each option is a SITEMAP_READER_* setting (or Scrapy's own), read with the same
    converter from a typed value and from its text; a non-setting says why."""
    pytest.importorskip("scrapy")
    from scrapy.settings import Settings

    from sitemap_reader.scrapy.settings import options_from_settings

    name = scrapy_setting(item)
    if name is None:
        assert isinstance(spec_of(item).scrapy, str) and spec_of(item).scrapy
        return
    value, text = sample(item)
    for given in (value, text):
        raw = [given] if spec_of(item).repeat and isinstance(given, str) else given
        more = {"SITEMAP_READER_SINCE": "2026-01-01"} if item.name == "trust_index_lastmod" else {}
        options, _ = options_from_settings(Settings({name: raw, **more}))
        assert value_of(options, group, item.name) == value, given


def test_the_option_table_is_rendered_from_the_declarations() -> None:
    """The option table of docs/reference/options.md is ``python -m sitemap_reader.options
    --markdown`` (out of step: ``python -m sitemap_reader.options --write``)."""
    text = (ROOT / OPTIONS_PAGE).read_text()
    assert BEGIN in text and END in text
    assert text.split(BEGIN, 1)[1].split(END, 1)[0] == markdown()


def test_the_typed_keywords_are_generated_from_the_declarations() -> None:
    """sitemap_reader/options/_keywords.py is what keywords_module() writes (out of step:
    ``python -m sitemap_reader.options --write``), and the doors use it."""
    assert (ROOT / "sitemap_reader" / "options" / "_keywords.py").read_text() == keywords_module()
    names = set(_keywords.ReaderKeywords.__annotations__)
    assert names == {*GROUPS, *(f.name for g in GROUPS.values() for f in dataclasses.fields(g))}
    for door, typed in (
        (sr.SitemapReader.__init__, _keywords.ReaderKeywords),
        (sr.iter_urls, _keywords.ReaderKeywords),
        (sr.SitemapLoader.__init__, _keywords.LoaderKeywords),
    ):
        hints = typing.get_type_hints(door, include_extras=True)
        assert typing.get_args(hints["flat"]) == (typed,)


@pytest.mark.parametrize(
    ("door", "call", "message"),
    [
        (
            "SitemapLoader",
            lambda: sr.SitemapLoader("example.com", progres="p.db"),  # type: ignore[call-arg]
            "SitemapLoader: unknown keyword 'progres' (did you mean 'progress'?)",
        ),
        (
            "SitemapReader",
            lambda: sr.SitemapReader(dedline=30),  # type: ignore[call-arg]
            "SitemapReader: unknown keyword 'dedline' (did you mean 'deadline'?)",
        ),
        (
            "discover_batches",
            lambda: discover_batches(["a.example"], paralel=4),  # type: ignore[call-arg]
            "discover_batches: unknown keyword 'paralel' (did you mean 'parallel'?)",
        ),
        (
            "SitemapReader",
            lambda: sr.SitemapReader(sesion=None),  # type: ignore[call-arg]
            "SitemapReader: unknown keyword 'sesion' (did you mean 'session'?)",
        ),
        (
            "iter_urls",
            lambda: list(sr.iter_urls("a.example", optoins=None)),  # type: ignore[call-arg]
            "iter_urls: unknown keyword 'optoins' (did you mean 'options'?)",
        ),
        (
            "SitemapReader",
            lambda: sr.SitemapReader(deadline="sixty"),  # type: ignore[arg-type]
            "SitemapReader: deadline: expected seconds, a number > 0, got 'sixty'",
        ),
        (
            "SitemapLoader",
            lambda: sr.SitemapLoader("example.com", since="2026-13-01"),
            "SitemapLoader: since: expected an ISO date or datetime",
        ),
    ],
)
def test_errors_name_the_door_and_the_option(door: str, call: Any, message: str) -> None:
    """A misspelt keyword names the class called and the nearest option; a bad value names
    the door and the option (never a TypeError or AttributeError from inside)."""
    with pytest.raises(UsageError) as caught:
        call()
    assert str(caught.value).startswith(message)


def test_the_crawlee_loader_names_itself() -> None:
    """SitemapRequestLoader's misspelt keyword names it, not the loader underneath."""
    pytest.importorskip("crawlee")
    from sitemap_reader.crawlee import SitemapRequestLoader

    with pytest.raises(UsageError, match=r"^SitemapRequestLoader: unknown keyword 'buffr'"):
        SitemapRequestLoader("example.com", buffr=10)  # type: ignore[call-arg]


def test_strings_users_pass_are_converted() -> None:
    """ISO dates and numeric strings mean what they say; nothing is left a string."""
    options = Options.of(since="2026-01-01", deadline="60", timeout="30", concurrency="8")
    assert options.walk.since == datetime(2026, 1, 1, tzinfo=UTC)
    assert (options.timeouts.deadline, options.timeouts.timeout) == (60.0, 30.0)
    assert options.parallelism.concurrency == 8


def test_values_that_read_as_the_default_are_the_default() -> None:
    """allow_private=False and None are the default; html=False is off."""
    assert Options.of(allow_private=False) == Options.of(allow_private=None) == Options()
    assert Options.of(html=False) == Options()


def test_options_are_frozen_and_picklable() -> None:
    """An Options value can be logged, pickled and handed to another process."""
    import pickle

    options = Options.of(follow=[r"/blog/"], since="2026-01-01", headers={"X-A": "1"})
    assert pickle.loads(pickle.dumps(options)) == options
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.walk.scope = "any"  # type: ignore[misc]


def test_since_means_the_same_at_every_door(tmp_path: Path) -> None:
    """since= in Python, --since and SITEMAP_READER_SINCE give one value; the CLI keeps no
    record filter of its own (what is delivered is the reader's Delivery group)."""
    parser = build_parser(lambda a: 0, lambda a: 0, lambda a: 0)
    cli = options_from(parser.parse_args(["dump", "x.example", "--since", "2026-01-01"]))
    assert cli.walk.since == Options.of(since="2026-01-01").walk.since
    import sitemap_reader.cli.output as output

    assert not hasattr(output, "RecordFilter")


def test_a_flag_error_names_the_flag() -> None:
    """A combination refused by the declarations names the CLI flag, not the keyword."""
    parser = build_parser(lambda a: 0, lambda a: 0, lambda a: 0)
    args = parser.parse_args(["dump", "x.example", "--changed-only"])
    with pytest.raises(UsageError, match=r"^--state: changed_only and removed need a state"):
        options_from(args)
    with pytest.raises(SystemExit):
        parser.parse_args(["dump", "x.example", "--deadline", "soon"])


def test_every_flag_has_help_with_its_default() -> None:
    """dump --help shows each option flag with its meaning (and default, for values)."""
    parser = build_parser(lambda a: 0, lambda a: 0, lambda a: 0)
    text = _subparser(parser, "dump").format_help()
    for _, item in every_option():
        flag = cli_flag(item)
        if flag is not None:
            assert re.search(rf"{re.escape(flag)}\b", text), flag


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser = action.choices[name]
            return found
    raise AssertionError(name)


@pytest.mark.parametrize("command", ["dump", "demo", "tree", "check", "report", "worker"])
def test_every_command_has_every_reader_flag(command: str) -> None:
    """Each command that reads sites takes every reader option flag (the incremental
    ones: dump and demo; the worker keeps its state in Redis: its own --state)."""
    from sitemap_reader.cli.distributed import add_commands

    parser = build_parser(
        lambda a: 0, lambda a: 0, lambda a: 0, lambda a: 0, lambda a: 0, (add_commands,)
    )
    flags = {s for a in _subparser(parser, command)._actions for s in a.option_strings}
    incremental = {"--state", "--changed-only", "--removed"}
    for group, item in every_option():
        flag = cli_flag(item)
        if flag is None or (flag in incremental and command in ("tree", "check", "report")):
            continue
        if group == "delivery" and command in ("tree", "check", "report"):
            assert flag not in flags, f"{command} writes no records, yet has {flag}"
            continue
        assert flag in flags, f"{command} lacks {flag}"
