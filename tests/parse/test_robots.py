"""Tests for sitemap_reader.parse.robots: sitemap discovery and rules from robots.txt."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitemap_reader.parse.robots import RobotsTxt, parse_robots, sitemaps_from_robots
from tests.shared_data import CORPUS, require

#: crawler-commons' robots.txt test files, read in place (never copied into the repo).
DATA = CORPUS / "crawler-commons" / "robots"
ROBOTS = "https://www.example.com/robots.txt"


def read(name: str) -> bytes:
    """A robots.txt test file's bytes (the test skips when ../shared is absent)."""
    return (require(DATA) / name).read_bytes()


def test_case_75_scrapy_mixed_file() -> None:
    """Case 75: lines between groups, upper-case scheme normalized, relative resolved."""
    body = b"""User-agent: *
Disallow: /aff/
Disallow: /wl/

# Search and shopping refining
Disallow: /s*/*facet
Disallow: /s*/*tags

# Sitemap files
Sitemap: http://example.com/sitemap.xml
Sitemap: http://example.com/sitemap-product-index.xml
Sitemap: HTTP://example.com/sitemap-uppercase.xml
Sitemap: /sitemap-relative-url.xml

# Forums
Disallow: /forum/search/
Disallow: /forum/active/
"""
    assert sitemaps_from_robots(body, "http://www.example.com/robots.txt") == [
        "http://example.com/sitemap.xml",
        "http://example.com/sitemap-product-index.xml",
        "http://example.com/sitemap-uppercase.xml",
        "http://www.example.com/sitemap-relative-url.xml",
    ]


def test_case_76_invalid_utf8_line_skipped() -> None:
    """Case 76: a Sitemap line with invalid UTF-8 bytes is skipped, the others kept."""
    body = (
        b"Sitemap: https://example.com/good-1.xml\n"
        b"Sitemap: https://example.com/bad-\xff\xfe.xml\n"
        b"Sitemap: https://example.com/good-2.xml\n"
    )
    assert sitemaps_from_robots(body, ROBOTS) == [
        "https://example.com/good-1.xml",
        "https://example.com/good-2.xml",
    ]


def test_case_77_dedup_file() -> None:
    """Case 77: 'sitemap:' and a duplicate 'Sitemap:' line give one URL."""
    assert sitemaps_from_robots(read("sitemap-robots-dedup.txt"), ROBOTS) == [
        "http://example.org/sitemap.xml"
    ]


def test_case_77_and_80_sitemap_robots_file() -> None:
    """Cases 77/80: anywhere in the file, mixed case kept (the third, as crawler-commons
    asserts), bare URL line accepted in its place: document order."""
    assert sitemaps_from_robots(read("sitemap-robots.txt"), ROBOTS) == [
        "http://domain.com/sitemap.xml",
        "http://domain.com/dir/my-sitemap.xml",
        "http://domain.com/dir/MixedCased-sitemap.xml",
    ]


def test_case_77_invalid_base_absolute_sitemap_kept() -> None:
    """Case 77: an unusable robots URL does not matter for an absolute sitemap."""
    body = "Sitemap: https://example.com/s.xml\nSitemap: /relative.xml\n"
    assert sitemaps_from_robots(body, "not a url") == ["https://example.com/s.xml"]


@pytest.mark.parametrize(
    "name",
    ["robots-with-utf8-bom.txt", "robots-with-utf16le-bom.txt", "robots-with-utf16be-bom.txt"],
)
def test_case_78_bom_files(name: str) -> None:
    """Case 78: behind a UTF-8/16 BOM the first User-agent line works and the Sitemap is found."""
    robots = parse_robots(read(name), "http://www.newsweek.com/robots.txt")
    assert robots.sitemaps == ("http://www.newsweek.com/sitemap_index.xml",)
    assert not robots.can_fetch("http://www.newsweek.com/login.aspx", "anybot")
    assert robots.can_fetch("http://www.newsweek.com/news", "anybot")


def test_case_79_bom_before_sitemap_on_first_line() -> None:
    """Case 79: protego alone loses '\\ufeffSitemap: …'; we find it (bytes and str)."""
    text = "\ufeffSitemap: https://example.com/s.xml\n"
    assert sitemaps_from_robots(text.encode(), ROBOTS) == ["https://example.com/s.xml"]
    assert sitemaps_from_robots(text, ROBOTS) == ["https://example.com/s.xml"]


def test_case_79_protego_variants() -> None:
    """Case 79: Site-map alias, CRLF, indentation, trailing comment, inside a group, empty."""
    body = (
        b"User-agent: *\r\n"
        b"  Sitemap: https://example.com/a.xml # comment\r\n"
        b"Site-map: https://example.com/b.xml\r\n"
        b"SITEMAP: https://example.com/c.xml\r\n"
        b"Sitemap:\r\n"
        b"Disallow: /x\r\n"
    )
    assert sitemaps_from_robots(body, ROBOTS) == [
        "https://example.com/a.xml",
        "https://example.com/b.xml",
        "https://example.com/c.xml",
    ]


def test_relative_sitemap_file() -> None:
    """A relative Sitemap value resolves against the robots.txt URL's host."""
    assert sitemaps_from_robots(read("relative-sitemap-robots.txt"), ROBOTS) == [
        "https://www.example.com/sitemap.xml"
    ]


def test_format_errors_file() -> None:
    """'sitemap : /sitemap.xml' (space before the colon) still counts."""
    assert sitemaps_from_robots(read("format-errors-robots.txt"), ROBOTS) == [
        "https://www.example.com/sitemap.xml"
    ]


def test_wildcards_file_keeps_order_and_gz_names() -> None:
    """A real file with eight Sitemap lines yields all eight, in file order."""
    sitemaps = sitemaps_from_robots(read("wildcards.txt"), ROBOTS)
    assert len(sitemaps) == 8
    assert sitemaps[0] == "http://www.amazon.com/sitemap-manual-index.xml"
    assert sitemaps[-1].endswith(".SitemapIndex_0.xml.gz")


def test_non_http_and_junk_values_dropped() -> None:
    """ftp:, javascript: and hostless values are dropped."""
    body = "Sitemap: ftp://example.com/s.xml\nSitemap: javascript:x\nSitemap: http:///s.xml\n"
    assert sitemaps_from_robots(body, ROBOTS) == []


def test_fragment_dropped_and_dedup_after_normalization() -> None:
    """Values equal after normalization are deduplicated, the first one kept."""
    body = "Sitemap: https://Example.com:443/s.xml#x\nSitemap: https://example.com/s.xml\n"
    assert sitemaps_from_robots(body, ROBOTS) == ["https://example.com/s.xml"]


def test_only_first_max_bytes_parsed() -> None:
    """Only complete lines within max_bytes count (RFC 9309 §2.5)."""
    first = b"Sitemap: https://example.com/first.xml\n"
    body = first + b"# padding\n" * 20 + b"Sitemap: https://example.com/late.xml\n"
    assert sitemaps_from_robots(body, ROBOTS, max_bytes=len(first) + 5) == [
        "https://example.com/first.xml"
    ]
    cut_inside = len(first) + len(b"# padding\n") * 20 + 30
    assert sitemaps_from_robots(body, ROBOTS, max_bytes=cut_inside) == [
        "https://example.com/first.xml"
    ]
    assert len(sitemaps_from_robots(body, ROBOTS, max_bytes=len(body))) == 2


def test_max_bytes_applies_to_str_and_utf16() -> None:
    """The byte bound holds for str bodies and UTF-16 bodies too."""
    text = "Sitemap: https://example.com/a.xml\n" + "#" * 1000 + "\nSitemap: https://e.com/b.xml\n"
    assert sitemaps_from_robots(text, ROBOTS, max_bytes=100) == ["https://example.com/a.xml"]
    utf16 = b"\xff\xfe" + text.encode("utf-16-le")
    assert sitemaps_from_robots(utf16, ROBOTS, max_bytes=200) == ["https://example.com/a.xml"]


def test_rules_and_crawl_delay() -> None:
    """can_fetch and crawl_delay follow the groups; UA matching is case-insensitive."""
    body = b"User-agent: mybot\nDisallow: /private/\nCrawl-delay: 2.5\n\nUser-agent: *\nAllow: /\n"
    robots = parse_robots(body, ROBOTS)
    assert not robots.can_fetch("https://www.example.com/private/x", "MyBot/1.0")
    assert robots.can_fetch("https://www.example.com/private/x", "otherbot")
    assert robots.crawl_delay("mybot") == 2.5
    assert robots.crawl_delay("otherbot") is None


def test_crawl_delay_files() -> None:
    """Real files: amazon's Crawl-delay is read; twitter's rules parse."""
    assert parse_robots(read("astore.amazon.com-robots.txt"), ROBOTS).crawl_delay("bot") == 5.0
    assert parse_robots(read("twitter.com-robots.txt"), ROBOTS).sitemaps == ()


def test_value_semantics() -> None:
    """RobotsTxt compares and prints by its sitemaps and HTML verdict only; it is frozen."""
    a = parse_robots(b"Sitemap: https://example.com/s.xml\nDisallow: /", ROBOTS)
    b = parse_robots(b"Sitemap: https://example.com/s.xml\n", ROBOTS)
    assert a == b
    assert repr(a) == "RobotsTxt(sitemaps=('https://example.com/s.xml',), is_html=False)"
    with pytest.raises(AttributeError):
        a.sitemaps = ()  # type: ignore[misc]
    assert isinstance(a, RobotsTxt)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"<!DOCTYPE html><html><body>Sitemap: nope</body></html>",
        bytes(range(256)) * 4,
        b"\xfe\xff\x00",
        b"\xff\xfe\x00",
        b"Sitemap: \x00\x00\x00",
        b"Sitemap: https://exa mple.com/s.xml",
    ],
)
def test_garbage_never_raises(body: bytes) -> None:
    """HTML, binary, odd BOMs and broken values give no sitemaps and no exception."""
    robots = parse_robots(body, ROBOTS)
    assert robots.sitemaps == ()
    assert robots.can_fetch("https://www.example.com/", "bot")


def test_every_corpus_file_parses() -> None:
    """Every robots.txt in the corpus parses without an exception to absolute http(s) URLs."""
    files = [*sorted(require(DATA).iterdir()), CORPUS / "advertools" / "robots.txt"]
    assert len(files) >= 25
    for path in files:
        for url in parse_robots(path.read_bytes(), ROBOTS).sitemaps:
            assert url.startswith(("http://", "https://")), (path.name, url)


@settings(max_examples=200)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_never_raise(body: bytes) -> None:
    """Arbitrary bytes give a RobotsTxt whose sitemaps are normalized http(s) URLs."""
    robots = parse_robots(body, ROBOTS)
    assert all(url.startswith(("http://", "https://")) for url in robots.sitemaps)


def test_bare_url_lines_keep_their_place_in_document_order() -> None:
    """Issue 12 point 3: directives and bare URL lines come back in document order."""
    body = (
        "https://example.com/bare-1.xml\n"
        "User-agent: *\n"
        "Sitemap: https://example.com/directive-1.xml\n"
        "Disallow: /private/\n"
        "https://example.com/bare-2.xml  # forgot the directive\n"
        "sitemaps: https://example.com/directive-2.xml\n"
        "SITE-MAP: https://example.com/directive-3.xml\n"
        "https://example.com/bare-3.xml\n"
    )
    assert sitemaps_from_robots(body, ROBOTS) == [
        "https://example.com/bare-1.xml",
        "https://example.com/directive-1.xml",
        "https://example.com/bare-2.xml",
        "https://example.com/directive-2.xml",
        "https://example.com/directive-3.xml",
        "https://example.com/bare-3.xml",
    ]


def test_document_order_with_crlf_and_a_value_repeated_in_a_rule() -> None:
    """Point 3: CRLF lines, and a Disallow naming a later sitemap's URL, keep the order."""
    body = (
        b"Disallow: https://example.com/s2.xml\r\n"
        b"https://example.com/s1.xml\r\n"
        b"Sitemap: https://example.com/s2.xml\r\n"
        b"https://example.com/s3.xml\r\n"
        b"Sitemap: https://example.com/s1.xml\r\n"
    )
    assert sitemaps_from_robots(body, ROBOTS) == [
        "https://example.com/s1.xml",
        "https://example.com/s2.xml",
        "https://example.com/s3.xml",
    ]


# --- RFC 9309 groups (issue 25.2) and HTML served as robots.txt (issue 25.5) ------------

#: An input written for the RFC's section 5.1 example: a group per agent, one group of
#: two agents, an agent with no rules, and the longest-match rule between allow/disallow.
RFC_EXAMPLE = """\
User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot
"""


@pytest.mark.parametrize(
    ("agent", "path", "allowed"),
    [
        ("foobot", "/", False),
        ("foobot", "/example/page.html", True),
        ("foobot", "/example/allowed.gif", True),
        ("foobot", "/example/other.gif", False),
        ("barbot", "/example/page.html", False),
        ("bazbot", "/example/page.html", False),
        ("bazbot", "/example/other.html", True),
        ("quxbot", "/example/page.html", True),
        ("otherbot", "/example/page.html", False),
        ("otherbot", "/publications/a", True),
        ("otherbot", "/picture.gif", False),
    ],
)
def test_rfc_9309_example(agent: str, path: str, allowed: bool) -> None:
    """RFC 9309 section 5.1's example file: each agent gets its own group's verdict."""
    rules = parse_robots(RFC_EXAMPLE, ROBOTS)
    assert rules.can_fetch("https://www.example.com" + path, agent) is allowed


def test_rfc_9309_same_agent_groups_merge() -> None:
    """RFC 9309 2.2.1: two groups for one agent are merged into one."""
    body = (
        "user-agent: ExampleBot\ndisallow: /foo\ndisallow: /bar\n\n"
        "user-agent: ExampleBot\ndisallow: /baz\n"
    )
    rules = parse_robots(body, ROBOTS)
    for path in ("/foo", "/bar", "/baz"):
        assert not rules.can_fetch("https://www.example.com" + path, "examplebot")
    assert rules.can_fetch("https://www.example.com/qux", "examplebot")


@pytest.mark.parametrize(
    "between",
    ["Crawl-delay: 10", "Request-rate: 1/10s", "Visit-time: 0600-0845", "Sitemap: /s.xml",
     "Host: example.com", "Noindex: /x", "Disalow-typo-free-record: 1", "# a comment", ""],
)  # fmt: skip
def test_other_records_do_not_end_a_group(between: str) -> None:
    """RFC 9309 2.2.4: a record that is not a rule or a user-agent line (crawl-delay,
    request-rate, sitemap, unknown, comments) neither ends a group nor starts one."""
    body = f"User-agent: mybot\n{between}\nUser-agent: yourbot\nDisallow: /private/\n"
    rules = parse_robots(body, ROBOTS)
    for agent in ("mybot", "yourbot"):
        assert not rules.can_fetch("https://www.example.com/private/x", agent), agent
        assert rules.can_fetch("https://www.example.com/public", agent)


def test_a_rule_still_ends_a_group() -> None:
    """A user-agent line after a rule starts the next group: the first group's rules do
    not reach it (and a delay after the rule stays with the first group)."""
    body = "User-agent: a\nDisallow: /x\nCrawl-delay: 5\nUser-agent: b\nDisallow: /y\n"
    rules = parse_robots(body, ROBOTS)
    assert rules.can_fetch("https://www.example.com/x", "b")
    assert not rules.can_fetch("https://www.example.com/y", "b")
    assert (rules.crawl_delay("a"), rules.crawl_delay("b")) == (5.0, None)


def test_crawl_delay_binds_the_agents_named_before_it() -> None:
    """A Crawl-delay inside a group of two agents is the first agent's only: the rule
    binds both (crawler-commons' reading; it was both agents' before)."""
    body = "User-agent: a\nCrawl-delay: 7\nUser-agent: b\nDisallow: /y\n"
    rules = parse_robots(body, ROBOTS)
    assert (rules.crawl_delay("a"), rules.crawl_delay("b")) == (7.0, None)
    assert not rules.can_fetch("https://www.example.com/y", "a")


# The bodies of crawler-commons' SimpleRobotRulesParserTest (testCrawlDelay's two,
# testBrokenKrugleRobotsTxtFile, testSelectCrawlDelayGroup) and the delays it expects for
# each agent: before, each of these bodies gave an agent a delay of another group.
_CR, _CRLF = "\r", "\r\n"
CRAWL_DELAY_CASES: dict[str, tuple[str, dict[str, float | None]]] = {
    "two-groups-first": (
        _CR.join(["User-agent: bixo", "Crawl-delay: 10", "User-agent: foobot",
                  "Crawl-delay: 20", "User-agent: *", "Disallow:/baz", ""]),
        {"bixo": 10.0, "foobot": 20.0},
    ),
    "other-agent-only": (
        _CR.join(["User-agent: foobot", "Crawl-delay: 20", "User-agent: *", "Disallow:/baz", ""]),
        {"bixo": None, "foobot": 20.0},
    ),
    "krugle": (
        _CR.join(["User-agent: *", "Disallow: /maintenance.html", "Disallow: /perl/",
                  "Disallow: /cgi-bin/", "Disallow: /examples/", "Crawl-delay: 3", "",
                  "User-agent: googlebot", "Crawl-delay: 1", "", "User-agent: qihoobot",
                  "Disallow: /"]),
        {"googlebot/2.1": 1.0, "qihoobot": None, "anybot": 3.0},
    ),
    "select-group": (
        _CRLF.join(["User-Agent: bingbot", "Crawl-delay: 1", "", "User-Agent: msnbot",
                    "Crawl-delay: 2", "", "User-Agent: pinterestbot", "Crawl-delay: 0.2", "",
                    "User-agent: *", "Disallow: /login",
                    "Sitemap: http://www.example.com/sitemap.xml", "Disallow: /assets/"]),
        {"bingbot": 1.0, "msnbot": 2.0, "pinterestbot": 0.2, "anybot": None},
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CRAWL_DELAY_CASES))
def test_crawl_delay_chosen_as_crawler_commons(case: str) -> None:
    """Each agent gets the Crawl-delay crawler-commons gives it, never another group's."""
    body, expected = CRAWL_DELAY_CASES[case]
    rules = parse_robots(body, ROBOTS)
    assert {agent: rules.crawl_delay(agent) for agent in expected} == expected


def test_crawl_delay_group_merging_file() -> None:
    """crawler-commons' crawl-delay-group-merging.txt: mybot 10 s, yourbot (in mybot's
    group, named after the delay) none, any other agent the merged wildcard groups' 30 s."""
    rules = parse_robots(read("crawl-delay-group-merging.txt"), ROBOTS)
    delays = {a: rules.crawl_delay(a) for a in ("mybot", "yourbot", "anyotherbot")}
    assert delays == {"mybot": 10.0, "yourbot": None, "anyotherbot": 30.0}
    assert not rules.can_fetch("https://www.example.com/private/", "yourbot")


@pytest.mark.parametrize(
    ("body", "delay"),
    [
        ("User-agent: a\nCrawl-delay: 5\nCrawl-delay: 3\n", 5.0),  # a stint's first line
        ("User-agent: a\nCrawl-delay: 9\nDisallow: /x\n\nUser-agent: a\nCrawl-delay: 4\n", 4.0),
        ("User-agent: *\nCrawl-delay: 2\nDisallow: /\nUser-agent: *\nCrawl-delay: 6\n", 2.0),
        ("User-agent: *\nCrawl-delay: 2\nDisallow: /\nUser-agent: a\nDisallow: /x\n", None),
        ("User-agent: a*\nCrawl-delay: 8\n", 8.0),  # protego's wildcard-less name
        ("User-agent: a\nCrawl-delay: soon\nUser-agent: b\nCrawl-delay: 3\n", None),
    ],
    ids=["same-stint", "merged-groups-shortest", "wildcards-shortest", "specific-wins",
         "star-name", "bad-value-binds"],
)  # fmt: skip
def test_crawl_delay_merging_rules(body: str, delay: float | None) -> None:
    """Merged groups give the shortest delay; a specific group's absence of one wins over
    the wildcard's; a second line in one stint (or after a bad value) binds no one."""
    assert parse_robots(body, ROBOTS).crawl_delay("a") == delay


def test_request_rate_binds_like_crawl_delay() -> None:
    """Request-rate is read as Crawl-delay is (seconds per request), units included."""
    body = "User-agent: a\nRequest-rate: 2/1m\nUser-agent: b\nRequest-rate: 1/5\nDisallow: /\n"
    rules = parse_robots(body, ROBOTS)
    assert (rules.request_interval("a"), rules.request_interval("b")) == (30.0, 5.0)
    assert rules.request_interval("c") is None


def test_regroup_keeps_sitemaps_in_document_order() -> None:
    """Regrouping moves only user-agent lines: the sitemaps keep their order."""
    body = (
        "Sitemap: /1.xml\nUser-agent: a\nSitemap: /2.xml\nCrawl-delay: 1\n"
        "User-agent: b\nSitemap: /3.xml\nDisallow: /\nhttps://www.example.com/4.xml\n"
    )
    assert [s.rsplit("/", 1)[1] for s in parse_robots(body, ROBOTS).sitemaps] == [
        "1.xml", "2.xml", "3.xml", "4.xml",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "page",
    [
        "<!DOCTYPE html>\n<html>\n<body>\nhttps://twitter.com/intent/tweet?text=Home&\n</body></html>",
        "\ufeff  <html lang='en'>\nhttps://example.com/a-link\n</html>",
        "<!-- cms -->\n<head><title>Not found</title></head>\nhttps://example.com/x.xml\n",
    ],
    ids=["doctype", "bom-and-html", "comment-head"],
)
def test_html_page_gives_no_bare_url_sitemaps(page: str) -> None:
    """An HTML page served as robots.txt: no bare URL line is a sitemap; flagged html."""
    rules = parse_robots(page.encode(), ROBOTS)
    assert (rules.sitemaps, rules.is_html) == ((), True)


def test_html_page_keeps_explicit_sitemap_lines() -> None:
    """A real Sitemap: line inside an HTML page is still read (protego reads it)."""
    page = (
        b"<html><body>\nSitemap: https://example.com/s.xml\nhttps://example.com/b\n</body></html>"
    )
    assert parse_robots(page, ROBOTS).sitemaps == ("https://example.com/s.xml",)


def test_plain_robots_is_not_html() -> None:
    """A robots.txt that mentions <html> in a comment is not an HTML page."""
    body = b"# served as text, not <html>\nhttps://example.com/bare.xml\n"
    rules = parse_robots(body, ROBOTS)
    assert (rules.sitemaps, rules.is_html) == (("https://example.com/bare.xml",), False)
