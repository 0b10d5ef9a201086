"""sitemap_reader.scrapy: real Scrapy crawls (subprocess, asyncio reactor) of a local site.

The site (tests/scrapy/testsite.py) runs in a thread of the test process; each crawl runs
tests/scrapy/runner.py with one request at a time and writes one JSON line per page.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from scrapy.settings import Settings

from sitemap_reader import demo
from sitemap_reader.errors import install_line
from sitemap_reader.scrapy import (
    MIDDLEWARE_ORDER,
    Addon,
    SitemapStartMiddleware,
    options_from_settings,
    priority_of,
)
from sitemap_reader.scrapy.settings import spider_overrides
from tests.scrapy.testsite import (
    ALTERNATE_PATHS,
    EXPECTED_PATHS,
    HITS,
    HOSTILE,
    TEAMS,
    ServerThread,
    make_app,
)

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).with_name("runner.py")


@dataclass(frozen=True)
class Crawl:
    """What one crawl left: the page lines in callback order, and its log."""

    base: str
    pages: list[dict[str, Any]]
    log: str

    @property
    def paths(self) -> list[str]:
        """The page paths in request order."""
        return [page["url"].removeprefix(self.base) for page in self.pages]


def run_crawl(mode: str, base: str, out: Path, *options: str) -> Crawl:
    """Run runner.py in a subprocess; fail on a non-zero exit; read the page lines."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(RUNNER), mode, base, str(out), *options]
    done = subprocess.run(command, env=env, cwd=out.parent, capture_output=True, timeout=60)
    log = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, log[-3000:]
    lines = out.read_text("utf-8").splitlines() if out.exists() else []
    return Crawl(base, [json.loads(line) for line in lines], log)


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """The test site with its robots.txt, served from a thread."""
    with ServerThread(make_app()) as origin:
        yield origin


@pytest.fixture(scope="module")
def mixin(base: str, tmp_path_factory: pytest.TempPathFactory) -> Crawl:
    """One crawl by a SitemapReaderMixin spider, shared by the tests that only read it."""
    return run_crawl("mixin", base, tmp_path_factory.mktemp("mixin") / "pages.jsonl")


def test_mixin_requests_every_page_once(mixin: Crawl) -> None:
    """Every in-scope page of every sitemap is requested exactly once (dupes across sitemaps)."""
    counts = Counter(mixin.paths)
    assert set(counts) == EXPECTED_PATHS
    assert set(counts.values()) == {1}
    assert "'finish_reason': 'finished'" in mixin.log


def test_callbacks_receive_the_record_in_meta(mixin: Crawl) -> None:
    """meta["sitemap_reader"] holds the record dict; the priority comes from its score."""
    for page in mixin.pages:
        record = page["meta"]
        assert record["url"] == page["url"]
        assert list(record)[:6] == ["url", "lastmod", "changefreq", "priority", "score", "sitemap"]
        assert record["sitemap"].startswith(mixin.base + "/")
        assert abs(page["priority"] - record["score"] * 1000) <= 1
    pages = {p["url"].removeprefix(mixin.base): p["meta"] for p in mixin.pages}
    assert pages["/p/a"]["priority"] == 1.0
    assert pages["/p/a"]["alternates"] == [{"hreflang": "de", "url": mixin.base + "/de/p/a"}]


def test_pages_found_in_sitemaps_start_at_depth_zero(mixin: Crawl) -> None:
    """Sitemap hops do not count as depth: DEPTH_LIMIT applies from each page on."""
    assert {page["depth"] for page in mixin.pages} == {0}
    assert any(page["meta"]["sitemap"].endswith("/news.xml") for page in mixin.pages)


def test_higher_scores_are_requested_first(mixin: Crawl) -> None:
    """With one request at a time, pages are requested in non-increasing score order."""
    priorities = [page["priority"] for page in mixin.pages]
    assert len(set(priorities)) >= 8
    assert priorities == sorted(priorities, reverse=True)


def test_hostile_children_log_a_problem_and_the_crawl_goes_on(mixin: Crawl) -> None:
    """Broken, bomb, XXE, oversize and missing children each log a problem; siblings go on."""
    for path, text in HOSTILE.items():
        assert text in mixin.log, path
    assert {"/b/1", "/b/2"} <= set(mixin.paths)  # the broken child's entries before the cut
    assert "/n/2" in mixin.paths  # a sibling listed after the hostile ones in the index
    assert "Traceback" not in mixin.log


def test_download_maxsize_drops_a_bigger_child(mixin: Crawl) -> None:
    """A child over DOWNLOAD_MAXSIZE is cancelled by Scrapy and none of its pages is crawled."""
    assert "larger than download max size (262144)" in mixin.log
    assert "/big/1" not in mixin.paths
    assert "decompressed size exceeds 262144 bytes" in mixin.log  # the bomb's cap follows it


def test_scope_drops_the_foreign_host(mixin: Crawl) -> None:
    """A URL on another host, listed by the site's sitemap, is not requested."""
    assert not any("partner.example.net" in page["url"] for page in mixin.pages)
    assert "'sitemap_reader/urls_out_of_scope': 1" in mixin.log


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["mixin", "middleware"])
def test_jobdir_interrupted_after_pages_resumes_without_loss(
    mode: str, base: str, tmp_path: Path
) -> None:
    """A JOBDIR crawl stopped after 5 pages and resumed requests each page exactly once."""
    out, job = tmp_path / "pages.jsonl", str(tmp_path / "job")
    first = run_crawl(mode, base, out, "--jobdir", job, "--stop-after", "5")
    assert len(first.pages) == 5
    assert "'finish_reason': 'paused'" in first.log
    second = run_crawl(mode, base, out, "--jobdir", job)
    counts = Counter(second.paths)
    assert set(counts) == EXPECTED_PATHS
    assert set(counts.values()) == {1}


@pytest.mark.slow
def test_jobdir_interrupted_during_discovery_resumes_the_sitemaps(
    base: str, tmp_path: Path
) -> None:
    """A JOBDIR crawl stopped among the sitemaps resumes them (spider-method callbacks)."""
    out, job = tmp_path / "pages.jsonl", str(tmp_path / "job")
    first = run_crawl("mixin", base, out, "--jobdir", job, "--pagecount", "4")
    assert "'finish_reason': 'closespider_pagecount'" in first.log
    assert len(first.pages) < len(EXPECTED_PATHS)
    second = run_crawl("mixin", base, out, "--jobdir", job)
    for crawl in (first, second):
        assert "Unable to serialize" not in crawl.log
        assert "unserializable" not in crawl.log
    counts = Counter(second.paths)
    assert set(counts) == EXPECTED_PATHS
    assert set(counts.values()) == {1}


@pytest.mark.parametrize("mode", ["middleware", "addon"])
def test_middleware_and_addon_crawl_the_same_set(
    mode: str, base: str, mixin: Crawl, tmp_path: Path
) -> None:
    """A plain spider with the start middleware (or the add-on) crawls what the mixin does."""
    crawl = run_crawl(mode, base, tmp_path / "pages.jsonl")
    counts = Counter(crawl.paths)
    assert set(counts) == set(mixin.paths)
    assert set(counts.values()) == {1}
    assert all(page["meta"]["url"] == page["url"] for page in crawl.pages)
    for text in HOSTILE.values():
        assert text in crawl.log


def test_alternates_are_crawled_when_asked(base: str, tmp_path: Path) -> None:
    """With alternates on, hreflang alternates in scope are requested too, once each."""
    crawl = run_crawl("mixin", base, tmp_path / "pages.jsonl", "--alternates")
    counts = Counter(crawl.paths)
    assert set(counts) == EXPECTED_PATHS | ALTERNATE_PATHS
    assert set(counts.values()) == {1}


def test_without_robots_txt_the_well_known_paths_are_found(tmp_path: Path) -> None:
    """A 404 robots.txt: /sitemap_index.xml and /sitemap.txt are probed and crawled."""
    with ServerThread(make_app(robots=False)) as origin:
        crawl = run_crawl("mixin", origin, tmp_path / "pages.jsonl")
    assert set(crawl.paths) == EXPECTED_PATHS
    assert "trying well-known paths" in crawl.log
    assert "not-a-sitemap" not in crawl.log  # HTML at the other well-known paths is quiet


def test_max_depth_bounds_the_index_nesting(base: str, tmp_path: Path) -> None:
    """With max depth 0 the robots.txt sitemaps are read, their children are not."""
    setting = "SITEMAP_READER_MAX_DEPTH=0"
    crawl = run_crawl("mixin", base, tmp_path / "pages.jsonl", "--set", setting)
    assert set(crawl.paths) == {"/t/1", "/t/2", "/p/c"}
    assert "pages.xml.gz: deeper than max_depth=0" in crawl.log


@pytest.mark.parametrize("mode", ["mixin", "middleware", "addon"])
def test_follow_filters_only_index_children(mode: str, base: str, tmp_path: Path) -> None:
    """SITEMAP_READER_FOLLOW has sitemap_follow's meaning: the sitemaps robots.txt lists
    (the index and sitemap.txt) are always read; only the index's children are filtered."""
    setting = 'SITEMAP_READER_FOLLOW=["/pages"]'
    crawl = run_crawl(mode, base, tmp_path / "pages.jsonl", "--set", setting)
    pages = {"/p/a", "/p/b", "/p/c", "/p/d", "/p/e", "/p/f"}
    assert set(crawl.paths) == pages | {"/t/1", "/t/2"}
    assert "HTTP 404" not in crawl.log  # missing.xml was never requested
    assert "not matched by follow" in crawl.log


@pytest.mark.parametrize("mode", ["mixin", "addon"])
def test_every_walk_option_is_a_setting(mode: str, base: str, tmp_path: Path) -> None:
    """Options Scrapy could not set before are settings with the reader's meaning:
    SITEMAP_READER_READ_DEPTH=0 lists the index's children unread (only sitemap.txt's
    pages come), SITEMAP_READER_SINCE keeps the undated pages."""
    since = 'SITEMAP_READER_SINCE="2026-01-01"'
    options = ("--set", "SITEMAP_READER_READ_DEPTH=0", "--set", since)
    crawl = run_crawl(mode, base, tmp_path / "pages.jsonl", *options)
    assert set(crawl.paths) == {"/t/1", "/t/2", "/p/c"}
    assert "HTTP 404" not in crawl.log  # no child of the index was requested


def test_robots_txt_fetched_once_with_robotstxt_obey(tmp_path: Path) -> None:
    """ROBOTSTXT_OBEY on: Scrapy's RobotsTxtMiddleware and discovery share one download
    of robots.txt (mixin and add-on), and the crawl is the same."""
    for mode in ("mixin", "addon"):
        app = make_app()
        with ServerThread(app) as origin:
            crawl = run_crawl(
                mode, origin, tmp_path / f"{mode}.jsonl", "--set", "ROBOTSTXT_OBEY=true"
            )
        assert app[HITS]["/robots.txt"] == 1, mode
        assert set(crawl.paths) == EXPECTED_PATHS, mode
        assert "'robotstxt/request_count': 1" in crawl.log
        assert "'sitemap_reader/robots_shared': 1" in crawl.log


#: A default ``scrapy startproject`` project's settings (DOWNLOAD_DELAY=1 there; 0 here so
#: the test is quick: the order does not depend on it), over the runner's own.
DEFAULT_PROJECT = (
    "ROBOTSTXT_OBEY=true", "CONCURRENT_REQUESTS_PER_DOMAIN=1", "CONCURRENT_REQUESTS=16",
    "SCRAPER_SLOT_MAX_ACTIVE_SIZE=5000000", 'FEED_EXPORT_ENCODING="utf-8"',
)  # fmt: skip


def test_addon_in_a_default_project_sends_pages_best_first(base: str, tmp_path: Path) -> None:
    """In a default startproject project, the add-on sends pages best first (it reads every
    sitemap first, then yields its pages by priority): the best first, hardly any out of order."""
    options = [item for pair in DEFAULT_PROJECT for item in ("--set", pair)]
    crawl = run_crawl("addon", base, tmp_path / "pages.jsonl", *options)
    assert set(crawl.paths) == EXPECTED_PATHS
    priorities = [page["priority"] for page in crawl.pages]
    assert len(set(priorities)) >= 8
    assert priorities[0] == max(priorities)
    # The add-on yields its pages sorted; Scrapy's engine pulls start requests while the
    # first downloads run, so a page yielded a moment later can overtake one already handed
    # to the downloader: a few inversions at most (discovery order had dozens).
    inversions = sum(a < b for i, a in enumerate(priorities) for b in priorities[i + 1 :])
    assert inversions <= 3, priorities


@pytest.mark.parametrize("mode", ["mixin", "middleware"])
def test_bare_domain_falls_back_to_http(mode: str, base: str, tmp_path: Path) -> None:
    """A bare host:port target tries https first; the failed handshake falls back to http."""
    bare = base.removeprefix("http://")
    crawl = run_crawl(mode, base, tmp_path / "pages.jsonl", "--target", bare)
    assert f"https://{bare}/robots.txt" in crawl.log
    assert "trying http" in crawl.log
    assert set(crawl.paths) == EXPECTED_PATHS


@pytest.mark.parametrize("mode", ["mixin", "middleware"])
def test_a_target_that_gave_nothing_is_an_error_naming_it(
    mode: str, base: str, tmp_path: Path
) -> None:
    """Two targets, one a sitemap URL answering an HTML page: its ERROR line names it, the
    other is crawled whole, and the crawl finishes as "finished"."""
    missing = base + "/nothing/sitemap.xml"
    crawl = run_crawl(mode, base, tmp_path / "pages.jsonl", "--also", missing)
    assert set(crawl.paths) == EXPECTED_PATHS
    errors = [line for line in crawl.log.splitlines() if "] ERROR: " in line]
    assert len(errors) == 1 and f"nothing discovered for {missing}: " in errors[0], errors
    assert crawl.log.rstrip().endswith("runner: finish_reason=finished")
    # Each target's verdict, in the log and the stats (the HTML page is no sitemap; the
    # site's index has hostile children on purpose: partial).
    verdicts = [line.split("] ", 1)[1] for line in crawl.log.splitlines() if "verdict:" in line]
    assert f"INFO: sitemap-reader: verdict: {missing}: broken" in verdicts, verdicts
    assert any(v.startswith("INFO: sitemap-reader: verdict: ") for v in verdicts), verdicts
    assert "'sitemap_reader/verdict/broken': 1" in crawl.log


@pytest.mark.parametrize("mode", ["mixin", "middleware", "addon"])
def test_every_target_gave_nothing_closes_as_failed(mode: str, base: str, tmp_path: Path) -> None:
    """Every target gave nothing: an ERROR line per target, and the finish reason a
    script reads is sitemap_reader_failed (no page requested)."""
    first, second = base + "/nothing/a.xml", base + "/nothing/b.xml"
    crawl = run_crawl(mode, base, tmp_path / "pages.jsonl", "--target", first, "--also", second)
    assert crawl.paths == []
    for target in (first, second):
        assert f"ERROR: sitemap-reader: nothing discovered for {target}: " in crawl.log
    assert "'sitemap_reader/failed_targets': 2" in crawl.log
    assert crawl.log.rstrip().endswith("runner: finish_reason=sitemap_reader_failed")


@pytest.mark.parametrize("mode", ["mixin", "middleware", "addon"])
def test_sitemap_request_hook_makes_each_page_request(mode: str, base: str, tmp_path: Path) -> None:
    """sitemap_request(record): None drops /p/a, an exception costs /p/b only (an error
    line naming it), every other page is the hook's request (its meta reaches the callback)."""
    crawl = run_crawl(mode, base, tmp_path / "pages.jsonl", "--hook")
    assert set(crawl.paths) == EXPECTED_PATHS - {"/p/a", "/p/b"}
    assert all(page["hooked"] is True for page in crawl.pages)
    errors = [line for line in crawl.log.splitlines() if "] ERROR: " in line]
    assert len(errors) == 1, errors
    assert f"sitemap_request failed for {base}/p/b: LookupError: no request" in errors[0]
    assert "'sitemap_reader/urls_dropped_by_hook': 1" in crawl.log
    if mode == "mixin":  # the default request under the hook: the record and priority
        assert all(page["priority"] == priority_of(page["meta"]["score"]) for page in crawl.pages)


@pytest.mark.parametrize("mode", ["mixin", "addon"])
def test_sitemap_only_drops_the_links_of_pages_unless_asked(
    mode: str, base: str, tmp_path: Path
) -> None:
    """Each page yields /extra/plain and /extra/asked (meta sitemap_reader_link): by default
    both are crawled; with SITEMAP_READER_LINKS=false only the asked one is."""
    extra = {"/extra/plain", "/extra/asked"}
    crawl = run_crawl(mode, base, tmp_path / "on.jsonl", "--links")
    assert set(crawl.paths) == EXPECTED_PATHS | extra
    only = ("--links", "--set", "SITEMAP_READER_LINKS=false")
    crawl = run_crawl(mode, base, tmp_path / "off.jsonl", *only)
    assert set(crawl.paths) == EXPECTED_PATHS | {"/extra/asked"}
    dropped = len(EXPECTED_PATHS)  # each page's /extra/plain
    assert f"'sitemap_reader/links_dropped': {dropped}" in crawl.log


@pytest.mark.parametrize("mode", ["mixin", "addon"])
def test_per_target_headers_go_with_that_targets_sitemaps(mode: str, tmp_path: Path) -> None:
    """SITEMAP_READER_PER_TARGET gives the first site's robots.txt and sitemap requests its
    own header; the second site's, and every page request, carry none."""
    first, second = make_app(), make_app()
    with ServerThread(first) as one, ServerThread(second) as two:
        own = json.dumps({one + "/": {"headers": {"X-Team": "first"}}})
        setting = f"SITEMAP_READER_PER_TARGET={own}"
        crawl = run_crawl(
            mode, one, tmp_path / "pages.jsonl", "--also", two + "/", "--set", setting
        )
    assert len(crawl.pages) == 2 * len(EXPECTED_PATHS)

    def teams(app: Any, sitemaps: bool) -> set[str | None]:
        return {
            team
            for (path, team) in app[TEAMS]
            if (path == "/robots.txt" or path.endswith((".xml", ".gz", ".txt"))) == sitemaps
        }

    assert teams(first, sitemaps=True) == {"first"}
    assert teams(first, sitemaps=False) == {None}
    assert teams(second, sitemaps=True) == teams(second, sitemaps=False) == {None}


def test_sitemap_only_without_its_filter_is_refused(base: str, tmp_path: Path) -> None:
    """The start middleware enabled by hand with SITEMAP_READER_LINKS=false but no
    SitemapOnly: the crawl refuses to start, naming the middleware (never a silent no-op)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = ["middleware", base, str(tmp_path / "p.jsonl"), "--set", "SITEMAP_READER_LINKS=false"]
    done = subprocess.run(
        [sys.executable, str(RUNNER), *argv], env=env, capture_output=True, timeout=60
    )
    log = done.stderr.decode("utf-8", "replace")
    assert "needs sitemap_reader.scrapy.middleware.SitemapOnly in SPIDER_MIDDLEWARES" in log
    assert not (tmp_path / "p.jsonl").exists()


def test_sitemap_links_attribute_turns_the_mode_on() -> None:
    """A mixin spider's ``sitemap_links = False`` is the links option, checked."""

    class Spider:
        sitemap_links = False

    assert spider_overrides(Spider()) == {"links": False}


@pytest.mark.parametrize("spider", ["demo", "plain"])
def test_example_project_crawls_the_demo_site(spider: str) -> None:
    """examples/scrapy_project/run.py crawls every page of the demo site, once, in one command."""
    script = ROOT / "examples" / "scrapy_project" / "run.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, str(script), spider]
    done = subprocess.run(command, env=env, capture_output=True, timeout=60)
    log = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, log[-3000:]
    found = re.search(r"demo site running at (http://127\.0\.0\.1:\d+)/", log)
    assert found is not None
    urls = [json.loads(line)["url"] for line in done.stdout.decode().splitlines()]
    assert sorted(urls) == sorted(demo.expected_urls(found.group(1)))
    assert "broken.xml: xml-syntax" in log


def test_import_without_scrapy_names_the_extra() -> None:
    """Importing sitemap_reader.scrapy without Scrapy fails with the extra to install."""
    code = "import sys; sys.modules['scrapy'] = None; import sitemap_reader.scrapy"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=30)
    assert done.returncode != 0
    assert b"MissingExtraError: sitemap_reader.scrapy needs Scrapy" in done.stderr
    assert install_line("scrapy").encode() in done.stderr


def test_addon_enables_the_middleware_under_project_settings() -> None:
    """The add-on adds the middleware at 950 and its defaults lose to project settings."""
    settings = Settings({"SITEMAP_READER_MAX_DEPTH": 3})
    Addon().update_settings(settings)
    assert settings.getdict("SPIDER_MIDDLEWARES")[SitemapStartMiddleware] == MIDDLEWARE_ORDER
    assert settings.getint("SITEMAP_READER_MAX_DEPTH") == 3
    assert settings.get("SITEMAP_READER_CALLBACK") == "parse"


def test_options_read_the_settings() -> None:
    """SITEMAP_READER_* settings become Options; a target string splits on commas."""
    settings = Settings(
        {
            "SITEMAP_READER_TARGETS": "a.example, https://b.example/sitemap.xml",
            "SITEMAP_READER_FOLLOW": [r"/products"],
            "SITEMAP_READER_MAX_SITEMAPS": 5,
            "DOWNLOAD_MAXSIZE": 1024,
        }
    )
    options, scrapy = options_from_settings(settings)
    assert scrapy.targets == ("a.example", "https://b.example/sitemap.xml")
    follow = options.walk.follow
    assert isinstance(follow, tuple) and [p.pattern for p in follow] == ["/products"]
    assert options.limits.max_sitemaps == 5
    assert options.limits.max_depth == 8
    assert options.walk.scope == "site"
