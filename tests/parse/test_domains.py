"""Tests for sitemap_reader.parse.domains: registrable domains from the bundled Public
Suffix List (no download: the list is the package's own file)."""

from __future__ import annotations

import pytest

from sitemap_reader.parse.domains import is_public_suffix, list_version, registrable_domain


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("docs.example.com", "example.com"),
        ("example.co.uk", "example.co.uk"),
        ("www.example.co.uk", "example.co.uk"),
        ("shop.example.com.au", "example.com.au"),
        ("www.alice.github.io", "alice.github.io"),  # the list's private section counts
        ("WWW.Example.COM.", "example.com"),  # case and a final dot
        ("site.example", "site.example"),  # an unknown top-level label is a suffix
        ("co.uk", None),
        ("github.io", None),
        ("com", None),
        ("127.0.0.1", None),
        ("[::1]", None),
        ("", None),
    ],
)
def test_registrable_domain(host: str, domain: str | None) -> None:
    """A host's registrable domain is its public suffix and one label; none for a
    suffix itself or an IP address."""
    assert registrable_domain(host) == domain


def test_public_suffixes() -> None:
    """The list's ICANN and private suffixes are public suffixes; sites under them not."""
    assert all(is_public_suffix(h) for h in ("com", "co.uk", "com.au", "github.io"))
    assert not any(is_public_suffix(h) for h in ("example.com", "alice.github.io", "10.0.0.1"))


def test_list_version_names_the_package_release() -> None:
    """The version ends in the list's date (yyyymmdd), as the package numbers releases."""
    *_, date = list_version().split(".")
    assert len(date) == 8 and date.startswith("20")
