"""sitemap_reader/_words.py: counts with their noun in the right number, lists in one line,
and the words of a stop (each door's spelling of it: tests/records/test_outcomes.py)."""

from __future__ import annotations

import pytest

from sitemap_reader._words import listing, plural, stop_phrase
from sitemap_reader.records.outcomes import Stopped


@pytest.mark.parametrize(
    ("count", "noun", "many", "shown"),
    [
        (0, "file", None, "0 files"),
        (1, "file", None, "1 file"),
        (2, "URL", None, "2 URLs"),
        (12_345, "URL", None, "12,345 URLs"),
        (1, "entry", None, "1 entry"),
        (3, "entry", None, "3 entries"),
        (2, "child sitemap", None, "2 child sitemaps"),
        (2, "was", None, "2 were"),
        (2, "host", "hosts named", "2 hosts named"),
        (1, "host", "hosts named", "1 host"),
    ],
)
def test_a_count_and_its_noun(count: int, noun: str, many: str | None, shown: str) -> None:
    """One is singular, anything else plural (irregular nouns too), with thousands commas."""
    assert plural(count, noun, many) == shown


@pytest.mark.parametrize(
    ("items", "shown", "line"),
    [
        ([], 3, ""),
        (["a"], 3, "a"),
        (["a", "b"], 3, "a and b"),
        (["a", "b", "c"], 3, "a, b and c"),
        (["a", "b", "c", "d"], 3, "a, b, c and 1 more"),
        ([str(n) for n in range(1_003)], 2, "0, 1 and 1,001 more"),
    ],
)
def test_a_list_in_one_line(items: list[str], shown: int, line: str) -> None:
    """The first few items, joined with commas and "and", then how many are left."""
    assert listing(items, shown) == line


@pytest.mark.parametrize(
    ("stopped", "words"),
    [
        (Stopped("budget", "max_urls", 1), "stopped after 1 URL (max_urls)"),
        (Stopped("asked"), "stopped: asked to stop"),
        (Stopped("output-closed"), "stopped: output closed"),
    ],
)
def test_the_words_of_a_stop(stopped: Stopped, words: str) -> None:
    """A budget of one names one URL; a stop the caller asked for, or a closed output, says so."""
    assert stop_phrase(stopped) == words
