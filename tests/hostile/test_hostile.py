"""One test per hostile case: the installed CLI against the hostile site.

Each test runs ``sitemap-reader dump -v`` and ``tree --json`` as real processes (see
:mod:`tests.hostile.cli_kit`) and asserts: the run spends less than the stated CPU time
(and, where a timer is the promise, ends on that timer rather than on another limit),
the child's peak RSS stays under the stated bound, every good sibling's URLs are emitted (once), and
the problem shows on the right node of the tree and in the summary on stderr.

The bounds at work are the defaults of :class:`~sitemap_reader.options.limits.Limits` unless a
flag lowers them (``--timeout 2`` where the case is about time).
"""

from __future__ import annotations

import pytest

from tests.crawl.crawl_kit import start
from tests.hostile import hostile_site as hs
from tests.hostile.cli_kit import HANG, Case, run_case
from tests.hostile.hostile_site import HostileSite, SilentServer

#: Peak RSS bound for a run (the CLI alone is about 40 MiB).
MIB = 100
#: CPU seconds a run may spend on a case that no time limit should end.
QUICK = 10.0
#: The per-sitemap time budget given with --timeout where a case is about time.
TIMEOUT = 2
#: Wall-clock slack over a timer where it is the promise: far under what the other limit
#: would take (the 120 s default timeout, twelve backoff series), so the bound says which
#: limit ended the wait, whatever else the machine is running.
SLACK = 20.0
CAP = "67,108,864"  # Limits.max_decompressed_bytes, as the message prints it


def _summary_has(case: Case, url: str, code: str) -> None:
    """The -v summary names the problem of ``url``."""
    assert f"problem: {url} {code}" in case.dump.err, case.dump.err[-2000:]


def _failed(case: Case, url: str, code: str) -> dict[str, object]:
    """The node of ``url`` failed with ``code`` first; it is in the summary too."""
    node = case.node(url)
    assert not node["ok"] and node["problems"][0]["code"] == code, node["problems"]
    assert f"failed: {url} (" in case.dump.err
    _summary_has(case, url, code)
    return node


async def test_gzip_bomb_of_zeros(hostile: HostileSite) -> None:
    """1 GiB of zeros (1 MB of gzip): refused as binary at the first bytes."""
    target = hs.add_bomb_zeros(hostile)
    case = await run_case(target)
    case.check(seconds=QUICK, mib=MIB, good=hs.good_urls(hostile, "bomb"))
    node = _failed(case, hostile.url("/bomb/zeros.xml.gz"), "not-a-sitemap")
    assert isinstance(node["bytes"], int) and node["bytes"] < 2 * hs.MiB


async def test_gzip_bomb_of_whitespace_stops_at_byte_cap(hostile: HostileSite) -> None:
    """A valid urlset padded with 1 GiB of spaces: cut at 64 MiB decompressed, the URLs
    before the padding kept."""
    target, kept = hs.add_bomb_spaces(hostile)
    case = await run_case(target)
    case.check(seconds=QUICK, mib=MIB, good=[*hs.good_urls(hostile, "spaces"), *kept])
    url = hostile.url("/spaces/bomb.xml.gz")
    _failed(case, url, "limit-bytes")
    assert CAP.replace(",", "") in case.node(url)["problems"][0]["message"]


async def test_gzip_bomb_in_second_layer(hostile: HostileSite) -> None:
    """The bomb inside a second gzip layer (.gz sent with Content-Encoding: gzip)."""
    target, kept = hs.add_bomb_layer2(hostile)
    case = await run_case(target)
    case.check(seconds=QUICK, mib=MIB, good=[*hs.good_urls(hostile, "layer2"), *kept])
    _failed(case, hostile.url("/layer2/bomb.xml.gz"), "limit-bytes")


async def test_gzip_bomb_in_tenth_member(hostile: HostileSite) -> None:
    """Nine honest gzip members, then a bomb: the nine URLs kept, the bomb capped."""
    target, kept = hs.add_bomb_member10(hostile)
    case = await run_case(target)
    case.check(seconds=QUICK, mib=MIB, good=[*hs.good_urls(hostile, "member10"), *kept])
    _failed(case, hostile.url("/member10/bomb.xml.gz"), "limit-bytes")


async def test_endless_body(hostile: HostileSite) -> None:
    """A body that never ends: cut at the 64 MiB body cap (or the timeout, if slower)."""
    target, kept = hs.add_endless(hostile)
    case = await run_case(target, "--timeout", str(TIMEOUT))
    good = [*hs.good_urls(hostile, "endless"), *kept]
    case.check(seconds=QUICK, wall=TIMEOUT + SLACK, mib=MIB, good=good)
    url = hostile.url("/endless/sitemap.xml")
    assert case.codes(url) & {"limit-bytes", "timeout"}
    assert f"failed: {url} (" in case.dump.err


async def test_trickle_1kib_per_second(hostile: HostileSite) -> None:
    """1 KiB per second, forever: ended by --timeout 2; the timeout is the reason given."""
    target, kept = hs.add_trickle(hostile)
    case = await run_case(target, "--timeout", str(TIMEOUT))
    good = [*hs.good_urls(hostile, "trickle"), *kept]
    case.check(seconds=QUICK, wall=TIMEOUT + SLACK, mib=MIB, good=good)
    url = hostile.url("/trickle/sitemap.xml")
    _failed(case, url, "timeout")
    assert f"failed: {url} (no complete answer within {TIMEOUT} s)" in case.dump.err


async def test_server_that_never_answers(hostile: HostileSite, silent: SilentServer) -> None:
    """A server that accepts and never answers: ended by --timeout 2."""
    target = hs.add_silent(hostile, silent)
    case = await run_case(target, "--timeout", str(TIMEOUT))
    case.check(seconds=QUICK, wall=TIMEOUT + SLACK, mib=MIB, good=hs.good_urls(hostile, "silent"))
    _failed(case, silent.url("/sitemap.xml"), "timeout")
    assert silent.accepted >= 2  # both processes connected, neither waited forever


async def test_reset_mid_body_then_success(hostile: HostileSite) -> None:
    """A reset halfway through the body: fetched again, every URL once, the reset noted."""
    target, urls = hs.add_reset_once(hostile)
    case = await run_case(target)
    case.check(seconds=QUICK, mib=MIB, good=[*hs.good_urls(hostile, "reset"), *urls])
    url = hostile.url("/reset/sitemap.xml")
    node = case.node(url)
    assert node["ok"] and node["urls"] == len(urls) and case.codes(url) == {"body-retried"}
    _summary_has(case, url, "body-retried")
    assert hostile.hits["/reset/sitemap.xml"] == 4  # two clients, each cut once


async def test_redirect_loop_and_30_hop_chain(hostile: HostileSite) -> None:
    """A redirect loop fails as a loop; a 30-hop chain fails after 10 redirects."""
    target = hs.add_redirects(hostile)
    case = await run_case(target)
    urls = case.check(seconds=QUICK, mib=MIB, good=hs.good_urls(hostile, "redirect"))
    loop = _failed(case, hostile.url("/redirect/loop-a.xml"), "redirects")
    assert "redirect loop" in str(loop["problems"])
    chain = _failed(case, hostile.url("/redirect/chain-0.xml"), "redirects")
    assert "more than 10 redirects" in str(chain["problems"])
    assert hostile.url("/redirect/end-of-chain") not in urls
    assert hostile.hits["/redirect/chain-11.xml"] == 0


async def test_index_fanout_bomb(hostile: HostileSite) -> None:
    """An index of 50,000 indexes of 1,000: --max-sitemaps 40 bounds the fetches."""
    target = hs.add_fanout(hostile)
    case = await run_case(target, "--max-sitemaps", "40")
    case.check(seconds=QUICK, mib=MIB, good=hs.good_urls(hostile, "fanout"))
    url = hostile.url("/fanout/bomb.xml")
    node = case.node(url)
    limit = [p for p in node["problems"] if p["code"] == "limit-sitemaps"]
    assert limit and limit[0]["count"] > 49_000
    _summary_has(case, url, "limit-sitemaps")
    assert case.run["stats"]["sitemaps_ok"] <= 40
    assert sum(hostile.hits.values()) <= 2 * 40  # two processes, 40 sitemaps each


async def test_index_chain_100_deep(hostile: HostileSite) -> None:
    """An index chain 100 levels deep: followed to max_depth (8), the good urlsets of
    every level within it kept."""
    target = hs.add_deep(hostile)
    case = await run_case(target)
    good = [hostile.url(f"/deep/page-{level}") for level in range(8)]
    urls = case.check(seconds=QUICK, mib=MIB, good=good)
    assert hostile.url("/deep/page-8") not in urls
    url = hostile.url("/deep/level-8.xml")
    assert "limit-depth" in case.codes(url)
    deepest = case.node(hostile.url("/deep/level-9.xml"))
    assert deepest["skipped"]["reason"] == "deeper than max_depth=8"
    _summary_has(case, url, "limit-depth x2")
    assert hostile.hits["/deep/level-10.xml"] == 0


async def test_index_cycle_through_redirects(hostile: HostileSite) -> None:
    """Children that redirect back up the index tree: skipped as already visited."""
    target = hs.add_cycle(hostile)
    case = await run_case(target)
    case.check(seconds=QUICK, mib=MIB, good=hs.good_urls(hostile, "cycle"))
    for child in ("/cycle/b.xml", "/cycle/c.xml"):
        skipped = case.node(hostile.url(child))["skipped"]["reason"]
        assert skipped.startswith("redirects to an already visited sitemap"), skipped
    assert "2 skipped" in case.dump.err
    assert hostile.hits["/cycle/index.xml"] == hostile.hits["/cycle/a.xml"] == 2


async def test_robots_txt_of_20_mb(hostile: HostileSite) -> None:
    """A 20 MB robots.txt: read to 500 KiB, the Sitemap line in it followed, the rest
    (and the Sitemap line at its end) ignored."""
    target, late = hs.add_big_robots(hostile)
    case = await run_case(target)
    urls = case.check(seconds=QUICK, mib=MIB, good=hs.good_urls(hostile, "robots"))
    assert hostile.url("/robots/too-late") not in urls and hostile.hits["/robots/late.xml"] == 0
    assert late not in {node["url"] for node in case.nodes()}
    robots = hostile.url("/robots.txt")
    assert "limit-robots-bytes" in case.codes(robots)
    assert case.node(robots)["bytes"] < 1_000_000
    _summary_has(case, robots, "limit-robots-bytes")


async def test_xxe_billion_laughs_quadratic_blowup(hostile: HostileSite) -> None:
    """XXE (file and http), billion laughs, quadratic blowup: refused, nothing fetched or
    expanded, the honest siblings read."""
    target, kept = hs.add_xml_attacks(hostile)
    case = await run_case(target)
    urls = case.check(seconds=QUICK, mib=MIB, good=[*hs.good_urls(hostile, "xml"), *kept])
    for name in ("xxe-file", "xxe-http", "laughs", "quadratic"):
        _failed(case, hostile.url(f"/xml/{name}.xml"), "xml-entities-forbidden")
    assert hostile.hits["/xml/xxe-probe"] == 0
    assert not any("root:" in u or "lol" in u or "aaaa" in u for u in urls)


async def test_429_with_retry_after_an_hour(hostile: HostileSite) -> None:
    """429 with Retry-After: 3600 (over the 60 s cap): given up at once, not waited for."""
    target = hs.add_rate_limited(hostile)
    case = await run_case(target)
    case.check(seconds=QUICK, mib=MIB, good=hs.good_urls(hostile, "ratelimit"))
    _failed(case, hostile.url("/ratelimit/child.xml"), "retry-after")
    assert hostile.hits["/ratelimit/child.xml"] == 2  # once per process


async def test_503_storm(hostile: HostileSite) -> None:
    """Twelve children answer 503 forever: after three gave up, the host's other
    sitemaps get one attempt each, so the storm costs one backoff series, not twelve."""
    target = hs.add_storm(hostile)
    case = await run_case(target)
    backoff = 0.5 + 1.0 + 2.0  # Limits.retries=3, full jitter on 0.5 s doubling: at most
    case.check(seconds=QUICK, wall=backoff + SLACK, mib=MIB, good=hs.good_urls(hostile, "storm"))
    for n in range(12):
        _failed(case, hostile.url(f"/storm/child-{n}.xml"), "http-status")
    per_process = sum(hostile.hits[f"/storm/child-{n}.xml"] for n in range(12)) / 2
    assert per_process < 12 * 4  # fewer than every child with every retry


async def test_html_soft_404_everywhere(hostile: HostileSite) -> None:
    """Every path answers 200 with an HTML "not found" page: no page link is taken for a
    URL; alone, nothing is discovered (exit 1, one-line reason); next to a good target,
    the good one is read."""
    target = hs.add_soft_404(hostile)
    good_site = HostileSite()
    server = await start(good_site)
    try:
        good = good_site.url(hs.add_good(good_site, "soft"))
        case = await run_case([target, good])
    finally:
        await server.close()
    # The dump's own summary names the sitemap that failed and why: shown if one does.
    assert case.dump.code == 0, case.dump.err[-3000:]
    urls = case.check(seconds=QUICK, mib=MIB, good=hs.good_urls(good_site, "soft"))
    assert not any(u.startswith(hostile.url("/")) for u in urls)
    assert case.tree.code == 1
    assert "robots-html" in case.codes(hostile.url("/robots.txt"))
    assert "none of the 6 well-known paths is a sitemap" in case.tree.err
    probe = hostile.url("/sitemap.xml")
    assert case.node(probe)["skipped"]["reason"] == "not found (an HTML page is not a sitemap)"
    # A probe that finds nothing is not a problem of the site (issue 34 row 12): the tree
    # says why it was skipped, the -v summary does not list it.
    assert f"problem: {probe} " not in case.dump.err, case.dump.err[-2000:]


async def test_100_kb_urls(hostile: HostileSite) -> None:
    """URLs of 100 KB between honest ones: dropped and counted, the honest ones kept."""
    target, kept = hs.add_long_urls(hostile)
    case = await run_case(target)
    urls = case.check(seconds=QUICK, mib=MIB, good=[*hs.good_urls(hostile, "long"), *kept])
    assert max(len(u) for u in urls) < 1000
    url = hostile.url("/long/sitemap.xml")
    assert "text-too-long" in case.codes(url)
    _summary_has(case, url, "text-too-long x2")


@pytest.mark.slow
async def test_million_urls_in_one_file(hostile: HostileSite) -> None:
    """1,000,000 URLs (about 60 MB) in one file: all streamed out in flat memory."""
    target = hs.add_million(hostile)
    case = await run_case(target, "--scope", "any", limit=3 * HANG, dump_flags=["--format", "txt"])
    urls = case.check(
        seconds=30.0,
        mib=150,
        good=[*hs.good_urls(hostile, "million"), hs.million_url(0), hs.million_url(999_999)],
    )
    assert len(urls) == 1_000_003
    node = case.node(hostile.url("/million/sitemap.xml"))
    assert node["ok"] and node["urls"] == 1_000_000
    assert "URLs: 1,000,003 emitted" in case.dump.err


async def test_comment_flood_before_the_root(hostile: HostileSite) -> None:
    """400 comments before <urlset> (found by the structural fuzz: the HTML sniffer's regex
    backtracked exponentially and blocked the event loop, so no timeout could end it)."""
    target, kept = hs.add_comment_flood(hostile)
    case = await run_case(target, "--timeout", str(TIMEOUT))
    case.check(seconds=QUICK, mib=MIB, good=[*hs.good_urls(hostile, "comments"), *kept])
    node = case.node(hostile.url("/comments/sitemap.xml"))
    assert node["ok"] and node["format"] == "urlset" and node["urls"] == len(kept)
    assert "failed:" not in case.dump.err


async def test_invalid_utf8_and_nul_bytes(hostile: HostileSite) -> None:
    """Invalid UTF-8 in one urlset, a NUL in another: each ends there with an XML syntax
    problem; the URLs before the bad byte and the siblings are kept."""
    target, before, after = hs.add_bad_bytes(hostile)
    case = await run_case(target)
    urls = case.check(seconds=QUICK, mib=MIB, good=[*hs.good_urls(hostile, "bytes"), *before])
    for name in ("utf8", "nul"):
        _failed(case, hostile.url(f"/bytes/{name}.xml"), "xml-syntax")
    assert not any("\ufffd" in u or "\x00" in u for u in urls)
    assert set(after).isdisjoint(urls)  # XML ends at the first bad byte (see the report)
