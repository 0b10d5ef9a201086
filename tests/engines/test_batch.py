"""sitemap_reader.engines.batch: many targets on one loop, as Arrow record batches.

Real sites on 127.0.0.1 (tests/engines/farm.py); the engines themselves (test_spark.py and
test_ray.py beside this file) are tested by ``make test-engines``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from sitemap_reader.engines.batch import (
    SCHEMA,
    ChunkReport,
    canonical_target,
    discover_batches,
    engine_arguments,
    run_in_chunks,
)
from sitemap_reader.errors import UsageError
from sitemap_reader.options import Options
from tests.engines.farm import Farm, Site

ROOT = Path(__file__).resolve().parents[2]
#: The farm of the contract tests: two ordinary sites, one 10x larger, one with only
#: /sitemap.xml, one refusing connections, one with a broken gzip child.
SPECS = [("ok", 2, 50), ("ok", 2, 30), ("ok", 10, 100), ("plain", 1, 60), ("down", 0, 0)]
SPECS += [("badgz", 3, 40)]


@pytest.fixture(scope="module")
def farm() -> Iterator[Farm]:
    with Farm(SPECS) as running:
        yield running


def rows_of(batches: Iterator[pa.RecordBatch]) -> list[dict[str, Any]]:
    """Every row of the batches, checking each batch's schema on the way."""
    rows: list[dict[str, Any]] = []
    for batch in batches:
        assert batch.schema == SCHEMA
        rows.extend(batch.to_pylist())
    return rows


def check_contract(rows: list[dict[str, Any]], sites: list[Site]) -> None:
    """Every URL once, one summary per target after its URLs, with the right counts."""
    summaries = [r for r in rows if r["kind"] == "summary"]
    assert Counter(r["target"] for r in summaries) == Counter(s.target for s in sites)
    for site in sites:
        urls = [r["url"] for r in rows if r["kind"] == "url" and r["target"] == site.target]
        assert Counter(urls) == Counter(site.expected_urls()), site
        (summary,) = [r for r in summaries if r["target"] == site.target]
        assert summary["status"] == site.status, summary
        assert summary["urls"] == len(urls)
        assert (summary["error"] is None) == (site.status == "ok"), summary
        last_url = max(
            (i for i, r in enumerate(rows) if r["target"] == site.target and r["kind"] == "url"),
            default=-1,
        )
        assert rows.index(summary) > last_url


def test_every_url_once_and_one_summary_per_target(farm: Farm) -> None:
    """The farm in small batches: every URL once, statuses ok / partial / failed, the
    summary after its URLs, no batch above batch_rows."""
    batches = list(
        discover_batches(
            [s.target for s in farm.sites], parallel=3, batch_rows=97, allow_private=True
        )
    )
    assert all(b.num_rows <= 97 for b in batches)
    assert all(b.num_rows == 97 for b in batches[:-1])
    check_contract(rows_of(iter(batches)), farm.sites)


def test_url_rows_carry_every_record_field(farm: Farm) -> None:
    """A URL row has the record's fields (lastmod as a UTC timestamp), the others null."""
    site = farm.site("plain")
    rows = rows_of(discover_batches([site.target], allow_private=True))
    url = next(r for r in rows if r["kind"] == "url")
    assert url["lastmod"].isoformat() == "2024-01-02T00:00:00+00:00"
    assert url["sitemap"] == f"{site.base}/sitemap.xml"
    assert url["score"] > 0 and url["removed"] is False and url["mobile"] is False
    assert url["status"] is url["urls"] is url["error"] is url["stats"] is None
    assert url["verdict"] is url["evidence"] is None
    summary = rows[-1]
    assert summary["url"] is summary["lastmod"] is summary["removed"] is None
    assert json.loads(summary["stats"])["urls_emitted"] == 60


def test_targets_deduplicated_by_their_canonical_spelling(farm: Farm) -> None:
    """Spellings of one site run once, under the canonical spelling."""
    site = farm.site("plain")
    spellings = [site.target, site.base, f"HTTP://127.0.0.1:{site.port}/", f" {site.target}"]
    rows = rows_of(discover_batches(spellings, allow_private=True))
    check_contract(rows, [site])


def test_canonical_spelling_is_the_queue_rule() -> None:
    """Domains lose scheme, default port and slash; others keep what the reader needs."""
    assert canonical_target("Example.COM") == "example.com"
    assert canonical_target("example.com.") == "example.com"  # the root's dot: one site
    assert canonical_target("https://example.com:443/") == "example.com"
    assert canonical_target("http://Example.com:8080") == "http://example.com:8080/"
    assert canonical_target(None) == ""
    assert canonical_target(" not a target ") == "not a target"


def test_failures_are_rows_never_exceptions(farm: Farm) -> None:
    """Refused ports, private targets without allow_private, files, junk and null all
    become failed summaries with an error; the others still run."""
    plain, down = farm.site("plain"), farm.site("down")
    given = [down.target, plain.target, "/etc/passwd", "ftp://example.com/", None, "a b"]
    rows = rows_of(discover_batches(given))
    summaries = {r["target"]: r for r in rows if r["kind"] == "summary"}
    assert len(summaries) == len(given)
    assert [r for r in rows if r["kind"] == "url"] == []
    for summary in summaries.values():
        assert summary["status"] == "failed" and summary["urls"] == 0
        assert summary["error"], summary
        assert summary["verdict"] == "refused" and json.loads(summary["evidence"]), summary
    assert "allow_private" in summaries[plain.target]["error"]
    down_row = rows_of(discover_batches([down.target], allow_private=True))[0]
    assert down_row["status"] == "failed"
    # the reason in plain words, without the target its row already names
    assert down_row["error"].startswith("cannot connect: connection refused"), down_row
    assert down.target not in down_row["error"]
    assert down_row["verdict"] == "unreachable"
    ok_row = rows_of(discover_batches([plain.target], allow_private=True))[-1]
    assert (ok_row["verdict"], json.loads(ok_row["evidence"])) == ("ok", [])


def test_a_name_resolving_to_loopback_is_refused_unless_allowed(
    farm: Farm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A target from data whose name resolves to loopback (intranet.test, through the
    test's resolver at getaddrinfo) is not a typed name: one failed row saying why (the
    guard refused the resolved address); allow_private=True reads it."""
    site = farm.site("plain")
    real = socket.getaddrinfo

    def resolve(host: bytes | str | None, *args: Any, **kwargs: Any) -> Any:
        return real("127.0.0.1" if host == "intranet.test" else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    target = f"http://intranet.test:{site.port}/"
    for private in (False, "never"):
        (row,) = rows_of(discover_batches([target], allow_private=private))
        assert row["status"] == "failed", row
        assert "intranet.test resolves to 127.0.0.1" in row["error"], row
    rows = rows_of(discover_batches([target], allow_private=True, scope="any"))
    assert rows[-1]["status"] == "ok" and rows[-1]["urls"] == len(site.expected_urls())


def test_a_site_whose_only_sitemap_breaks_failed() -> None:
    """No URL and a broken sitemap: failed, with the sitemap's reason."""
    with Farm([("badgz", 1, 40)]) as farm:
        rows = rows_of(discover_batches([farm.sites[0].target], allow_private=True))
    check_contract(rows, farm.sites)
    assert ".xml.gz" in rows[0]["error"]


def test_max_urls_caps_each_target(farm: Farm) -> None:
    """max_urls=N: at most N URL rows per target, each counted in its partial summary."""
    sites = [s for s in farm.sites if s.kind == "ok"]
    rows = rows_of(
        discover_batches([s.target for s in sites], max_urls=7, allow_private=True, batch_rows=5)
    )
    for site in sites:
        urls = [r for r in rows if r["kind"] == "url" and r["target"] == site.target]
        (summary,) = [r for r in rows if r["kind"] == "summary" and r["target"] == site.target]
        assert len(urls) == summary["urls"] == 7
        assert summary["status"] == "partial" and "max_urls" in summary["error"]


def test_options_value_and_flat_keywords(farm: Farm) -> None:
    """An Options value and flat keywords over it reach the reader, as for SitemapReader."""
    site = farm.site("ok")
    base = Options.of(max_urls=3)
    rows = rows_of(discover_batches([site.target], options=base, allow_private=True))
    assert rows[-1]["urls"] == 3


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"parallel": 0}, "parallel"),
        ({"batch_rows": "many"}, "batch_rows"),
        ({"max_url": 3}, "did you mean 'max_urls'"),
        ({"since": "yesterday-ish"}, "since"),
        ({"state": "x.db"}, "state"),
    ],
)
def test_bad_options_fail_before_anything_runs(keywords: dict[str, Any], message: str) -> None:
    """A bad option is a UsageError at the call, before a target is read."""
    with pytest.raises(UsageError, match=message):
        discover_batches(["example.com"], **keywords)
    with pytest.raises(UsageError, match=message):
        engine_arguments("door", keywords)


def test_engine_arguments_resolve_options_once() -> None:
    """The engine doors ship one picklable Options and their own two keywords."""
    arguments = engine_arguments("door", {"parallel": 4, "batch_rows": 9, "max_urls": 5})
    assert arguments["parallel"] == 4 and arguments["batch_rows"] == 9
    assert arguments["options"].delivery.max_urls == 5


def test_closing_early_stops_every_target(farm: Farm) -> None:
    """A consumer that stops after one batch closes the reader and cancels the runs."""
    big = farm.sites[2]
    batches = discover_batches([big.target], batch_rows=10, allow_private=True)
    first = next(batches)
    assert first.num_rows == 10
    batches.close()


def test_a_broken_target_iterable_raises(farm: Farm) -> None:
    """The engine's own input failing is the one error that ends the call."""

    def targets() -> Iterator[str]:
        yield farm.site("plain").target
        raise RuntimeError("input broke")

    with pytest.raises(RuntimeError, match="input broke"):
        rows_of(discover_batches(targets(), allow_private=True))


_RSS_CHILD = """
import resource, sys
from sitemap_reader.engines.batch import discover_batches
rows = 0
for batch in discover_batches([sys.argv[1]], allow_private=True, processes=0):
    rows += batch.num_rows
print(rows, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def _peak_mib(target: str) -> tuple[int, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _RSS_CHILD, target],
        env=env, capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    rows, peak = done.stdout.split()
    return int(rows), int(peak)


def test_memory_is_bounded_by_the_batch_not_the_target() -> None:
    """The peak RSS of a process reading a 200k-URL target is within a few tens of MiB
    of one reading a 20k-URL target: batches are handed on as they fill."""
    with Farm([("ok", 4, 50_000), ("ok", 4, 5_000)]) as farm:
        big, small = farm.sites
        big_rows, big_peak = _peak_mib(big.target)
        small_rows, small_peak = _peak_mib(small.target)
    assert big_rows == 200_001 and small_rows == 20_001
    assert big_peak - small_peak < 64, (big_peak, small_peak)


def test_run_in_chunks_skips_the_finished_chunks(tmp_path: Path) -> None:
    """Chunks run in order with a done marker each; a rerun after a crash runs only the
    chunks without one; a changed list is refused."""
    targets = [f"site{i}.example" for i in range(10)]
    seen: list[tuple[str, list[str]]] = []

    def crash_on_third(name: str, chunk: list[str]) -> None:
        if name == "chunk-000002":
            raise RuntimeError("the job died")
        seen.append((name, chunk))

    markers = tmp_path / "done"
    with pytest.raises(RuntimeError):
        run_in_chunks(targets, crash_on_third, markers=markers, chunk_targets=3)
    assert [name for name, _ in seen] == ["chunk-000000", "chunk-000001"]
    seen.clear()
    report = run_in_chunks(
        targets, lambda n, c: seen.append((n, c)), markers=markers, chunk_targets=3
    )
    assert report == ChunkReport(
        ran=["chunk-000002", "chunk-000003"], skipped=["chunk-000000", "chunk-000001"]
    )
    assert seen == [("chunk-000002", targets[6:9]), ("chunk-000003", targets[9:])]
    assert sorted(p.name for p in markers.iterdir()) == [f"chunk-00000{i}.done" for i in range(4)]
    with pytest.raises(UsageError, match="another list"):
        run_in_chunks(targets[1:], lambda n, c: None, markers=markers, chunk_targets=3)


def test_a_marker_is_never_written_through_a_planted_link(tmp_path: Path) -> None:
    """A link planted at the temporary name a done marker used to be written under
    (MARKER.PID.tmp): not followed; the marker is written, the link's target is not."""
    markers = tmp_path / "done"
    markers.mkdir()
    (markers / f"chunk-000000.done.{os.getpid()}.tmp").symlink_to(tmp_path / "victim")
    run_in_chunks(["a.example"], lambda name, chunk: None, markers=markers)
    assert (markers / "chunk-000000.done").is_file()
    assert not (tmp_path / "victim").exists()


def test_a_target_that_is_not_text_is_its_own_failed_row(farm: Farm) -> None:
    """An int, a float NaN (a pandas column's missing value) and bytes among the targets:
    each is a failed row of its own and the good target's rows all come (before: the int
    raised out of the call and the good target's rows were lost)."""
    plain = farm.site("plain")
    given: list[Any] = [42, plain.target, float("nan"), b"example.com"]
    rows = rows_of(discover_batches(given, allow_private=True))
    summaries = {r["target"]: r for r in rows if r["kind"] == "summary"}
    assert set(summaries) == {"42", plain.target, "nan", "b'example.com'"}
    assert summaries[plain.target]["status"] == "ok"
    for shown, kind in (("42", "int"), ("nan", "float"), ("b'example.com'", "bytes")):
        assert summaries[shown]["status"] == "failed" and summaries[shown]["urls"] == 0
        assert summaries[shown]["error"] == f"refused: a target is text, not {kind}: {shown!r}"
    check_contract([r for r in rows if r["target"] == plain.target], [plain])


def test_the_engines_own_counts_take_numpy_integers() -> None:
    """parallel and batch_rows read from a pandas frame (NumPy integers) are taken; a
    refusal names the door and the keyword."""
    np = pytest.importorskip("numpy")
    arguments = engine_arguments("spark", {"parallel": np.int64(4), "batch_rows": np.int32(9)})
    assert (arguments["parallel"], arguments["batch_rows"]) == (4, 9)
    with pytest.raises(UsageError, match=r"^spark: parallel: expected a whole number >= 1"):
        engine_arguments("spark", {"parallel": np.int64(0)})


@pytest.mark.parametrize(
    "content", [b"", b"{not json", b"[1, 2]", b'{"digest": 7}', b"\xff\xfe", b"null"]
)
def test_a_damaged_marker_names_the_door_and_the_option(tmp_path: Path, content: bytes) -> None:
    """A done marker that is empty, not JSON, not an object or without a digest: a
    UsageError naming run_in_chunks, markers and the file (before: a JSONDecodeError or
    an AttributeError out of the call); the chunk is not run."""
    markers = tmp_path / "done"
    markers.mkdir()
    (markers / "chunk-000000.done").write_bytes(content)
    ran: list[str] = []
    with pytest.raises(UsageError) as caught:
        run_in_chunks(["a.example"], lambda name, chunk: ran.append(name), markers=markers)
    message = str(caught.value)
    assert message.startswith(f"run_in_chunks: markers: {markers / 'chunk-000000.done'} is damaged")
    assert ran == []
