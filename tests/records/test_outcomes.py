"""Outcomes as data (records/outcomes.py): stops and skips carry codes and values, each
door renders the words with its own spelling of the options, and the layers below the
doors never write a door's words (a CLI flag) into what they report."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from sitemap_reader._words import stop_phrase
from sitemap_reader.options.doors import spelling
from sitemap_reader.records.outcomes import Skipped, Stopped

PACKAGE = Path(__file__).resolve().parents[2] / "sitemap_reader"
#: The layers that report outcomes to every door: none of them may speak one door's words.
BELOW_THE_DOORS = ("parse", "discovery", "records", "store", "delivery", "crawl", "engines")
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


@pytest.mark.parametrize(
    ("stopped", "python", "cli", "scrapy"),
    [
        (
            Stopped("budget", "max_urls", 10),
            "stopped after 10 URLs (max_urls)",
            "stopped after 10 URLs (--max-urls)",
            "stopped after 10 URLs (SITEMAP_READER_MAX_URLS)",
        ),
        (Stopped("deadline", "deadline", 2.5), *["stopped at the deadline (2.5 s)"] * 3),
        (Stopped("asked", signal="SIGINT"), *["interrupted (Ctrl-C)"] * 3),
        (Stopped("asked", signal="SIGTERM"), *["interrupted (SIGTERM)"] * 3),
        (Stopped("output-failed"), *["stopped: output failed"] * 3),
    ],
)
def test_each_door_renders_a_stop_its_own_way(
    stopped: Stopped, python: str, cli: str, scrapy: str
) -> None:
    """One typed stop, three doors: each names the option the way its user sets it."""
    assert stop_phrase(stopped) == python
    assert stop_phrase(stopped, spelling("cli")) == cli
    assert stop_phrase(stopped, spelling("scrapy")) == scrapy


def test_stops_and_skips_are_json_data() -> None:
    """The JSON shapes carry the kind and the values, never a sentence to parse."""
    assert Stopped("deadline", "deadline", 30.0).to_dict() == {
        "kind": "deadline",
        "option": "deadline",
        "limit": 30.0,
    }
    skipped = Skipped("not-found", "not found (HTTP 404)", "HTTP 404")
    assert skipped.to_dict() == {
        "code": "not-found",
        "reason": "not found (HTTP 404)",
        "detail": "HTTP 404",
    }
    assert str(skipped) == "not found (HTTP 404)"


def _strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module that are not docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_the_layers_below_the_doors_name_no_cli_flag() -> None:
    """What the core, the drivers' shared parts and the engines report is read at every
    door: none of it may tell a Python or Scrapy user to type a CLI flag (before:
    "older than --since", "see --allow-private", "--format parquet writes a file")."""
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {text!r}"
        for layer in BELOW_THE_DOORS
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for line, text in _strings(path)
        if _FLAG.search(text)
    ]
    assert found == []
