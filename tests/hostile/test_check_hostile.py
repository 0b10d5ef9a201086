"""``check`` against hostile bodies: the walk's bounds hold for the checker too (issue 18.4).

Each case runs ``check --json`` as a child process that records its own peak resident
set (``VmHWM``, :func:`tests.hostile.cli_kit.measured_own`). Every case asserts the time
and memory bound, that the site saw the hostile file requested once (one walk), that
the problem is named on that file, and that the good sibling was checked in full.

Before the one walk, ``check`` read every file a second time with a checker of its own:
a gzip child holding one start tag with 5 M attributes took ~1.2 GB and ~15 s, 5.6 M
distinct element names ~1.5 GB and 22 s, an endless body ran until ``--timeout``
(120 s), and a sparse local file was read to its end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest_cli import run_cli
from tests.hostile import hostile_site as hs
from tests.hostile.cli_kit import COMMON, HANG, Measured, measured_own
from tests.hostile.floods import attributes, element_names
from tests.hostile.hostile_site import HostileSite

#: Peak RSS bound for the check process (the CLI alone is about 40 MiB).
MIB = 100
#: CPU seconds for a case cut at a markup bound (an interpreter starting included); the
#: wire bytes read are the exact proof of the early stop.
QUICK = 30.0
#: CPU seconds for the endless body: 128 MiB through the parser and the checker (it used
#: to run into the 120 s per-sitemap deadline).
CAPPED = 45.0
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


FLOODS = {"attributes": (attributes, "longer than 65536 bytes"), "names": (element_names, "")}


def _files(run: Measured) -> dict[str, dict[str, Any]]:
    return {f["url"]: f for f in json.loads(run.out)["files"]}


def _good_sibling_checked(site: HostileSite, files: dict[str, dict[str, Any]], case: str) -> None:
    good = files[site.url(f"/{case}/good.xml")]
    assert good["findings"] == [] and good["urls"] == 3, good


@pytest.mark.parametrize("flood", sorted(FLOODS))
async def test_markup_flood_ends_on_the_parsers_bound(hostile: HostileSite, flood: str) -> None:
    """A gzip child with one start tag of 5 M attributes, or 5.6 M distinct element
    names: ends at max_xml_token / max_xml_names in seconds, memory flat, read once."""
    make, words = FLOODS[flood]
    case = f"check-{flood}"
    prefix, _ = hs.bomb_prefix(hostile, case)
    pieces = lambda _: hs.gzip_layer([prefix, *make(), hs.URLSET_CLOSE])  # noqa: E731
    hostile.add(f"/{case}/bomb.xml.gz", hs.streamed(pieces, content_type="application/gzip"))
    target = hs.add_index(hostile, case, [f"/{case}/bomb.xml.gz"])
    run = await measured_own(["check", target, "--json", *COMMON], limit=HANG)
    assert run.code == 2, run.err
    assert run.cost < QUICK, f"{run.cost:.1f} s"
    assert run.peak_mib < MIB, f"peak {run.peak_mib:.0f} MiB"
    files = _files(run)
    bomb = files[hostile.url(f"/{case}/bomb.xml.gz")]
    assert [f["code"] for f in bomb["findings"]] == ["check-limit"], bomb
    assert words in bomb["findings"][0]["message"]
    assert bomb["urls"] == 2  # the URLs before the flood are kept
    assert bomb["bytes"] < 1 << 20  # of a 12 MB gzip: cut at the bound, not read out
    assert hostile.hits[f"/{case}/bomb.xml.gz"] == 1
    _good_sibling_checked(hostile, files, case)


async def test_endless_body_stops_at_the_byte_cap(hostile: HostileSite) -> None:
    """A urlset that never ends: cut at the 64 MiB cap with a named finding, not at
    --timeout; requested once."""
    target, _ = hs.add_endless(hostile)
    run = await measured_own(["check", target, "--json", *COMMON], limit=HANG)
    assert run.code == 2, run.err
    assert run.cost < CAPPED, f"{run.cost:.1f} s"
    assert run.peak_mib < MIB, f"peak {run.peak_mib:.0f} MiB"
    files = _files(run)
    endless = files[hostile.url("/endless/sitemap.xml")]
    assert [f["code"] for f in endless["findings"]] == ["check-limit", "too-large"], endless
    assert "67,108,864 bytes" in endless["findings"][0]["message"]
    assert endless["bytes"] <= 2 * (64 << 20) + (1 << 20)  # the wire cap, at most
    assert hostile.hits["/endless/sitemap.xml"] == 1
    _good_sibling_checked(hostile, files, "endless")


async def test_sparse_local_file_is_not_read_to_its_end(tmp_path: Path) -> None:
    """A 6 GiB sparse local file after a urlset head: the walk stops at the first bad
    byte (never reads 6 GiB), the problem named, memory flat."""
    path = tmp_path / "sparse.xml"
    with path.open("wb") as handle:
        handle.write(f'<urlset xmlns="{NS}"><url><loc>https://example.com/a</loc></url>'.encode())
        handle.truncate(6 << 30)
    run = await measured_own(["check", str(path), "--json", *COMMON], limit=HANG)
    assert run.code == 2, run.err
    assert run.cost < QUICK, f"{run.cost:.1f} s"
    assert run.peak_mib < MIB, f"peak {run.peak_mib:.0f} MiB"
    (file,) = _files(run).values()
    assert [f["code"] for f in file["findings"]] == ["xml-syntax"], file
    assert file["bytes"] < 1 << 20


@pytest.mark.parametrize("source", ["file", "stdin"])
async def test_local_input_over_the_cap_says_so(tmp_path: Path, source: str) -> None:
    """A local file or standard input of 65 MiB: cut at the 64 MiB cap, and check says
    so (check-limit naming the cap, too-large), exit 2."""
    body = f'<urlset xmlns="{NS}"><url><loc>https://example.com/a</loc></url>'.encode()
    body += b" " * (65 << 20) + b"</urlset>"
    if source == "file":
        path = tmp_path / "big.xml"
        path.write_bytes(body)
        result = await run_cli("check", str(path))
    else:
        result = await run_cli("check", "-", stdin=body)
    assert result.code == 2, result.err
    lines = result.out.splitlines()
    assert lines[0] == (str(path) if source == "file" else "-")
    assert "check-limit: stopped after 67,108,864 bytes uncompressed" in result.out
    assert "too-large" in result.out
    assert lines[-1].startswith("2 errors (2 rules broken)")
