"""Tests for sitemap_reader.parse.scope: the location rule and the scope filter."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitemap_reader.errors import UsageError
from sitemap_reader.parse.scope import Scope, host_of, in_location

CATALOG = "http://example.com/catalog/sitemap.xml"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://example.com/catalog/show?item=233&user=3453", True),
        ("http://example.com/catalog/", True),
        ("http://example.com/catalog/deep/er/page", True),
        ("http://example.com/image/show?item=233&user=3453", False),
        ("https://example.com/catalog/page1.php", False),
        ("http://example.com:8080/catalog/page1.php", False),
        ("http://www.example.com/catalog/page1.php", False),
        ("http://example.com/catalogue/page1.php", False),
        ("http://example.com/catalog", False),
        ("http://EXAMPLE.com:80/catalog/./x#frag", True),
        ("not a url", False),
    ],
)
def test_case_43_location_rule(url: str, expected: bool) -> None:
    """Case 43: same scheme, host and port, and the path under the sitemap's directory."""
    assert in_location(url, CATALOG) is expected


def test_case_44_query_with_slashes_ignored() -> None:
    """Case 44: a sitemap URL's query (with slashes) does not move its directory."""
    sitemap = "https://example.com/index.php?route=path/sitemap"
    assert in_location("https://example.com/catalog/page1.php", sitemap)
    assert not in_location("http://example.com/catalog/page1.php", sitemap)


def test_case_45_root_url_outside_subsection() -> None:
    """Case 45: a sitemap in /subsection/ may not list the site root."""
    assert not in_location(
        "http://www.example.com/", "http://www.example.com/subsection/sitemap.xml"
    )


def test_location_with_unusable_sitemap_url() -> None:
    """An unusable sitemap URL vouches for nothing."""
    assert not in_location("https://example.com/a", "relative/sitemap.xml")


def test_case_46_cross_submit() -> None:
    """Case 46: blog.example.com URLs are kept once blog's robots.txt lists the sitemap."""
    scope = Scope("site", ["www.example.com"])
    url = "https://blog.example.com/post/1"
    assert scope.allows(url, "https://www.example.com/sitemap.xml")  # subdomain of the twin
    other = Scope("site", ["www.otherdomain.com"])
    assert not other.allows(url, None)
    other.add_host("blog.example.com")
    assert other.allows(url, None)
    assert other.allows("https://www.blog.example.com/x", None)
    assert not other.allows("https://example.com/x", None)


def test_case_46_private_suffix_siblings() -> None:
    """Case 46: this.github.io does not cover that.github.io; example.com covers subdomains."""
    scope = Scope("site", ["this.github.io"])
    assert scope.allows("https://this.github.io/a", None)
    assert scope.allows("https://www.this.github.io/a", None)
    assert not scope.allows("https://that.github.io/a", None)
    assert not scope.allows("https://github.io/a", None)
    site = Scope("site", ["example.com"])
    assert site.allows("https://a.b.example.com/", None)
    assert not site.allows("https://notexample.com/", None)
    assert not site.allows("https://example.com.evil.org/", None)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/", True),
        ("http://WWW.EXAMPLE.COM:8080/x", True),
        ("https://user@shop.example.com/", True),
        ("https://example.org/", False),
        ("mailto:x@example.com", False),
    ],
)
def test_site_mode_twins_ports_case(url: str, expected: bool) -> None:
    """Site mode: www twin, subdomains, any port, any case; other hosts are out."""
    assert (
        Scope("site", ["Example.COM:443"]).allows(url, "https://example.com/sitemap.xml")
        is expected
    )


def test_host_mode() -> None:
    """Host mode: only the sitemap's own host (port ignored); no sitemap URL allows all."""
    scope = Scope("host", ["example.com"])
    sitemap = "https://www.example.com/sitemap.xml"
    assert scope.allows("http://www.example.com:8080/a", sitemap)
    assert not scope.allows("https://example.com/a", sitemap)
    assert not scope.allows("https://blog.www.example.com/a", sitemap)
    assert scope.allows("https://anything.org/a", None)


def test_any_mode() -> None:
    """Any mode allows everything."""
    assert Scope("any", []).allows("https://anything.org/", "https://example.com/s.xml")


def test_site_mode_without_targets_uses_sitemap_host() -> None:
    """Site mode with no target host (local input) falls back to the sitemap's host."""
    scope = Scope("site", [])
    assert scope.allows("https://example.com/a", "https://example.com/s.xml")
    assert not scope.allows("https://other.com/a", "https://example.com/s.xml")
    assert scope.allows("https://other.com/a", None)


def test_unknown_mode() -> None:
    """An unknown mode is a usage error."""
    with pytest.raises(UsageError):
        Scope("planet", [])


def test_cache_is_bounded_and_invalidated() -> None:
    """The per-host cache stays bounded, and add_host invalidates earlier answers."""
    scope = Scope("site", ["example.com"])
    for i in range(10_000):
        scope.allows(f"https://h{i}.other.org/", None)
    assert len(scope._cache) <= 4096
    assert not scope.allows("https://cross.net/", None)
    scope.add_host("cross.net")
    assert scope.allows("https://cross.net/", None)
    assert "www.cross.net" in scope.hosts


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://User:pw@WWW.Example.com:8080/x?y#z", "www.example.com"),
        ("https://[::1]:8080/x", "[::1]"),
        ("https://example.com./", "example.com"),
        ("https://example.com?x", "example.com"),
        ("no-slashes", None),
        ("https:///path", None),
    ],
)
def test_host_of(url: str, host: str | None) -> None:
    """host_of strips userinfo, port, trailing dot and case."""
    assert host_of(url) == host


@given(st.text(max_size=40), st.sampled_from(["site", "host", "any"]))
def test_allows_never_raises(url: str, mode: str) -> None:
    """Arbitrary strings give a bool, never an exception."""
    assert Scope(mode, ["example.com"]).allows(url, "https://example.com/s.xml") in (True, False)
    assert in_location(url, CATALOG) in (True, False)


@pytest.mark.parametrize(
    ("target", "url", "expected"),
    [
        ("www.github.io", "https://alice.github.io/", False),  # its bare twin is a suffix
        ("www.github.io", "https://www.github.io/x", True),
        ("github.io", "https://alice.github.io/", False),  # a typed suffix keeps itself
        ("github.io", "https://github.io/x", True),
        ("www.co.uk", "https://example.co.uk/", False),
        ("www.example.co.uk", "https://shop.example.co.uk/", True),  # a site's own twin
    ],
)
def test_site_mode_never_admits_a_public_suffixs_subdomains(
    target: str, url: str, expected: bool
) -> None:
    """site: a public suffix (the bundled Public Suffix List) is never a twin and admits
    no subdomains; before, www.github.io's twin github.io admitted every *.github.io site
    (and the user's headers, which go where this scope goes, followed)."""
    assert Scope("site", [target]).allows(url, None) is expected
