"""The public API, pinned: the names each front door exports and their signatures.

A change of the public API (a name added, removed or renamed, a parameter, a default, an
annotation, a public method or property) fails here until the tables below say so: the
change is then made on purpose, in plain sight of the review. Signatures are compared as
text, one parameter a line, with annotations as written in the source.

``sitemap_reader`` is pinned whole: ``__all__``, the signature of every callable (a class's
constructor), the public methods and properties of every class, the bases of every
exception, and the keywords behind ``**flat``. The integrations are pinned by the names
they export; the engines on PySpark and Ray, which ``make test`` does not install, by
their source (``__all__`` and ``discover``, read with :mod:`ast`).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from typing import Any

import pytest

import sitemap_reader as sr
from sitemap_reader.options import _keywords

PACKAGE = Path(sr.__file__).resolve().parent

#: Dunder methods that are API (the protocols a user's code relies on).
PROTOCOLS = frozenset(
    {"__aenter__", "__aexit__", "__aiter__", "__anext__", "__call__", "__enter__", "__exit__"}
    | {"__iter__", "__len__", "__next__"}
)

Signature = tuple[str, ...]


class _Written:
    """An annotation shown as written in the source (``from __future__ import annotations``
    keeps them as strings; inspect would quote them)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _as_written(annotation: Any) -> Any:
    return _Written(annotation) if isinstance(annotation, str) else annotation


def signature_of(obj: Any) -> Signature:
    """One entry a parameter (``/`` and ``*`` markers included), then ``-> RETURN``."""
    sig = inspect.signature(obj)
    entries: list[str] = []
    kinds = inspect.Parameter
    params = list(sig.parameters.values())
    for i, param in enumerate(params):
        if param.kind is kinds.KEYWORD_ONLY and not any(
            p.kind in (kinds.KEYWORD_ONLY, kinds.VAR_POSITIONAL) for p in params[:i]
        ):
            entries.append("*")
        entries.append(str(param.replace(annotation=_as_written(param.annotation))))
        following = params[i + 1].kind if i + 1 < len(params) else None
        if param.kind is kinds.POSITIONAL_ONLY and following is not kinds.POSITIONAL_ONLY:
            entries.append("/")
    if sig.return_annotation is not inspect.Signature.empty:
        entries.append(f"-> {_as_written(sig.return_annotation)!r}")
    return tuple(entries)


def source_signature(node: ast.FunctionDef) -> Signature:
    """:func:`signature_of` read from the source, for a module that cannot be imported (a
    default is shown as written: a literal as inspect shows it, a name as the name)."""
    args = node.args

    def one(arg: ast.arg, default: ast.expr | None, prefix: str = "") -> str:
        text = prefix + arg.arg
        if arg.annotation is not None:
            text += f": {ast.unparse(arg.annotation)}"
        if default is not None:
            text += f" = {ast.unparse(default)}" if arg.annotation else f"={ast.unparse(default)}"
        return text

    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
    entries = [one(a, d) for a, d in zip(positional, [*defaults, *args.defaults], strict=True)]
    if args.posonlyargs:
        entries.insert(len(args.posonlyargs), "/")
    if args.vararg is not None:
        entries.append(one(args.vararg, None, "*"))
    elif args.kwonlyargs:
        entries.append("*")
    entries += [one(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg is not None:
        entries.append(one(args.kwarg, None, "**"))
    if node.returns is not None:
        entries.append(f"-> {ast.unparse(node.returns)}")
    return tuple(entries)


def members_of(cls: type) -> dict[str, Signature | str]:
    """The public methods (their signatures) and properties of a class of ours."""
    members: dict[str, Signature | str] = {}
    for owner in reversed(cls.__mro__):
        if not owner.__module__.startswith("sitemap_reader"):
            continue
        for name, value in vars(owner).items():
            if name.startswith("_") and name not in PROTOCOLS:
                continue
            if isinstance(value, property):
                members[name] = "property"
            elif isinstance(value, classmethod | staticmethod):
                members[name] = signature_of(getattr(cls, name))
            elif inspect.isfunction(value):
                members[name] = signature_of(value)
    return dict(sorted(members.items()))


# --------------------------------------------------------------------------- the tables

#: ``sitemap_reader.__all__``.
EXPORTS = (
    "Alternate", "DataObject", "DiscoveryError", "FetchError", "Image", "Limits", "News",
    "Options", "ParseResult", "Problem", "Run", "SitemapLoader", "SitemapNode",
    "SitemapParser", "SitemapReader", "SitemapReaderError", "SitemapRef", "StateError",
    "Stats", "TvShow", "UrlRecord", "UsageError", "Video", "VideoId", "VideoPrice",
    "__version__", "iter_urls", "parse", "sitemaps_from_robots", "to_dataframe",
    "tree_dataframe",
)  # fmt: skip

#: The exceptions and their bases.
EXCEPTIONS = {
    "DiscoveryError": ("SitemapReaderError",),
    "FetchError": ("SitemapReaderError",),
    "SitemapReaderError": ("Exception",),
    "StateError": ("UsageError",),
    "UsageError": ("SitemapReaderError", "ValueError"),
}

#: The signature of every exported callable (of a class: its constructor).
SIGNATURES: dict[str, Signature] = {
    "Alternate": ("hreflang: str", "url: str", "-> None"),
    "DataObject": (
        "type: str | None = None",
        "id: str | None = None",
        "attributes: tuple[tuple[str, str], ...] = ()",
        "-> None",
    ),
    "Image": (
        "loc: str",
        "title: str | None = None",
        "caption: str | None = None",
        "geo_location: str | None = None",
        "license: str | None = None",
        "-> None",
    ),
    "Limits": (
        "max_decompressed_bytes: int = 67108864",
        "max_gzip_layers: int = 2",
        "max_gzip_members: int = 64",
        "max_urls_per_sitemap: int | None = None",
        "max_url_length: int = 8192",
        "max_text_length: int = 65536",
        "max_extensions_per_url: int = 1000",
        "max_wire_bytes: int | None = None",
        "max_xml_token: int = 65536",
        "max_xml_depth: int = 100",
        "max_xml_names: int = 2000",
        "max_xml_name_chars: int = 65536",
        "max_xml_namespaces: int = 1000",
        "max_robots_bytes: int = 512000",
        "max_robots_redirects: int = 5",
        "max_depth: int = 8",
        "max_sitemaps: int = 10000",
        "max_redirects: int = 10",
        "max_ranked_in_memory: int = 100000",
        "retries: int = 3",
        "body_retries: int = 1",
        "max_host_storm_failures: int = 3",
        "max_retry_after: float = 60.0",
        "backoff_base: float = 0.5",
        "max_crawl_delay: float = 30.0",
        "max_html_bytes: int = 4194304",
        "max_html_links: int = 10000",
        "max_html_depth: int = 2",
        "max_html_pages: int = 200",
        "max_html_token: int = 65536",
        "max_html_held: int = 100000",
        "-> None",
    ),
    "News": (
        "title: str | None = None",
        "publication_name: str | None = None",
        "language: str | None = None",
        "publication_date: datetime | None = None",
        "keywords: tuple[str, ...] = ()",
        "genres: tuple[str, ...] = ()",
        "stock_tickers: tuple[str, ...] = ()",
        "access: str | None = None",
        "-> None",
    ),
    "Options": (
        "*",
        "walk: Walk = <factory>",
        "politeness: Politeness = <factory>",
        "timeouts: Timeouts = <factory>",
        "parallelism: Parallelism = <factory>",
        "network: Network = <factory>",
        "incremental: Incremental = <factory>",
        "delivery: Delivery = <factory>",
        "limits: Limits = <factory>",
        "-> None",
    ),
    "ParseResult": (
        "format: str",
        "urls: list[UrlRecord] = <factory>",
        "sitemaps: list[SitemapRef] = <factory>",
        "problems: list[Problem] = <factory>",
        "complete: bool = True",
        "lastmod: datetime | None = None",
        "-> None",
    ),
    "Problem": ("code: str", "message: str", "count: int = 1", "fatal: bool = False", "-> None"),
    "Run": (
        "targets: tuple[str, ...]",
        "tree: list[SitemapNode] = <factory>",
        "stats: Stats = <factory>",
        "error: str | None = None",
        "failed_targets: dict[str, str] = <factory>",
        "verdicts: dict[str, Verdict] = <factory>",
        "-> None",
    ),
    "SitemapLoader": (
        "targets: str | Sequence[str]",
        "options: Options | None = None",
        "*",
        "session: ClientSession | None = None",
        "resolver: AbstractResolver | None = None",
        "**flat: Unpack[LoaderKeywords]",
        "-> None",
    ),
    "SitemapNode": (
        "url: str",
        "kind: str = 'sitemap'",
        "depth: int = 0",
        "final_url: str | None = None",
        "format: str | None = None",
        "status: int | None = None",
        "bytes: int = 0",
        "urls: int = 0",
        "complete: bool = False",
        "skipped: Skipped | None = None",
        "problems: list[Problem] = <factory>",
        "children: list[SitemapNode] = <factory>",
        "lastmod: datetime | None = None",
        "unchanged: str | None = None",
        "crawl_delay: float | None = None",
        "disallowed: int = 0",
        "last_modified: str | None = None",
        "seconds: float | None = None",
        "block: Block | None = None",
        "-> None",
    ),
    "SitemapParser": (
        "url: str | None = None",
        "content_type: str | None = None",
        "*",
        "strict: bool = False",
        "limits: Limits | None = None",
        "now: datetime | None = None",
        "pagemaps: bool = False",
        "build: RecordBuilder | None = None",
        "-> None",
    ),
    "SitemapReader": (
        "options: Options | None = None",
        "*",
        "session: aiohttp.ClientSession | None = None",
        "resolver: AbstractResolver | None = None",
        "**flat: Unpack[ReaderKeywords]",
        "-> None",
    ),
    "SitemapRef": (
        "url: str",
        "lastmod: datetime | None = None",
        "sitemap: str | None = None",
        "-> None",
    ),
    "Stats": (
        "sitemaps_ok: int = 0",
        "sitemaps_failed: int = 0",
        "sitemaps_skipped: int = 0",
        "sitemaps_queued: int = 0",
        "urls_emitted: int = 0",
        "urls_duplicate: int = 0",
        "urls_out_of_scope: int = 0",
        "bytes: int = 0",
        "sitemaps_unchanged: int = 0",
        "urls_unchanged: int = 0",
        "urls_removed: int = 0",
        "urls_disallowed: int = 0",
        "sitemaps_not_read: int = 0",
        "urls_older: int = 0",
        "sitemaps_older: int = 0",
        "urls_filtered: int = 0",
        "sitemaps_state_lost: int = 0",
        "stopped: Stopped | None = None",
        "started: float = <factory>",
        "finished: float | None = None",
        "-> None",
    ),
    "TvShow": (
        "show_title: str | None = None",
        "video_type: str | None = None",
        "episode_title: str | None = None",
        "season_number: int | None = None",
        "episode_number: int | None = None",
        "premier_date: datetime | None = None",
        "-> None",
    ),
    "UrlRecord": (
        "url: str",
        "lastmod: datetime | None = None",
        "changefreq: str | None = None",
        "priority: float | None = None",
        "score: float = 0.0",
        "sitemap: str | None = None",
        "alternates: tuple[Alternate, ...] = ()",
        "images: tuple[Image, ...] = ()",
        "videos: tuple[Video, ...] = ()",
        "news: News | None = None",
        "revisit: float | None = None",
        "removed: bool = False",
        "title: str | None = None",
        "mobile: bool = False",
        "pagemaps: tuple[DataObject, ...] = ()",
        "robots: str | None = None",
        "source: str | None = None",
        "-> None",
    ),
    "Video": (
        "title: str | None = None",
        "description: str | None = None",
        "thumbnail_loc: str | None = None",
        "content_loc: str | None = None",
        "player_loc: str | None = None",
        "duration: int | None = None",
        "expiration_date: datetime | None = None",
        "rating: float | None = None",
        "view_count: int | None = None",
        "publication_date: datetime | None = None",
        "family_friendly: bool | None = None",
        "requires_subscription: bool | None = None",
        "live: bool | None = None",
        "uploader: str | None = None",
        "restriction: tuple[str, ...] = ()",
        "restriction_relationship: str | None = None",
        "platform: tuple[str, ...] = ()",
        "platform_relationship: str | None = None",
        "tags: tuple[str, ...] = ()",
        "uploader_info: str | None = None",
        "category: str | None = None",
        "gallery_loc: str | None = None",
        "gallery_title: str | None = None",
        "prices: tuple[VideoPrice, ...] = ()",
        "tvshow: TvShow | None = None",
        "ids: tuple[VideoId, ...] = ()",
        "-> None",
    ),
    "VideoId": ("value: str", "type: str | None = None", "-> None"),
    "VideoPrice": (
        "amount: float | None = None",
        "currency: str | None = None",
        "type: str | None = None",
        "resolution: str | None = None",
        "-> None",
    ),
    "iter_urls": (
        "target: str | Sequence[str]",
        "options: Options | None = None",
        "**flat: Unpack[ReaderKeywords]",
        "-> Generator[UrlRecord, None, None]",
    ),
    "parse": (
        "body: bytes | Iterable[bytes]",
        "url: str | None = None",
        "content_type: str | None = None",
        "*",
        "strict: bool = False",
        "limits: Limits | None = None",
        "pagemaps: bool = False",
        "-> ParseResult",
    ),
    "sitemaps_from_robots": (
        "body: bytes | str",
        "robots_url: str",
        "*",
        "max_bytes: int = 512000",
        "-> list[str]",
    ),
    "to_dataframe": ("records: Iterable[UrlRecord]", "-> Any"),
    "tree_dataframe": ("tree: Run | Iterable[SitemapNode]", "extra: Any = None", "-> Any"),
}

#: The public methods and properties of every exported class (exceptions aside).
MEMBERS: dict[str, dict[str, Signature | str]] = {
    "Alternate": {"to_dict": ("self", "-> JsonDict")},
    "DataObject": {
        "get": ("self", "name: str", "-> str | None"),
        "to_dict": ("self", "-> JsonDict"),
    },
    "Image": {"to_dict": ("self", "-> JsonDict")},
    "Limits": {
        "replace": ("self", "**changes: object", "-> Limits"),
        "wire_cap": ("self", "-> int"),
    },
    "News": {"to_dict": ("self", "-> JsonDict"), "valid": "property"},
    "Options": {
        "of": (
            "base: Options | None = None",
            "*",
            "door: str = 'Options'",
            "**flat: object",
            "-> Options",
        ),
        "replace": ("self", "**flat: object", "-> Options"),
    },
    "ParseResult": {},
    "Problem": {"to_dict": ("self", "-> JsonDict")},
    "Run": {
        "failures": ("self", "-> list[SitemapNode]"),
        "nodes": ("self", "-> Iterator[SitemapNode]"),
        "to_dict": ("self", "-> JsonDict"),
    },
    "SitemapLoader": {
        "__aenter__": ("self", "-> SitemapLoader"),
        "__aexit__": (
            "self",
            "kind: type[BaseException] | None",
            "exc: BaseException | None",
            "tb: TracebackType | None",
            "-> None",
        ),
        "__aiter__": ("self", "-> AsyncIterator[UrlRecord]"),
        "ack": ("self", "url: str", "-> None"),
        "close": ("self", "-> None"),
        "closed": "property",
        "error": "property",
        "fail": ("self", "url: str", "*", "again: bool = True", "-> None"),
        "failed": "property",
        "finished": "property",
        "handled": "property",
        "next": ("self", "-> UrlRecord | None"),
        "open": ("self", "-> SitemapLoader"),
        "opened": "property",
        "pending": "property",
        "queued": "property",
        "reading": "property",
        "ready": "property",
        "run": "property",
        "summary": "property",
        "total_known": "property",
    },
    "SitemapNode": {
        "add_problem": ("self", "code: str", "message: str", "*", "fatal: bool = False", "-> None"),
        "cut_short": "property",
        "failed": "property",
        "fetched": "property",
        "not_read": "property",
        "ok": "property",
        "reason": "property",
        "to_dict": ("self", "-> JsonDict"),
        "walk": ("self", "-> Iterator[SitemapNode]"),
    },
    "SitemapParser": {
        "close": ("self", "-> list[Item]"),
        "feed": ("self", "data: bytes", "-> list[Item]"),
        "format": "property",
        "lastmod": "property",
        "problems": "property",
        "url_count": "property",
    },
    "SitemapReader": {
        "__aenter__": ("self", "-> SitemapReader"),
        "__aexit__": (
            "self",
            "kind: type[BaseException] | None",
            "exc: BaseException | None",
            "tb: TracebackType | None",
            "-> None",
        ),
        "batches": (
            "self",
            "target: str | Sequence[str]",
            "*",
            "observe: Callable[[Observer], Observer] | None = None",
            "**delivery: Unpack[DeliveryKeywords]",
            "-> AsyncGenerator[list[UrlRecord], None]",
        ),
        "limits": "property",
        "pool": "property",
        "stats": "property",
        "tree": (
            "self",
            "target: str | Sequence[str]",
            "*",
            "observer: Observer | None = None",
            "-> Run",
        ),
        "urls": (
            "self",
            "target: str | Sequence[str]",
            "**delivery: Unpack[DeliveryKeywords]",
            "-> AsyncGenerator[UrlRecord, None]",
        ),
    },
    "SitemapRef": {"to_dict": ("self", "-> JsonDict")},
    "Stats": {"seconds": "property", "to_dict": ("self", "-> JsonDict")},
    "TvShow": {"to_dict": ("self", "-> JsonDict")},
    "UrlRecord": {"to_dict": ("self", "-> JsonDict")},
    "Video": {"to_dict": ("self", "-> JsonDict")},
    "VideoId": {"to_dict": ("self", "-> JsonDict")},
    "VideoPrice": {"to_dict": ("self", "-> JsonDict")},
}

#: The keywords ``SitemapReader(**flat)`` and ``iter_urls(**flat)`` take (ReaderKeywords),
#: and the ones ``SitemapLoader(**flat)`` takes besides (LoaderKeywords).
READER_KEYWORDS = (
    "allow_private", "backoff_base", "body_retries", "changed_only", "client", "concurrency",
    "connect_timeout", "crawl_delay", "deadline", "delay", "delivery", "exclude", "follow",
    "follow_urlset_sitemaps", "guess", "guess_paths", "header_hosts", "headers", "host_budget",
    "html", "include", "incremental", "limits", "max_crawl_delay", "max_decompressed_bytes",
    "max_depth", "max_extensions_per_url", "max_gzip_layers", "max_gzip_members",
    "max_host_storm_failures", "max_html_bytes", "max_html_depth", "max_html_held",
    "max_html_links", "max_html_pages", "max_html_token", "max_ranked_in_memory",
    "max_redirects", "max_retry_after", "max_robots_bytes", "max_robots_redirects",
    "max_sitemaps", "max_text_length", "max_url_length", "max_urls", "max_urls_per_sitemap",
    "max_wire_bytes", "max_xml_depth", "max_xml_name_chars", "max_xml_names",
    "max_xml_namespaces", "max_xml_token", "network", "obey_robots", "parallelism", "parent",
    "per_host", "per_target", "politeness", "processes", "proxy", "ranked", "read_depth",
    "read_timeout", "removed", "retries", "robots", "robots_agent", "sample", "scope", "score",
    "seed", "since", "state", "state_commit", "strict", "timeout", "timeouts", "top",
    "trust_env", "trust_index_lastmod", "twin", "user_agent", "walk",
)  # fmt: skip
LOADER_KEYWORDS = (
    "best_first", "buffer", "extend", "loader", "max_tries", "order", "progress", "restart",
)  # fmt: skip

#: ``__all__`` of the integrations, by module.
INTEGRATIONS: dict[str, tuple[str, ...]] = {
    "sitemap_reader.scrapy": (
        "Addon",
        "DEFAULT_SETTINGS",
        "FAILED_REASON",
        "META_KEY",
        "MIDDLEWARE_ORDER",
        "RobotsTxtShare",
        "SITEMAP_META_KEY",
        "ScrapyDriver",
        "ScrapyOptions",
        "SitemapReaderMixin",
        "SitemapStartMiddleware",
        "options_from_settings",
        "priority_of",
    ),
    "sitemap_reader.crawlee": (
        "RECORD_KEY",
        "SitemapRequestLoader",
        "SitemapTandem",
        "Transform",
        "record_of",
    ),
    "sitemap_reader.distributed": (
        "Keys",
        "Output",
        "QueueGone",
        "RedisUnavailable",
        "Status",
        "TargetQueue",
        "TargetRunner",
        "Worker",
        "WorkerLimits",
        "WorkerReport",
        "check_redis_url",
        "output_name",
        "run_discovery",
    ),
    "sitemap_reader.engines.batch": (
        "ChunkReport",
        "SCHEMA",
        "canonical_target",
        "discover_batches",
        "engine_arguments",
        "run_in_chunks",
    ),
}

#: The engines that need PySpark or Ray, read from their source.
ENGINES: dict[str, tuple[tuple[str, ...], dict[str, Signature]]] = {
    "sitemap_reader.engines.ray": (
        ("discover", "write_parquet"),
        {
            "discover": (
                "ds: Dataset",
                "target_col: str = 'target'",
                "*",
                "partitions: int | None = None",
                "**options: Any",
                "-> Dataset",
            ),
            "write_parquet": (
                "ds: Dataset",
                "path: str | os.PathLike[str]",
                "target_col: str = 'target'",
                "*",
                "partitions: int | None = None",
                "**options: Any",
                "-> list[str]",
            ),
        },
    ),
    "sitemap_reader.engines.spark": (
        ("SPARK_SCHEMA", "discover"),
        {
            "discover": (
                "df: DataFrame",
                "target_col: str = 'target'",
                "*",
                "partitions: int | None = None",
                "**options: Any",
                "-> DataFrame",
            )
        },
    ),
}


# --------------------------------------------------------------------------- the tests


def test_the_names_sitemap_reader_exports() -> None:
    """__all__ is the pinned list, and every name in it resolves (the lazy ones too)."""
    assert tuple(sorted(sr.__all__)) == EXPORTS
    for name in sr.__all__:
        assert getattr(sr, name) is not None, name


def test_the_signatures_of_the_exported_callables() -> None:
    """Every exported function and constructor has its pinned signature."""
    exported = {name: getattr(sr, name) for name in sr.__all__}
    callables = {
        name: obj
        for name, obj in exported.items()
        if callable(obj) and not (isinstance(obj, type) and issubclass(obj, BaseException))
    }
    assert {name: signature_of(obj) for name, obj in sorted(callables.items())} == SIGNATURES


def test_the_public_members_of_the_exported_classes() -> None:
    """Every exported class has its pinned public methods and properties (SitemapReader's
    urls, batches and tree; SitemapLoader's next, ack and fail; ...)."""
    classes = {
        name: obj
        for name in sr.__all__
        if isinstance(obj := getattr(sr, name), type) and not issubclass(obj, BaseException)
    }
    assert {name: members_of(cls) for name, cls in sorted(classes.items())} == MEMBERS


def test_the_exception_tree() -> None:
    """Every exported exception has its pinned bases."""
    exceptions = {
        name: obj
        for name in sr.__all__
        if isinstance(obj := getattr(sr, name), type) and issubclass(obj, BaseException)
    }
    got = {name: tuple(b.__name__ for b in cls.__bases__) for name, cls in exceptions.items()}
    assert dict(sorted(got.items())) == EXCEPTIONS


def test_the_keywords_behind_flat() -> None:
    """The flat keywords of SitemapReader, iter_urls and SitemapLoader are the pinned ones."""
    reader = _keywords.ReaderKeywords.__annotations__
    loader = _keywords.LoaderKeywords.__annotations__
    assert tuple(sorted(reader)) == READER_KEYWORDS
    assert tuple(sorted(set(loader) - set(reader))) == LOADER_KEYWORDS


@pytest.mark.parametrize("module", sorted(INTEGRATIONS))
def test_the_names_the_integrations_export(module: str) -> None:
    """Each integration's __all__ is the pinned list (its extra is in the test extra)."""
    extra = {"sitemap_reader.scrapy": "scrapy", "sitemap_reader.crawlee": "crawlee"}
    if module in extra:
        pytest.importorskip(extra[module], reason=f"the {extra[module]} extra is not installed")
    imported = importlib.import_module(module)
    assert tuple(sorted(imported.__all__)) == INTEGRATIONS[module]
    for name in imported.__all__:
        assert hasattr(imported, name), name


@pytest.mark.parametrize("module", sorted(ENGINES))
def test_the_engines_on_pyspark_and_ray_by_their_source(module: str) -> None:
    """engines.spark and engines.ray: __all__ and discover's signature, read from the
    source (make test installs neither PySpark nor Ray)."""
    path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
    body = ast.parse(path.read_text()).body
    (names,) = (
        tuple(sorted(ast.literal_eval(node.value)))
        for node in body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    )
    functions = {
        node.name: source_signature(node)
        for node in body
        if isinstance(node, ast.FunctionDef) and node.name in names
    }
    assert (names, functions) == ENGINES[module]


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("sitemap_reader.parse.parser", "parse"),
        ("sitemap_reader.crawl.sync", "iter_urls"),
    ],
)
def test_the_source_reads_as_inspect_does(module: str, name: str) -> None:
    """The signature read from the source is the one inspect gives for an importable
    function whose defaults are literals (so the engines' pins mean what the others mean)."""
    path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
    (node,) = (
        n
        for n in ast.parse(path.read_text()).body
        if isinstance(n, ast.FunctionDef) and n.name == name
    )
    assert source_signature(node) == signature_of(getattr(importlib.import_module(module), name))
