"""The robots audit of a site's records (discovery/robots_audit.py): a verdict per URL, for
the origins robots.txt covers, decided as each record is built."""

from __future__ import annotations

import pytest

from sitemap_reader.discovery.robots import DISALLOW_ALL
from sitemap_reader.discovery.robots_audit import RobotsAudit, allows_everything, origin_prefix
from sitemap_reader.parse.robots import parse_robots

SITE = "https://site.example"
RULES = parse_robots(
    b"User-agent: mybot\nDisallow: /private/\n\nUser-agent: *\nDisallow:\n", SITE + "/robots.txt"
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (SITE + "/private/1", "disallowed"),
        (SITE + "/open", "allowed"),
        ("http://site.example/private/1", "disallowed"),  # the origin it redirected to
        ("https://other.example/private/1", None),
        (SITE + ":8443/private/1", None),
        ("not a url", None),
    ],
)
def test_verdicts_by_origin(url: str, expected: str | None) -> None:
    """Only the origins robots.txt covers (its own and the one it moved to) are audited."""
    audit = RobotsAudit("mybot")
    audit.read(RULES, [origin_prefix(SITE + "/robots.txt"), "http://site.example/"])
    assert audit.verdict(url) == expected


def test_the_origin_cache_follows_the_urls() -> None:
    """Consecutive URLs switch origins back and forth: each verdict is the right one."""
    audit = RobotsAudit("mybot")
    audit.read(RULES, [SITE + "/"])
    urls = [SITE + "/private/a", "https://other.example/private/a", SITE + "/private/b"]
    assert [audit.verdict(u) for u in urls * 2] == ["disallowed", None, "disallowed"] * 2


def test_nothing_is_said_before_robots_txt_is_read() -> None:
    """None until read; a second read (a parent's robots.txt) replaces rules and origins."""
    audit = RobotsAudit("mybot")
    assert audit.verdict(SITE + "/private/a") is None
    audit.read(RULES, [SITE + "/"])
    assert audit.verdict(SITE + "/private/a") == "disallowed"
    audit.read(DISALLOW_ALL, ["https://other.example/"])
    assert audit.verdict(SITE + "/private/a") is None
    assert audit.verdict("https://other.example/a") == "disallowed"


def test_an_agent_without_rules_is_allowed_everything() -> None:
    """No rule applies to the agent: every URL of the origin is allowed, none asked."""
    assert allows_everything(RULES, "otherbot") and not allows_everything(RULES, "mybot")
    audit = RobotsAudit("otherbot")
    audit.read(RULES, [SITE + "/"])
    assert audit.everything and audit.verdict(SITE + "/private/a") == "allowed"
