"""sitemap_reader.discovery.targets: what a target string means, and the well-known paths
tried when robots.txt names no sitemap."""

from __future__ import annotations

from pathlib import Path

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


@pytest.mark.parametrize(
    "text",
    ["sitemaps/missing.xml.gz", "feeds/all", "./nope.xml", "~/no-such-sitemap.xml", "a\\b.xml"],
)
def test_a_path_naming_no_file_is_never_a_host(text: str) -> None:
    """A target written as a path that names no file is "no such file" at every door
    (this rule is the one the CLI, the library and the loader read), never a DNS lookup."""
    with pytest.raises(UsageError, match=r"^no such file: "):
        classify(text)


def test_a_directory_here_makes_its_paths_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``shop.example/x.xml`` is a host and a path, unless ``shop.example`` is a directory
    here: then it names a file, and a missing one is refused. A home path is expanded."""
    monkeypatch.chdir(tmp_path)
    assert classify("shop.example/x.xml").kind == "sitemap"
    (tmp_path / "shop.example").mkdir()
    with pytest.raises(UsageError, match=r"no such file: shop\.example/x\.xml$"):
        classify("shop.example/x.xml")
    with pytest.raises(UsageError, match=r"\(it is a directory\)"):
        classify("shop.example")
    (tmp_path / "shop.example" / "x.xml").write_bytes(b"x")
    assert classify("shop.example/x.xml").kind == "file"
    monkeypatch.setenv("HOME", str(tmp_path))
    target = classify("~/shop.example/x.xml")
    assert (target.kind, target.url) == ("file", str(tmp_path / "shop.example" / "x.xml"))


@pytest.mark.parametrize("text", ["localhost/s.xml", "intranet:8080/s.xml", "[::1]/s.xml"])
def test_hosts_without_a_dot_are_still_hosts(text: str) -> None:
    """localhost, a name with a port and an IPv6 literal are hosts, whatever their dots."""
    assert classify(text).kind == "sitemap"


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
