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


#: The secret each refused value below holds: no message may echo it.
SECRET = "s3cr3t-t0ken"


@pytest.mark.parametrize(
    "given",
    [
        {"Authorization": f"Bearer {SECRET}\n"},  # a token read from a file, newline kept
        [f"Authorization: Bearer {SECRET}\r\n"],
        [SECRET],  # the name forgotten: the value alone
        [(f"Bearer {SECRET}", "x")],
        [("X-Key", SECRET, "extra")],
    ],
)
def test_a_refused_header_never_echoes_its_value(given: object) -> None:
    """headers=: every refusal names the problem (and the header's name) without the
    credential it was given."""
    with pytest.raises(UsageError) as refused:
        sr.Options.of(headers=given)
    assert SECRET not in str(refused.value)
    assert "headers: " in str(refused.value)


@pytest.mark.parametrize(
    "given", [f"socks5://crawler:{SECRET}@proxy.example:1080", f"crawler:{SECRET}@proxy:3128"]
)
def test_a_refused_proxy_never_echoes_its_password(given: str) -> None:
    """proxy=: a URL that is no http(s) proxy, with or without a scheme, is refused
    without its password."""
    with pytest.raises(UsageError) as refused:
        sr.Options.of(proxy=given)
    assert SECRET not in str(refused.value) and "***" in str(refused.value)
