"""The scrapy-redis scheduler's settings: declared with option(), read like every setting."""

from __future__ import annotations

import pytest
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from sitemap_reader.errors import UsageError
from sitemap_reader.scrapy.settings import RedisOptions, redis_options, setting_fields

pytest.importorskip("scrapy_redis")


def test_settings_are_derived_from_the_declarations() -> None:
    """Each option of the group is the setting SITEMAP_READER_ plus its name."""
    assert [name for name, _ in setting_fields(RedisOptions)] == [
        "SITEMAP_READER_REDIS_LEASE",
        "SITEMAP_READER_REDIS_POLL",
        "SITEMAP_READER_REDIS_KEY",
    ]


def test_defaults_unchanged() -> None:
    """Unset: leases of 60 s, a poll a second, keys under '<spider>:sitemap_reader'."""
    options = redis_options(Settings())
    assert options == RedisOptions()
    assert (options.redis_lease, options.redis_poll) == (60.0, 1.0)
    assert options.redis_key % {"spider": "blog"} == "blog:sitemap_reader"


def test_values_read_with_the_options_converters() -> None:
    """Numbers as a settings file or `-s NAME=VALUE` gives them (strings too) are read."""
    given = Settings(
        {
            "SITEMAP_READER_REDIS_LEASE": "5",
            "SITEMAP_READER_REDIS_POLL": 0.05,
            "SITEMAP_READER_REDIS_KEY": "crawl:%(spider)s",
        }
    )
    assert redis_options(given) == RedisOptions(
        redis_lease=5.0, redis_poll=0.05, redis_key="crawl:%(spider)s"
    )


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("SITEMAP_READER_REDIS_LEASE", -1),
        ("SITEMAP_READER_REDIS_LEASE", "-60"),
        ("SITEMAP_READER_REDIS_LEASE", 0),
        ("SITEMAP_READER_REDIS_LEASE", "nan"),
        ("SITEMAP_READER_REDIS_POLL", 0),
        ("SITEMAP_READER_REDIS_POLL", "soon"),
    ],
)
def test_a_lease_or_poll_not_above_zero_is_refused(setting: str, value: object) -> None:
    """A lease or poll that is not a number of seconds > 0 is a UsageError naming it."""
    with pytest.raises(UsageError, match=f"^{setting}: expected seconds, a number > 0, got "):
        redis_options(Settings({setting: value}))


@pytest.mark.parametrize("value", ["", "%(name)s:x", "a\nb"])
def test_a_bad_key_prefix_is_refused(value: str) -> None:
    """An empty prefix, one naming another field than spider, or two lines: refused."""
    with pytest.raises(UsageError, match=r"^SITEMAP_READER_REDIS_KEY: "):
        redis_options(Settings({"SITEMAP_READER_REDIS_KEY": value}))


def test_scheduler_refuses_a_negative_lease_before_it_starts() -> None:
    """The scheduler reads its settings through the declarations: -1 stops it, named."""
    from sitemap_reader.scrapy.redis import Scheduler

    settings = {"SCHEDULER_PERSIST": True, "SITEMAP_READER_REDIS_LEASE": -1}
    with pytest.raises(UsageError, match=r"^SITEMAP_READER_REDIS_LEASE: .* got -1$"):
        Scheduler.from_crawler(get_crawler(settings_dict=settings))
