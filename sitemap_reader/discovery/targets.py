"""What a target string means: a domain, a site, a robots.txt, a sitemap, a file, stdin.

Rules, in order:

1. ``-`` is standard input.
2. A string with ``://`` is a URL (http or https only). Its path decides what it is:
   ``/`` or empty (and no query) is a **site** (robots.txt at its root); a path ending in
   ``/robots.txt`` is a **robots** URL; anything else is a **sitemap** URL.
3. An existing file path is a local **file** (``~`` is the user's home).
4. A string that is written like a path but names no file is refused ("no such file"),
   never read as a host: it starts like one (``/``, ``./``, ``../``, ``~``, a backslash),
   names a directory, is a file name alone (``sitemap.xml``), or goes on past a first
   part that cannot be a host (``sitemaps/missing.xml.gz``: no dot, no port, not
   ``localhost``) or is a directory here.
5. Anything else is a bare domain, optionally with a port and a path (``example.com``,
   ``example.com:8080/sitemap.xml``): read as in rule 2, but tried over https first and
   over http when https cannot connect (``schemes == ("https", "http")``).

The same rule holds at every door: the CLI's commands, the library, the loader.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from yarl import URL

from sitemap_reader._safe_text import printable
from sitemap_reader.errors import UsageError
from sitemap_reader.options import Options
from sitemap_reader.parse.scope import Scope

#: Well-known sitemap locations probed (concurrently) when robots.txt lists no sitemap,
#: in this order in the output: the protocol's example name, Yoast and other index names,
#: gzip and text variants, and WordPress core's own sitemap (5.5+).
WELL_KNOWN_PATHS = (
    "/sitemap.xml",
    "/sitemap_index.xml",
    "/sitemap-index.xml",
    "/sitemap.xml.gz",
    "/sitemap.txt",
    "/wp-sitemap.xml",
)

_FILE_SUFFIXES = (".xml", ".gz", ".txt", ".rss", ".atom")
_PATH_PREFIXES = ("/", "./", "../", "~", ".\\", "..\\")


@dataclass(frozen=True, slots=True)
class Target:
    """A classified target. ``kind`` is site, robots, sitemap, file or stdin.

    For URL kinds ``url`` is the URL to fetch with the first scheme of ``schemes``
    (a bare domain has two); for a file it is the path.
    """

    text: str
    kind: str
    url: str
    schemes: tuple[str, ...] = ()

    @property
    def host(self) -> str | None:
        """The target's host in its ASCII form (None for files and stdin): an IDN typed in
        Unicode or as ``xn--`` is one site, the one its URLs name.

        >>> classify("bücher.example").host, classify("xn--bcher-kva.example").host
        ('xn--bcher-kva.example', 'xn--bcher-kva.example')
        """
        if self.kind in ("file", "stdin"):
            return None
        return URL(self.url).raw_host

    def with_scheme(self, scheme: str) -> str:
        """``url`` over another scheme (for the https -> http fallback)."""
        return str(URL(self.url).with_scheme(scheme))


def classify(text: str) -> Target:
    """Classify one target string (see the module docstring).

    >>> classify("example.com").url, classify("example.com").schemes
    ('https://example.com/robots.txt', ('https', 'http'))
    >>> classify("https://example.com/sitemap.xml").kind
    'sitemap'
    """
    target = text.strip()
    if target == "-":
        return Target(text, "stdin", "-")
    if "://" in target:
        return _from_url(text, _parse(target, text), bare=False)
    path = os.path.expanduser(target)
    if os.path.isfile(path):
        return Target(text, "file", path)
    if os.path.isdir(path):
        raise UsageError(f"no such file: {printable(text)} (it is a directory)")
    if _written_as_path(target):
        raise UsageError(f"no such file: {printable(text)}")
    return _from_url(text, _parse("https://" + target, text), bare=True)


def _written_as_path(target: str) -> bool:
    """Whether a target that is no file is still written as a path (rule 4).

    >>> [_written_as_path(t) for t in ("sitemaps/a.xml.gz", "sitemap.xml", "./a", "~/a")]
    [True, True, True, True]
    >>> [_written_as_path(t) for t in ("example.com/a.xml", "localhost/a", "intranet:81/a")]
    [False, False, False]
    """
    if target.startswith(_PATH_PREFIXES) or "\\" in target:
        return True
    first, slash, _ = target.partition("/")
    if not slash:
        return target.lower().endswith(_FILE_SUFFIXES)
    if os.path.isdir(first):
        return True
    host = first.rpartition("@")[2].lower()
    return "." not in host and ":" not in host and host != "localhost" and not host.startswith("[")


def _parse(candidate: str, text: str) -> URL:
    try:
        url = URL(candidate)
    except ValueError as exc:
        raise UsageError(f"not a URL, a domain or a file: {text!r}") from exc
    if url.scheme not in ("http", "https"):
        raise UsageError(f"only http and https targets are supported: {text!r}")
    host = url.raw_host or ""
    if not host or any(c.isspace() for c in host):
        raise UsageError(f"not a URL, a domain or a file: {text!r}")
    return url.with_fragment(None)


def _from_url(text: str, url: URL, *, bare: bool) -> Target:
    schemes = ("https", "http") if bare else (url.scheme,)
    if url.path in ("", "/") and not url.query_string:
        return Target(text, "site", str(url.with_path("/robots.txt")), schemes)
    if url.path.endswith("/robots.txt"):
        return Target(text, "robots", str(url), schemes)
    return Target(text, "sitemap", str(url), schemes)


def well_known_urls(robots_url: str, paths: tuple[str, ...] | None = None) -> list[str]:
    """``paths`` (default :data:`WELL_KNOWN_PATHS`) on the origin of a robots.txt URL, in
    order. A path may carry a query (``/sitemap.php?page=1``)."""
    origin = URL(robots_url).origin()
    chosen = WELL_KNOWN_PATHS if paths is None else paths
    return [str(origin.join(URL(path))) for path in chosen]


def canonical_spelling(text: str) -> str:
    """The one spelling of a target, by the reader's rule, so one site is one target
    wherever targets are spread (a Redis queue, an engine's partitions): a domain or an
    https site on its default port is ``host[:port]`` (the root's trailing dot dropped);
    any other URL is the reader's normal form of it. Files and standard input are refused.

    >>> spelled = ("Example.COM", "example.com/", "https://example.com:443/", "example.com.")
    >>> [canonical_spelling(t) for t in spelled]
    ['example.com', 'example.com', 'example.com', 'example.com']
    >>> canonical_spelling("HTTP://Example.com/Sitemap.xml")
    'http://example.com/Sitemap.xml'
    """
    target = classify(text)
    if target.kind not in ("site", "robots", "sitemap"):
        raise UsageError(f"not an http(s) URL or a domain: {printable(text)!r}")
    url = URL(target.url)
    host = (url.host or "").rstrip(".")
    if host != (url.host or ""):
        url = url.with_host(host)
    netloc = host if url.is_default_port() else f"{host}:{url.port}"
    bare = target.schemes == ("https", "http") or url.scheme == "https"
    if target.kind == "site":
        return netloc if bare else str(url.with_path("/"))
    if target.schemes == ("https", "http"):  # a domain with a path: keep it a domain
        return netloc + url.raw_path_qs
    return str(url)


def site_scope(host: str | None) -> Scope | None:
    """The site a target's own headers, cookies and proxy stay on: its host (ASCII, as
    :attr:`Target.host` gives it), its www twin and their subdomains, the ``site`` scope
    without the hosts a robots.txt cross-submits (it cannot claim another site's
    credentials). None for a target without a host (a file has no site).

    >>> site = site_scope("example.com")
    >>> site.allows("https://www.example.com/a", None), site.allows("https://evil.test/", None)
    (True, False)
    """
    if not host:
        return None
    scope = Scope("site", [f"[{host}]" if ":" in host else host])
    return scope if scope.hosts else None


def options_for(target: Target, options: Options) -> Options:
    """The options of one target: its ``per_target`` values over the run's (the target
    named by any spelling of it: ``example.com``, ``https://example.com/``...)."""
    for text, values in options.network.per_target:
        if values and classify(text).url == target.url:
            return Options.of(options, door=f"per_target[{text!r}]", **dict(values))
    return options


def check_per_target(targets: Sequence[Target], options: Options) -> None:
    """A ``per_target`` entry that names none of the run's targets is a UsageError (a
    run of several targets: one-target runs of a longer list, as the engines and the
    distributed workers make, each take their own entry and leave the others)."""
    urls = {target.url for target in targets}
    for text, _ in options.network.per_target:
        if classify(text).url not in urls:
            raise UsageError(f"per_target names {text!r}, which is not a target of the run")


def given_targets(door: str, value: object) -> tuple[str, ...]:
    """The targets a door was given: one string, or an iterable of strings (a UsageError
    naming the door otherwise, an empty one too).

    >>> given_targets("SitemapLoader", "example.com")
    ('example.com',)
    """
    items = (value,) if isinstance(value, str) else value
    if isinstance(items, Iterable) and not isinstance(items, bytes | bytearray | Mapping):
        items = tuple(items)
        wrong = [item for item in items if not isinstance(item, str)]
        if not wrong and items:
            return items
        if not wrong:
            raise UsageError(f"{door}: no target given")
        value = wrong[0]
    shown = printable(repr(value)[:80])
    raise UsageError(f"{door}: targets: expected a domain, a URL or a list of them, got {shown}")
