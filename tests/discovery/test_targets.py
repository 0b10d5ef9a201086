"""sitemap_reader.discovery.targets: what a target string means, and the well-known paths
tried when robots.txt names no sitemap."""

from __future__ import annotations

import pytest

from sitemap_reader.crawl import WELL_KNOWN_PATHS
from sitemap_reader.discovery.targets import classify, given_targets, well_known_urls
from sitemap_reader.errors import UsageError


@pytest.mark.parametrize(
    ("text", "kind", "url", "schemes"),
    [
        ("example.com", "site", "https://example.com/robots.txt", ("https", "http")),
        ("example.com:8080", "site", "https://example.com:8080/robots.txt", ("https", "http")),
        ("example.com/news.xml", "sitemap", "https://example.com/news.xml", ("https", "http")),
        ("https://example.com", "site", "https://example.com/robots.txt", ("https",)),
        ("http://example.com/", "site", "http://example.com/robots.txt", ("http",)),
        ("https://example.com/robots.txt", "robots", "https://example.com/robots.txt", ("https",)),
        ("https://example.com/?p=sitemap", "sitemap", "https://example.com/?p=sitemap", ("https",)),
        ("https://example.com/s.xml#x", "sitemap", "https://example.com/s.xml", ("https",)),
        ("-", "stdin", "-", ()),
    ],
)
def test_classify_targets(text: str, kind: str, url: str, schemes: tuple[str, ...]) -> None:
    """Each target form is classified as documented in discovery/targets.py."""
    target = classify(text)
    assert (target.kind, target.url, target.schemes) == (kind, url, schemes)


def test_classify_file_and_errors(tmp_path: object) -> None:
    """An existing path is a file; other schemes, spaces and missing .xml files are errors."""
    from pathlib import Path

    path = Path(str(tmp_path)) / "local.xml"
    path.write_bytes(b"x")
    assert classify(str(path)).kind == "file"
    for bad in ("ftp://example.com/", "missing-file.xml", "exa mple.com", "https:///x"):
        with pytest.raises(UsageError):
            classify(bad)


def test_well_known_paths_fixed_order() -> None:
    """The fallback list is the documented one, on the robots.txt's origin, in order."""
    assert WELL_KNOWN_PATHS[:3] == ("/sitemap.xml", "/sitemap_index.xml", "/sitemap-index.xml")
    urls = well_known_urls("https://www.example.com:8443/robots.txt")
    assert urls[0] == "https://www.example.com:8443/sitemap.xml" and len(urls) == 6


def test_given_targets_are_text() -> None:
    """One string or an iterable of strings; anything else a UsageError naming the door."""
    assert given_targets("door", "a.example") == ("a.example",)
    assert given_targets("door", iter(["a.example", "b.example"])) == ("a.example", "b.example")
    for value, shown in ((None, "None"), ([1], "1"), ({"a": 1}, "{'a': 1}"), (b"a", "b'a'")):
        with pytest.raises(UsageError) as caught:
            given_targets("door", value)
        assert str(caught.value) == (
            f"door: targets: expected a domain, a URL or a list of them, got {shown}"
        )
    with pytest.raises(UsageError, match=r"^door: no target given$"):
        given_targets("door", [])
