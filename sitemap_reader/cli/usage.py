"""The honest edges of the command line: usage errors.

:class:`UsageParser` prints the one useful line of a usage error first (with "did you
mean" for a misspelt flag or command), then a one-line pointer to ``--help``, instead of
argparse's usage block followed by the message. What a target means (a path naming no
file included) is one rule for every door: :func:`~sitemap_reader.discovery.targets.classify`.
"""

from __future__ import annotations

import argparse
import difflib
import re
import shutil
import sys
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from sitemap_reader._safe_text import printable

_UNRECOGNIZED = "unrecognized arguments: "
_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")


#: The widest line of any help text: a terminal's default 80 columns, whatever COLUMNS says.
HELP_WIDTH = 80


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Help that fits 80 columns: the option help wrapped by argparse, and the prose
    paragraphs of a description or epilog re-wrapped here; example lines (indented by
    two spaces) keep their shape (they are written to fit). The usage line of a command
    with many flags is ``PROG [options] ARGS`` (the flags are listed below it)."""

    def __init__(self, prog: str) -> None:
        columns = shutil.get_terminal_size((HELP_WIDTH, 24)).columns
        super().__init__(prog, width=min(columns, HELP_WIDTH) - 1, max_help_position=30)

    def add_usage(
        self,
        usage: str | None,
        actions: Iterable[argparse.Action],
        groups: Iterable[Any],
        prefix: str | None = None,
    ) -> None:
        listed = list(actions)
        if usage is None and sum(1 for a in listed if a.option_strings) > _FLAGS_IN_USAGE:
            positionals = [a for a in listed if not a.option_strings]
            shown = [self._format_args(a, a.dest.upper()) for a in positionals]
            usage = " ".join(["%(prog)s", "[options]", *shown])
        super().add_usage(usage, listed, groups, prefix)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        blocks = []
        for block in text.split("\n\n"):
            lines = block.splitlines()
            if lines and all(not line.startswith("  ") for line in lines):
                blocks.append(
                    textwrap.fill(
                        " ".join(lines),
                        width,
                        initial_indent=indent,
                        subsequent_indent=indent,
                        break_on_hyphens=False,  # a flag's name stays whole
                    )
                )
            else:
                blocks.append("\n".join(indent + line for line in lines))
        return "\n\n".join(blocks) + ("\n" if text.endswith("\n") else "")


#: A usage line names each flag up to this many; past it, ``[options]``.
_FLAGS_IN_USAGE = 8


class BriefHelp(argparse.Action):
    """``-h``/``--help``: a command's help with the flags of ``rare`` options only named,
    under one heading at the end (``--help-all`` describes every flag)."""

    def __init__(self, option_strings: Sequence[str], dest: str, rare: Iterable[str] = ()) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the common flags and exit")
        self.rare = frozenset(rare)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        formatter = parser._get_formatter()  # argparse's own way to build a help text
        formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
        formatter.add_text(parser.description)
        named: list[str] = []
        for group in parser._action_groups:
            shown = [a for a in group._group_actions if a.dest not in self.rare]
            named += [a.option_strings[-1] for a in group._group_actions if a.dest in self.rare]
            if shown:
                formatter.start_section(group.title)
                formatter.add_arguments(shown)
                formatter.end_section()
        if named:
            formatter.start_section("more options (--help-all describes each)")
            formatter.add_text(", ".join(named))
            formatter.end_section()
        formatter.add_text(parser.epilog)
        parser._print_message(formatter.format_help(), sys.stdout)
        parser.exit()


class UsageParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors lead with the message, then "did you mean"."""

    #: The subcommand parser that handled the arguments last (for suggestions made by the
    #: top-level parser, which is where argparse reports unrecognized arguments).
    active: UsageParser | None = None

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: Any = None
    ) -> tuple[argparse.Namespace, list[str]]:
        UsageParser.active = self
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        """One line naming the problem, maybe a suggestion, then where help is; exit 2."""
        prog = self.prog
        if message.startswith(_UNRECOGNIZED) and UsageParser.active is not None:
            prog = UsageParser.active.prog  # argparse reports them on the top-level parser
        lines = [f"{prog}: error: {printable(message)}"]  # it may echo pasted site text
        hint = self._suggestion(message)
        if hint:
            lines.append(hint)
        lines.append(f"(see '{prog} --help')")
        sys.stderr.write("\n".join(lines) + "\n")
        raise SystemExit(2)

    def _suggestion(self, message: str) -> str | None:
        if message.startswith(_UNRECOGNIZED):
            parser = UsageParser.active or self
            options = parser.option_strings()
            for word in message[len(_UNRECOGNIZED) :].split():
                if word.startswith("-"):
                    name = word.split("=", 1)[0]
                    close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
                    if close:
                        return f"did you mean {close[0]}?"
            return None
        if match := _CHOICE.search(message):  # argparse's own words, for its choices
            return nearest(match.group(1), re.findall(r"'([^']*)'", match.group(2)))
        return None

    def option_strings(self) -> list[str]:
        """Every long option this parser knows."""
        return [
            option
            for action in self._actions
            for option in action.option_strings
            if option.startswith("--")
        ]


def nearest(word: str, choices: Sequence[str]) -> str | None:
    """``did you mean 'x'?`` for the choice nearest a mistyped ``word`` (None: none near)."""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.5) if word else []
    return f"did you mean {close[0]!r}?" if close else None
