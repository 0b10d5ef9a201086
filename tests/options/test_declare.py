"""The converters of options/declare.py at every door: a bad regex is a UsageError, never
re.error (issue 25.6); numbers and moments no option holds, NumPy numbers, values per
target and misspelt Scrapy settings (issue 40, class 11)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

import sitemap_reader as sr
from sitemap_reader.errors import UsageError
from sitemap_reader.options import Options
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


# -- numbers and moments no option holds (issue 40, class 11) --------------------------------

#: (keyword, value, what the refusal says): each an OverflowError or a traceback before.
OUT_OF_RANGE = [
    ("deadline", float("inf"), "deadline: expected seconds"),
    ("deadline", float("-inf"), "deadline: expected seconds"),
    ("deadline", 10**400, "deadline: expected seconds, a number > 0, got an integer of about"),
    ("timeout", 1e300, "timeout: expected seconds, a number > 0 and at most 1e+09"),
    ("max_urls", float("inf"), "max_urls: expected a whole number >= 1, got inf"),
    ("max_urls", 10**400, "max_urls: expected a whole number >= 1 below 2**63"),
    ("concurrency", 10**400, "concurrency: expected a whole number >= 1 below 2**63"),
    ("max_decompressed_bytes", 2**63, "max_decompressed_bytes: expected a whole number >= 1"),
    ("since", "0001-01-01T00:00:00+01:00", "since: expected a moment from year 1 to 9999 in UTC"),
    ("since", "9999-12-31T23:00:00-05:00", "since: expected a moment from year 1 to 9999 in UTC"),
    ("since", datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))), "since: expected"),
    ("seed", 10**5000, "seed: expected a whole number from 0 to 18446744073709551615, got an"),
]


def _python_doors(flat: dict[str, Any]) -> list[tuple[str, Any]]:
    """Each Python door called with ``flat`` (none of them reaches the network)."""
    from sitemap_reader.engines.batch import discover_batches

    return [
        ("Options", lambda: Options.of(**flat)),
        ("SitemapReader", lambda: sr.SitemapReader(**flat)),
        ("iter_urls", lambda: list(sr.iter_urls("example.invalid", **flat))),
        ("SitemapLoader", lambda: sr.SitemapLoader("example.invalid", **flat)),
        ("discover_batches", lambda: discover_batches(["example.invalid"], **flat)),
    ]


@pytest.mark.parametrize(
    ("name", "value", "message"),
    OUT_OF_RANGE,
    ids=lambda v: repr(v)[:24] if not isinstance(v, int) or v < 10**30 else "huge",
)
def test_out_of_range_values_are_refused_at_every_python_door(
    name: str, value: object, message: str
) -> None:
    """inf, -inf, 10**400, 1e300 seconds, a since before year 1 or after 9999 in UTC, a
    seed of 5,000 digits: a UsageError naming the door and the option at each Python door
    and the Scrapy settings, never an OverflowError or ValueError from inside."""
    flat = {name: value, **({"sample": 5} if name == "seed" else {})}
    for door, call in _python_doors(flat):
        with pytest.raises(UsageError) as caught:
            call()
        assert str(caught.value).startswith(f"{door}: {message}"), (door, caught.value)
    pytest.importorskip("scrapy")
    from scrapy.settings import Settings

    from sitemap_reader.scrapy import options_from_settings

    setting = "SITEMAP_READER_" + name.upper()
    more = {"SITEMAP_READER_SAMPLE": 5} if name == "seed" else {}
    with pytest.raises(UsageError) as caught:
        options_from_settings(Settings({setting: value, **more}))
    said = str(caught.value)
    expected = f"{setting}: {message.split(': ', 1)[1]}"
    assert said.startswith((expected, f"Scrapy settings: {setting} is not a"))


@pytest.mark.parametrize("since", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:00:00-05:00"])
async def test_the_cli_refuses_a_since_out_of_range(since: str) -> None:
    """--since past year 1 or 9999 in UTC: exit 2, one line naming the flag (before: a
    traceback and exit 1)."""
    result = await run_cli("dump", "example.invalid", "--since", since)
    assert result.code == 2 and "Traceback" not in result.err, result.err
    assert result.err.splitlines()[0] == (
        f"sitemap-reader dump: error: argument --since: expected a moment from year 1 "
        f"to 9999 in UTC, got {since}"
    )


def test_the_edges_of_the_years_are_taken() -> None:
    """Year 1 and year 9999 themselves, in UTC, are moments since= takes."""
    assert Options.of(since="0001-01-01").walk.since == datetime(1, 1, 1, tzinfo=UTC)
    late = Options.of(since="9999-12-31T23:59:59Z").walk.since
    assert late == datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def test_numpy_numbers_are_numbers_at_every_door() -> None:
    """A count read from pandas (a NumPy integer) and a NumPy float or bool are taken as
    the numbers they are, at each of the six doors (before: refused at every one); a
    NumPy float with a fraction is still no whole number."""
    np = pytest.importorskip("numpy")
    flat = {
        "max_urls": np.int64(5),
        "deadline": np.float32(2.5),
        "concurrency": np.uint8(3),
        "guess": np.bool_(False),
    }
    from sitemap_reader.engines.batch import discover_batches

    options = Options.of(**flat)
    assert options.delivery.max_urls == 5 and type(options.delivery.max_urls) is int
    assert options.timeouts.deadline == 2.5 and options.parallelism.concurrency == 3
    assert options.walk.guess is False
    assert sr.SitemapReader(**flat).options == options
    loader = sr.SitemapLoader("example.invalid", **flat)
    assert loader._reader.options == options.replace(max_urls=None)  # the loader counts it
    assert loader._budget == 5 and type(loader._budget) is int
    discover_batches(["example.invalid"], parallel=np.int64(2), **flat).close()
    with pytest.raises(UsageError, match=r"^iter_urls: max_urls: expected a whole number"):
        list(sr.iter_urls("example.invalid", max_urls=np.float64(2.5)))
    pytest.importorskip("scrapy")
    from scrapy.settings import Settings

    from sitemap_reader.scrapy import options_from_settings

    scrapy_options, _ = options_from_settings(Settings({"SITEMAP_READER_MAX_URLS": np.int64(5)}))
    assert scrapy_options.delivery.max_urls == 5


def test_a_value_per_target_is_refused_naming_per_target_and_the_target() -> None:
    """per_target={"a.example": {"proxy": "ftp://x"}}: the refusal names the door,
    per_target, the target and its option (before: only "proxy")."""
    flat = {"per_target": {"a.example": {"proxy": "ftp://x"}}}
    for door, call in _python_doors(flat):
        with pytest.raises(UsageError) as caught:
            call()
        assert str(caught.value).startswith(f"{door}: per_target: a.example: proxy: "), door


def test_a_misspelt_scrapy_setting_is_refused_with_the_nearest_one() -> None:
    """SITEMAP_READER_MAX_URL (no S): a UsageError suggesting SITEMAP_READER_MAX_URLS, as
    a Python keyword's misspelling is (before: silently ignored); the scheduler's own
    SITEMAP_READER_REDIS_* settings are known names."""
    pytest.importorskip("scrapy")
    from scrapy.settings import Settings

    from sitemap_reader.scrapy import options_from_settings

    with pytest.raises(UsageError) as caught:
        options_from_settings(Settings({"SITEMAP_READER_MAX_URL": 5}))
    assert str(caught.value) == (
        "Scrapy settings: unknown setting 'SITEMAP_READER_MAX_URL' "
        "(did you mean 'SITEMAP_READER_MAX_URLS'?)"
    )
    options, _ = options_from_settings(Settings({"SITEMAP_READER_REDIS_LEASE": 5}))
    assert options.delivery == Options().delivery
    with pytest.raises(UsageError) as caught:
        options_from_settings(Settings({"SITEMAP_READER_CONCURRENCY": 5}))
    assert str(caught.value) == (
        "Scrapy settings: SITEMAP_READER_CONCURRENCY is not a setting: Scrapy's CONCURRENT_REQUESTS"
    )
