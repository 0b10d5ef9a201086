"""Hostile markup against the installed CLI: small gzip files that expand to one huge
token, deep nesting or a flood of names, and a child declaring a codec that is no text
encoding (issue 10, items 1-3).

Each case is a ~60-100 KB gzip child of an index, next to a good sibling; ``dump -v`` and
``tree --json`` run as real processes (:func:`tests.hostile.cli_kit.run_own_case`), and
each process records its own peak resident set (``VmHWM`` from ``/proc/self/status``) as
it exits. Every case asserts: the run ends in time, both peaks stay under ``MIB``, every
good URL (the sibling's and those before the bomb) is emitted once, and the problem
named for the markup bound shows on the child's node and in the summary.

Before the bounds, one 60 MiB attribute fed in 64 KiB pieces took a minute (expat 2.5
rescans an unfinished token on every feed) and 64 MiB of ``<a>`` took 2.7 GiB.
"""

from __future__ import annotations

import pytest

from tests.hostile import hostile_site as hs
from tests.hostile.cli_kit import Case, run_own_case
from tests.hostile.hostile_site import HostileSite

#: Peak RSS bound for a run's process (the CLI alone is about 40 MiB).
MIB = 100
#: CPU seconds a run may spend: its interpreter starting, and the bomb cut early.
QUICK = 10.0


def _failed(case: Case, url: str, code: str) -> None:
    """The node of ``url`` failed with ``code`` first, and the summary names it."""
    node = case.node(url)
    assert not node["ok"] and node["problems"][0]["code"] == code, node["problems"]
    assert f"problem: {url} {code}" in case.dump.err, case.dump.err[-2000:]


@pytest.mark.parametrize("construct", sorted(hs.MARKUP_BOMBS))
async def test_markup_bomb_ends_on_its_bound(hostile: HostileSite, construct: str) -> None:
    """A 60 MiB attribute, comment, tag name or PI (limit-token), or 64 MiB of nested
    <a> (limit-nesting), as a ~60 KB gzip: cut at once, the good URLs kept."""
    target, kept = hs.add_markup_bomb(hostile, construct)
    case = await run_own_case(target)
    case.check(seconds=QUICK, mib=MIB, good=[*hs.good_urls(hostile, f"markup-{construct}"), *kept])
    code = "limit-nesting" if construct == "nesting" else "limit-token"
    _failed(case, hostile.url(f"/markup-{construct}/bomb.xml.gz"), code)


async def test_doctype_bomb_ends_on_token_bound(hostile: HostileSite) -> None:
    """A DOCTYPE with a 60 MiB public identifier: limit-token, the sibling kept."""
    target = hs.add_doctype_bomb(hostile)
    case = await run_own_case(target)
    case.check(seconds=QUICK, mib=MIB, good=hs.good_urls(hostile, "markup-doctype"))
    _failed(case, hostile.url("/markup-doctype/bomb.xml.gz"), "limit-token")


@pytest.mark.parametrize(
    ("flood", "code"),
    [
        ("tag-names", "limit-names"),
        ("attribute-names", "limit-names"),
        ("namespaces", "limit-namespaces"),
    ],
)
async def test_name_flood_ends_on_its_bound(hostile: HostileSite, flood: str, code: str) -> None:
    """64 MiB of distinct tag names, attribute names or namespace declarations as a
    gzip: the document ends on its named bound, memory flat, the good URLs kept."""
    target, kept = hs.add_name_flood(hostile, flood)
    case = await run_own_case(target)
    case.check(seconds=QUICK, mib=MIB, good=[*hs.good_urls(hostile, f"flood-{flood}"), *kept])
    _failed(case, hostile.url(f"/flood-{flood}/bomb.xml.gz"), code)


@pytest.mark.parametrize("encoding", ["zlib", "base64", "rot13", "utf-16", "UTF-AAAAAAAA8"])
async def test_child_declaring_a_non_text_encoding(hostile: HostileSite, encoding: str) -> None:
    """A 150-byte child declaring encoding="zlib" (or another non-encoding) no longer
    ends the run: exit 0, its URL read as UTF-8, the sibling kept, the problem shown."""
    target, listed = hs.add_declared_encoding(hostile, encoding)
    case = await run_own_case(target)
    assert case.dump.code == 0, case.dump.err[-2000:]
    assert "Traceback" not in case.dump.err + case.tree.err
    case.check(
        seconds=QUICK, mib=MIB, good=[*hs.good_urls(hostile, f"encoding-{encoding}"), listed]
    )
    url = hostile.url(f"/encoding-{encoding}/child.xml")
    node = case.node(url)
    assert node["ok"], node
    assert "unknown-encoding" in case.codes(url), node["problems"]
    assert f"problem: {url} unknown-encoding" in case.dump.err, case.dump.err[-2000:]
