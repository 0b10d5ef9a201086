"""sitemap_reader.scrapy.spider: a SitemapReaderMixin spider gets its protections (the
address guard, sitemap-only mode) whichever documented way its crawl is started, in real
Scrapy runs (tests/scrapy/ways.py in a subprocess) of the public-named test site of
tests/scrapy/test_addresses.py."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from scrapy.settings import Settings

from sitemap_reader.errors import UsageError
from sitemap_reader.scrapy.spider import protect
from tests.scrapy.test_addresses import SECRETS, site  # noqa: F401  (the fixture)
from tests.scrapy.ways import SETTINGS

ROOT = Path(__file__).resolve().parents[2]
WAYS = Path(__file__).with_name("ways.py")


def _command(way: str, links: str, folder: Path) -> list[str]:
    """How ``way`` starts the spider, run from ``folder``, with sitemap-only mode asked
    for as ``links`` says (the command line's ``-a`` and ``-s`` where there is one)."""
    if way in ("class", "crawler"):
        return [sys.executable, str(WAYS), way]
    asked = {"class": [], "arg": ["-a", "sitemap_links=False"]}
    asked["setting"] = ["-s", "SITEMAP_READER_LINKS=False"]
    if way == "runspider":
        sets = [f"--set={name}={value}" for name, value in SETTINGS.items()]
        return [sys.executable, "-m", "scrapy", "runspider", str(WAYS), *sets, *asked[links]]
    (folder / "scrapy.cfg").write_text("[settings]\ndefault = ways_settings\n")
    lines = [f"{name} = {value!r}" for name, value in SETTINGS.items()]
    lines.append("SPIDER_MODULES = ['tests.scrapy.ways']")
    (folder / "ways_settings.py").write_text("\n".join(lines) + "\n")
    return [sys.executable, "-m", "scrapy", "crawl", "ways", *asked[links]]


@pytest.mark.parametrize("links", ["class", "arg", "setting"])
@pytest.mark.parametrize("way", ["class", "crawler", "runspider", "crawl"])
def test_every_way_of_starting_gets_the_protections(
    way: str,
    links: str,
    site: tuple[str, Counter[str]],  # noqa: F811
    tmp_path: Path,
) -> None:
    """Each documented start, with sitemap-only mode asked for each documented way (the
    class attribute, the spider argument, the setting): the public target's page is
    crawled, none of its children on loopback is fetched (the guard), no page's link is
    followed (sitemap-only), and robots.txt is fetched once though Scrapy obeys it too."""
    port, hits = site
    out = tmp_path / "pages.txt"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)]),
        "WAYS_TARGET": f"http://public.example:{port}/",
        "WAYS_OUT": str(out),
        "WAYS_LINKS": links,
    }
    command = _command(way, links, tmp_path)
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, timeout=60)
    log = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, log[-3000:]
    assert out.read_text().split() == [f"http://public.example:{port}/page"], log[-3000:]
    assert all(hits[path] == 0 for path in SECRETS.values()), hits
    assert hits["/extra"] == 0
    assert hits["/robots.txt"] == 1, hits
    assert "sitemap_reader/links_dropped" in log


def test_frozen_settings_without_the_middlewares_refuse_the_crawl() -> None:
    """Settings frozen before the spider is made, without the middlewares: protect()
    refuses (a UsageError), rather than a crawl that runs unguarded."""
    settings = Settings()
    settings.freeze()
    with pytest.raises(UsageError, match="lack its middlewares"):
        protect(settings)
    protect(Settings())  # mutable settings: the middlewares go in
