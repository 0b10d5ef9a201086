"""The option groups of a run, by concern, and :class:`Options`, the whole of them."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, TypeVar

from sitemap_reader._safe_text import masked
from sitemap_reader._version import __version__
from sitemap_reader.errors import UsageError
from sitemap_reader.options.declare import (
    Declared,
    FollowRule,
    OptionError,
    PrivateSetting,
    boolean,
    callable_or_none,
    choice,
    convert_value,
    count,
    file_path,
    follow_rule,
    header_pairs,
    html_mode,
    moment,
    name_or_function,
    option,
    patterns,
    private_policy,
    proxy_url,
    redis_url,
    seconds,
    spec_of,
    text_line,
    url_paths,
)
from sitemap_reader.options.limits import LOADER_BUFFER, LOADER_MAX_TRIES, Limits

if TYPE_CHECKING:
    from sitemap_reader.records.scoring import ScoreFunc

from sitemap_reader.options.keywords import make_group, split

G = TypeVar("G")
#: ``per_target``: each target (as given) with its own option values, by flat name.
PerTarget = tuple[tuple[str, tuple[tuple[str, object], ...]], ...]

#: Where the project lives (the User-Agent names it).
PROJECT_URL: Final = "https://github.com/sitemap-reader/sitemap-reader"


def default_user_agent() -> str:
    """``sitemap-reader/<version> (+<project url>)``."""
    return f"sitemap-reader/{__version__} (+{PROJECT_URL})"


# --------------------------------------------------------------------------- the groups

#: Why some options are not Scrapy settings.
_SCRAPY_PACING = "Scrapy paces itself: DOWNLOAD_DELAY, AutoThrottle"
_SCRAPY_STATE = "a Scrapy crawl resumes with JOBDIR"


@dataclass(frozen=True, slots=True, kw_only=True)
class Walk(Declared):
    """What to read: which sitemaps, which ways into a site, which records."""

    scope: str = option(
        "site",
        "which hosts a sitemap may list: site (the target's host, its www twin, subdomains and "
        "hosts that cross-submit in robots.txt), host (the sitemap's own host), any",
        convert=choice("site", "host", "any"),
        choices=("site", "host", "any"),
        accepts="Literal['site', 'host', 'any']",
        common=True,
    )
    robots: bool = option(True, "read robots.txt for its Sitemap: lines", convert=boolean)
    guess: bool = option(
        True, "probe well-known sitemap paths when robots.txt lists no sitemap", convert=boolean
    )
    guess_paths: tuple[str, ...] | None = option(
        None,
        "the paths probed instead of the well-known ones (/sitemap.xml, /sitemap_index.xml, ...)",
        convert=url_paths,
        metavar="PATH,...",
        flag="--paths",
        accepts="Sequence[str] | None",
    )
    follow: FollowRule = option(
        (),
        "fetch only the child sitemaps of an index matching one of these regexes, or for "
        "which this function of the URL is true (robots.txt's are always read), as Scrapy's "
        "sitemap_follow",
        convert=follow_rule,
        metavar="REGEX",
        repeat=True,
        accepts="Sequence[str | re.Pattern[str]] | Callable[[str], bool]",
        common=True,
    )
    read_depth: int | None = option(
        None,
        "read this many levels of index nesting; deeper children are listed as not read",
        convert=count(0, optional=True),
        metavar="N",
    )
    since: datetime | None = option(
        None,
        "leave out records whose lastmod is older than this date (those without one are kept) "
        "and do not fetch index children whose lastmod is older",
        convert=moment,
        metavar="DATE",
        accepts="datetime | date | str | None",
        common=True,
    )
    trust_index_lastmod: bool = option(
        True,
        "trust an index's lastmod of a child: skip children older than since, and, with "
        "state, children whose lastmod did not move",
        convert=boolean,
        flag="--ignore-index-lastmod",
    )
    html: str | None = option(
        None,
        "read HTML sitemap pages: fallback (when no XML or text sitemap is found) or always",
        convert=html_mode,
        choices=("fallback", "always"),
        const="fallback",
        accepts="bool | Literal['fallback', 'always'] | None",
        common=True,
    )
    parent: bool = option(
        False,
        "a subdomain without sitemaps reads its parent domain's, keeping the URLs under it",
        convert=boolean,
    )
    twin: bool = option(
        True,
        "a site whose host gives no sitemap tries its www/bare twin (www.example.com for "
        "example.com, and back) before the HTML fallback",
        convert=boolean,
    )
    follow_urlset_sitemaps: bool = option(
        False,
        "read a urlset <loc> ending in .xml or .xml.gz as a sitemap when its body is one",
        convert=boolean,
    )
    strict: bool = option(
        False, "the protocol to the letter: namespace, 50,000 URLs, location rule", convert=boolean
    )
    score: ScoreFunc | None = option(
        None,
        "replaces the ranking score: (record, now) -> float",
        convert=callable_or_none,
        cli="a Python function",
        scrapy="the spider's sitemap_score attribute",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Politeness(Declared):
    """Who we say we are, and how we treat a site's robots.txt and servers."""

    user_agent: str = option(
        default_user_agent(),
        "the User-Agent sent, and the name robots.txt rules are read for",
        convert=text_line,
        metavar="UA",
        setting="USER_AGENT",
    )
    robots_agent: str | None = option(
        None,
        "the name robots.txt rules are read for, when not the User-Agent's",
        convert=text_line,
        metavar="NAME",
        setting="ROBOTSTXT_USER_AGENT",
    )
    obey_robots: bool = option(
        False,
        'drop the URLs robots.txt disallows for us (each record says robots: "allowed" or '
        '"disallowed" either way)',
        convert=boolean,
        common=True,
    )
    delay: float = option(
        0.0,
        "at least this many seconds between two requests to one host",
        convert=seconds(zero=True),
        metavar="S",
        scrapy=_SCRAPY_PACING,
    )
    crawl_delay: bool = option(
        True,
        "wait the Crawl-delay / Request-rate robots.txt asks for (capped by max_crawl_delay)",
        convert=boolean,
        flag="--ignore-crawl-delay",
        scrapy=_SCRAPY_PACING,
    )
    host_budget: str | None = option(
        None,
        "a Redis URL shared by every process reading the same sites (workers, engine "
        "tasks, runs): one gap per host between them all, Retry-After included",
        convert=redis_url,
        metavar="REDIS_URL",
        scrapy=_SCRAPY_PACING,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeouts(Declared):
    """Time bounds: of the whole run, of one sitemap, of a connection and of a read."""

    deadline: float | None = option(
        None,
        "seconds for the whole run: then reading stops, what was read is kept",
        convert=seconds(optional=True),
        metavar="S",
        common=True,
    )
    timeout: float = option(
        120.0,
        "seconds for one sitemap, request to last byte (per attempt)",
        convert=seconds(),
        metavar="S",
    )
    connect_timeout: float = option(
        10.0,
        "seconds to establish a connection",
        convert=seconds(),
        metavar="S",
        scrapy="Scrapy's DOWNLOAD_TIMEOUT",
    )
    read_timeout: float = option(
        30.0,
        "seconds without a byte arriving before a read gives up",
        convert=seconds(),
        metavar="S",
        scrapy="Scrapy's DOWNLOAD_TIMEOUT",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Parallelism(Declared):
    """How much runs at once."""

    concurrency: int = option(
        16,
        "requests in flight",
        convert=count(1),
        metavar="N",
        scrapy="Scrapy's CONCURRENT_REQUESTS",
        common=True,
    )
    per_host: int = option(
        4,
        "requests in flight to one host (at most concurrency)",
        convert=count(1),
        metavar="N",
        scrapy="Scrapy's CONCURRENT_REQUESTS_PER_DOMAIN",
    )
    processes: int | None = option(
        None,
        "worker processes that parse large sitemaps (0: all in this process; default 0)",
        convert=count(0, optional=True),
        metavar="N",
        scrapy="Scrapy parses in its own process",
    )

    def __post_init__(self) -> None:
        Declared.__post_init__(self)
        if self.per_host > self.concurrency:
            object.__setattr__(self, "per_host", self.concurrency)


@dataclass(frozen=True, slots=True, kw_only=True)
class Network(Declared):
    """What the aiohttp driver sends, with which client, through what, to which addresses."""

    headers: tuple[tuple[str, str], ...] = option(
        (),
        "headers sent with every request to the target's site (cookies: 'Cookie: a=1')",
        convert=header_pairs,
        metavar="'NAME: VALUE'",
        flag="--header",
        repeat=True,
        scrapy="Scrapy's DEFAULT_REQUEST_HEADERS",
        accepts="Mapping[str, str] | Sequence[str | tuple[str, str]]",
        per_target=True,
        common=True,
    )
    header_hosts: str = option(
        "site",
        "where headers go: site (the target's host, its www twin and subdomains) or any host",
        convert=choice("site", "any"),
        choices=("site", "any"),
        scrapy="Scrapy's DEFAULT_REQUEST_HEADERS",
        accepts="Literal['site', 'any']",
        per_target=True,
    )
    proxy: str | None = option(
        None,
        "send every request through this http:// proxy",
        convert=proxy_url,
        metavar="URL",
        scrapy="Scrapy's HttpProxyMiddleware",
        per_target=True,
    )
    per_target: PerTarget = option(
        (),
        "options of some targets only: {target: {option: value}}, for headers, header_hosts "
        "and proxy (a target's own replace the run's; Scrapy: its robots.txt and sitemap "
        "requests)",
        convert=lambda value: per_target_options(value),
        cli="a mapping of targets: Python and Scrapy only",
        accepts="Mapping[str, Mapping[str, object]]",
    )
    trust_env: bool = option(
        False,
        "take HTTP_PROXY, HTTPS_PROXY, NO_PROXY (and ~/.netrc) from the environment",
        convert=boolean,
        scrapy="Scrapy's HttpProxyMiddleware",
    )
    client: str = option(
        "aiohttp",
        "the HTTP client: aiohttp; browser (a browser's TLS and HTTP/2 fingerprint, the "
        "browser extra); auto (aiohttp, then once more with the browser client for a target "
        "bot protection blocked)",
        convert=choice("aiohttp", "browser", "auto"),
        choices=("aiohttp", "browser", "auto"),
        scrapy="Scrapy downloads with its own handlers: DOWNLOAD_HANDLERS (a browser's "
        "fingerprint: scrapy-impersonate's handler)",
        accepts="Literal['aiohttp', 'browser', 'auto']",
    )
    allow_private: PrivateSetting = option(
        False,
        "private and loopback addresses: by default only a target that is one may reach them; "
        "yes: every request may; never: not even the targets",
        convert=private_policy,
        choices=("yes", "never"),
        const="yes",
        accepts="bool | Literal['never'] | None",
    )


def target_fields() -> dict[str, dataclasses.Field[Any]]:
    """The options one target may have a value of its own for (declared ``per_target``)."""
    return {
        item.name: item
        for group in GROUPS.values()
        for item in dataclasses.fields(group)
        if spec_of(item).per_target
    }


def per_target_options(value: object) -> PerTarget:
    """``per_target``: ``{target: {option: value}}`` as frozen pairs, each option one a
    target may have of its own, its value read by that option's converter.

    >>> per_target_options({"a.example": {"proxy": "http://p:3128"}})
    (('a.example', (('proxy', 'http://p:3128'),)),)

    A string is read as JSON (a Scrapy setting given with ``-s``).
    """
    if value is None:
        return ()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:  # its message gives the place, never the text
            raise ValueError(f"expected {{target: {{option: value}}}} as JSON: {exc}") from None
    if isinstance(value, str) or not isinstance(value, Mapping | Iterable):
        raise ValueError(f"expected {{target: {{option: value}}}}, got {masked(value)}")
    items = value.items() if isinstance(value, Mapping) else value
    own = target_fields()
    found: list[tuple[str, tuple[tuple[str, object], ...]]] = []
    for pair in items:
        target, given = pair if isinstance(pair, tuple) and len(pair) == 2 else (pair, None)
        if not isinstance(target, str) or not isinstance(given, Mapping | tuple):
            raise ValueError(f"expected {{target: {{option: value}}}}, got {masked(pair)}")
        values = []
        for name, raw in dict(given).items():
            if name not in own:
                raise ValueError(
                    f"{target}: {name!r} cannot be set per target (only {', '.join(own)})"
                )
            try:
                values.append((name, convert_value(own[name], raw)))
            except OptionError as exc:  # named by the target and its option
                raise ValueError(f"{target}: {name}: {exc.reason}") from None
        found.append((target, tuple(values)))
    return tuple(found)


@dataclass(frozen=True, slots=True, kw_only=True)
class Incremental(Declared):
    """Incremental runs: a state file that remembers what was read."""

    state: str | None = option(
        None,
        "remember the run in this SQLite file; a later run fetches only what changed",
        convert=file_path,
        metavar="FILE",
        scrapy=_SCRAPY_STATE,
        accepts="str | os.PathLike[str] | None",
        common=True,
    )
    changed_only: bool = option(
        False,
        "with state: only URLs that are new or whose lastmod moved forward",
        convert=boolean,
        scrapy=_SCRAPY_STATE,
        common=True,
    )
    removed: bool = option(
        False,
        'with state: also the URLs that left the sitemaps ("removed": true)',
        convert=boolean,
        scrapy=_SCRAPY_STATE,
        common=True,
    )
    state_commit: str = option(
        "sitemap",
        "when the state is saved: after each sitemap, or once when the run ends",
        convert=choice("sitemap", "run"),
        cli="dump saves once, when the run ends",
        scrapy=_SCRAPY_STATE,
        accepts="Literal['sitemap', 'run']",
    )

    def __post_init__(self) -> None:
        Declared.__post_init__(self)
        if self.state is None and (self.changed_only or self.removed):
            raise OptionError("state", "changed_only and removed need a state file")


#: Why the loader's ordering knobs are not Scrapy settings.
_SCRAPY_ORDER = "Scrapy's scheduler orders pages by priority"


@dataclass(frozen=True, slots=True, kw_only=True)
class LoaderOptions(Declared):
    """The knobs of :class:`~sitemap_reader.SitemapLoader` (the Crawlee loader's and a
    Scrapy spider's with a progress file too)."""

    progress: str | None = option(
        None,
        "the progress file (SQLite): what was handed out and acknowledged; None: a temporary "
        "file (Scrapy: the mixin reads sitemaps with the loader, resumable)",
        convert=file_path,
        cli="the loader is Python only",
        accepts="str | os.PathLike[str] | None",
    )
    buffer: int = option(
        LOADER_BUFFER,
        "records that may wait unclaimed (bounds memory and how far reading runs ahead)",
        convert=count(1),
        cli="the loader is Python only",
    )
    best_first: bool = option(
        False,
        "hand out the best-scored of the waiting records first (within each host)",
        convert=boolean,
        cli="the loader is Python only",
        scrapy=_SCRAPY_ORDER,
    )
    order: str | Callable[[bool], Any] = option(
        "sites",
        "which waiting record goes next: sites (round-robin across sites, the registrable "
        "domains, then their hosts), hosts (across hosts), intake (all together), or a "
        "function best_first -> a hand-out policy (delivery.handout.HandOut)",
        convert=name_or_function("sites", "hosts", "intake"),
        cli="the loader is Python only",
        scrapy=_SCRAPY_ORDER,
        accepts='Literal["sites", "hosts", "intake"] | Callable[[bool], Any]',
    )
    max_tries: int = option(
        LOADER_MAX_TRIES,
        "hand-outs of a URL before it is given up",
        convert=count(1),
        cli="the loader is Python only",
    )
    extend: bool = option(
        False,
        "a progress file made for other targets takes these too (else it is refused)",
        convert=boolean,
        cli="the loader is Python only",
    )
    restart: bool = option(
        False,
        "start the progress file afresh: forget what it holds, take these targets",
        convert=boolean,
        cli="the loader is Python only",
    )


#: Why the order of the output is not the loader's or Scrapy's to choose.
_LOADER_ORDER = "the loader hands records out by its own order and best_first options"
_SCRAPY_OUTPUT = "Scrapy's scheduler orders and counts the pages"
#: Seeds: what a 64-bit generator takes.
SEED_MAX: Final = 2**64 - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery(Declared):
    """What happens to the records on their way out: which, how many, in what order.

    The rules between the fields are written here, once, for every door: ``top``
    implies ``ranked``; ``sample`` is an order of its own (not with ``ranked`` or
    ``top``); ``seed`` goes with ``sample``. ``include`` and ``exclude`` are applied by
    the discovery core, so ranked output, a sample and ``max_urls`` all count the
    records they keep. ``max_urls`` is the core's own budget (reading stops) unless the
    output waits for the whole run (ranked, ``top``, ``sample``): then it cuts that
    output.

    >>> Delivery(top=10).ordered, Delivery(max_urls=5).budget, Delivery(top=3, max_urls=5).budget
    (True, 5, None)
    """

    include: tuple[re.Pattern[str], ...] = option(
        (),
        "keep only URLs matching one of these regexes (Python re.search)",
        convert=patterns,
        metavar="REGEX",
        repeat=True,
        accepts="Sequence[str | re.Pattern[str]] | str",
        common=True,
    )
    exclude: tuple[re.Pattern[str], ...] = option(
        (),
        "drop URLs matching one of these regexes (exclude wins over include)",
        convert=patterns,
        metavar="REGEX",
        repeat=True,
        accepts="Sequence[str | re.Pattern[str]] | str",
        common=True,
    )
    max_urls: int | None = option(
        None,
        "records delivered; then reading stops (with ranked, top or sample: the first N of "
        "that order, after the whole run)",
        convert=count(1, optional=True),
        metavar="N",
        common=True,
    )
    ranked: bool = option(
        False,
        "best first (highest score, ties by URL) once the whole run is read; past "
        "max_ranked_in_memory records they wait in a temporary file",
        convert=boolean,
        scrapy=_SCRAPY_OUTPUT,
        loader=_LOADER_ORDER,
        common=True,
    )
    top: int | None = option(
        None,
        "only the N best records, best first (ranked, with memory for N records)",
        convert=count(1, optional=True),
        metavar="N",
        scrapy=_SCRAPY_OUTPUT,
        loader=_LOADER_ORDER,
        common=True,
    )
    sample: int | None = option(
        None,
        "a uniform random sample of N of the distinct URLs, once the whole run is read "
        "(not with ranked or top); past max_ranked_in_memory records they wait in a "
        "temporary file",
        convert=count(1, optional=True),
        metavar="N",
        scrapy=_SCRAPY_OUTPUT,
        loader=_LOADER_ORDER,
        common=True,
    )
    seed: int | None = option(
        None,
        "with sample: one site and one seed give one sample (default: a random seed)",
        convert=count(0, high=SEED_MAX, optional=True),
        metavar="S",
        scrapy=_SCRAPY_OUTPUT,
        loader=_LOADER_ORDER,
    )

    def __post_init__(self) -> None:
        Declared.__post_init__(self)
        if self.sample is not None and (self.ranked or self.top is not None):
            raise OptionError("sample", "a sample has its own order: not with ranked or top")
        if self.seed is not None and self.sample is None:
            raise OptionError("seed", "seed goes with sample")

    @property
    def ordered(self) -> bool:
        """Whether the output waits for the whole run (ranked, top, sample)."""
        return self.ranked or self.top is not None or self.sample is not None

    @property
    def budget(self) -> int | None:
        """The records the core delivers before reading stops (None: no such budget)."""
        return None if self.ordered else self.max_urls

    @property
    def wanted(self) -> bool:
        """Whether a record may be left out on its way (include, exclude)."""
        return bool(self.include or self.exclude)

    def keeps(self, url: str) -> bool:
        """Whether ``url`` passes ``include`` and ``exclude``."""
        if self.include and not any(p.search(url) for p in self.include):
            return False
        return not any(p.search(url) for p in self.exclude)


#: The option groups of a reader run, by their name in :class:`Options`.
GROUPS: Final[dict[str, type]] = {
    "walk": Walk,
    "politeness": Politeness,
    "timeouts": Timeouts,
    "parallelism": Parallelism,
    "network": Network,
    "incremental": Incremental,
    "delivery": Delivery,
    "limits": Limits,
}


#: Every group a front door may take keywords of (the loader's too).
GROUPS_AND_LOADER: Final[dict[str, type]] = {**GROUPS, "loader": LoaderOptions}


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    """Every option of a reader run, by concern: one frozen, picklable value.

    >>> Options.of(deadline=30, scope="host").timeouts.deadline
    30.0
    """

    walk: Walk = field(default_factory=Walk)
    politeness: Politeness = field(default_factory=Politeness)
    timeouts: Timeouts = field(default_factory=Timeouts)
    parallelism: Parallelism = field(default_factory=Parallelism)
    network: Network = field(default_factory=Network)
    incremental: Incremental = field(default_factory=Incremental)
    delivery: Delivery = field(default_factory=Delivery)
    limits: Limits = field(default_factory=Limits)

    def __post_init__(self) -> None:
        walk = self.walk
        if not walk.trust_index_lastmod and walk.since is None and self.incremental.state is None:
            raise OptionError("trust_index_lastmod", "turning it off needs since or state")

    @classmethod
    def of(cls, base: Options | None = None, *, door: str = "Options", **flat: object) -> Options:
        """Options from flat keywords (a field's name, or a group's), over ``base``.

        ``door`` names the front door in errors: ``SitemapLoader: since: expected ...``.
        """
        return options_of(door, base, flat)

    def replace(self, **flat: object) -> Options:
        """A copy with some options changed, by their flat names."""
        return Options.of(self, door="Options.replace", **flat)


def options_of(
    door: str, base: Options | None, flat: Mapping[str, object], own: Iterable[str] = ()
) -> Options:
    """:meth:`Options.of` for a door that takes keywords of its own besides the options
    (``own``: a misspelt name may be nearest to one of them)."""
    if base is not None and not isinstance(base, Options):
        raise UsageError(f"{door}: options must be Options, not {type(base).__name__}")
    parts = {
        name: make_group(door, name, GROUPS[name], getattr(base, name, None), given)
        for name, given in split(door, flat, GROUPS, own).items()
    }
    try:
        if base is None:
            return Options(**parts)
        return dataclasses.replace(base, **parts) if parts else base
    except OptionError as exc:
        raise exc.at(door) from None


def with_group(
    door: str,
    base: Options | None,
    flat: Mapping[str, object],
    extra: tuple[str, type[G]],
    own: Iterable[str] = (),
) -> tuple[Options, G]:
    """A door's flat keywords as the reader's :class:`Options` and its own group ``extra``
    (its name and class: the loader's knobs, a Scrapy crawl's targets)."""
    name, group = extra
    sorted_ = split(door, flat, {**GROUPS, name: group}, own)
    value = make_group(door, name, group, None, sorted_.pop(name, {}))
    rest = {key: given for part in sorted_.values() for key, given in part.items()}
    return options_of(door, base, rest, own), value


def loader_options(
    door: str, base: Options | None, flat: Mapping[str, object], own: Iterable[str] = ()
) -> tuple[Options, LoaderOptions]:
    """A loader's flat keywords (its own and the reader's) as the two values. An option
    the loader lacks (its declaration says why: ``ranked``, ``top``...) is refused when it
    is set to anything but its default."""
    reader, loader = with_group(door, base, flat, ("loader", LoaderOptions), own)
    for group_name in GROUPS:
        group = getattr(reader, group_name)
        for item in dataclasses.fields(group):
            why = spec_of(item).loader
            if why is not True and getattr(group, item.name) != item.default:
                raise OptionError(item.name, f"not at this door ({why})", door)
    return reader, loader
