"""Every regex option raises UsageError for a bad pattern, never re.error (issue 25.6)."""

from __future__ import annotations

import re

import pytest

import sitemap_reader as sr
from sitemap_reader.errors import UsageError
from tests.conftest_cli import run_cli

BAD = ["(", "[a-", "*x", "(?P<n>a)(?P<n>b)"]


@pytest.mark.parametrize("bad", BAD)
def test_reader_follow(bad: str) -> None:
    """SitemapReader(follow=[bad]) raises UsageError naming the option, at construction."""
    with pytest.raises(UsageError, match=r"^SitemapReader: follow: bad regular expression"):
        sr.SitemapReader(follow=[bad])


def test_reader_follow_alone_and_compiled() -> None:
    """A lone string is one pattern (not its characters); compiled patterns pass through."""
    follow = sr.SitemapReader(follow="part-0[12]").options.walk.follow
    assert isinstance(follow, tuple) and [p.pattern for p in follow] == ["part-0[12]"]
    compiled = re.compile("x")
    assert sr.SitemapReader(follow=[compiled]).options.walk.follow == (compiled,)


def test_reader_follow_wrong_type() -> None:
    """A pattern that is neither a string nor a regex is a UsageError too."""
    with pytest.raises(UsageError, match="a pattern is a string or a compiled regex"):
        sr.SitemapReader(follow=[42])  # type: ignore[list-item]


def test_iter_urls_follow() -> None:
    """iter_urls passes follow to the reader: the same UsageError before any request."""
    with pytest.raises(UsageError, match=r"^iter_urls: follow: bad regular expression '\('"):
        list(sr.iter_urls("example.invalid", follow=["("]))


def test_scrapy_settings_and_mixin_patterns() -> None:
    """SITEMAP_READER_FOLLOW and sitemap_rules patterns: UsageError naming the setting."""
    pytest.importorskip("scrapy")
    from scrapy.settings import Settings

    from sitemap_reader.scrapy import options_from_settings

    with pytest.raises(UsageError, match=r"^SITEMAP_READER_FOLLOW: bad regular expression"):
        options_from_settings(Settings({"SITEMAP_READER_FOLLOW": ["("]}))


@pytest.mark.parametrize("flag", ["--follow", "--include", "--exclude"])
async def test_cli_regex_flags(flag: str) -> None:
    """The CLI's regex flags: exit 2, one error line naming the flag, no traceback."""
    result = await run_cli("dump", "example.invalid", flag, "(")
    assert result.code == 2 and "Traceback" not in result.err
    first = result.err.splitlines()[0]
    assert first.startswith(f"sitemap-reader dump: error: argument {flag}: bad regular expression")
