"""The protocol checker over real files, read in place from ``../shared``.

Every sitemap of ``../shared/realdata`` (MANIFEST.tsv gives its format and entry count)
and every file of ``../shared/corpus`` is checked: no exception, the format and entry
count the manifest states, and the same findings whether fed whole, in odd chunks, or
(for the small files) one byte at a time. Skipped when ``../shared`` is absent.
"""

from __future__ import annotations

import pytest

from sitemap_reader.parse.checker import BodyChecker, Finding, check_robots
from tests.shared_data import CORPUS, REALDATA, SHARED, manifest

MISSING = f"{SHARED} is absent (the shared test data is read in place, never copied)"


def _check(data: bytes, step: int | None = None) -> tuple[BodyChecker, list[Finding]]:
    checker = BodyChecker("local-file", base=None)
    if step is None:
        checker.feed(data)
    else:
        for start in range(0, len(data), step):
            checker.feed(data[start : start + step])
    return checker, checker.close()


ROWS = [row for row in manifest() if row["format"] != "robots"]
ROBOTS = [row for row in manifest() if row["format"] == "robots"]
CORPUS_FILES = sorted(
    p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.is_file()
) if CORPUS.is_dir() else []  # fmt: skip


@pytest.mark.skipif(not ROWS, reason=MISSING)
@pytest.mark.parametrize("row", ROWS, ids=[row["local_name"] for row in ROWS])
def test_real_sitemap_format_and_entries(row: dict[str, str]) -> None:
    """A real sitemap: the manifest's format and entry count; same findings in chunks."""
    data = (REALDATA / "files" / row["local_name"]).read_bytes()
    checker, found = _check(data)
    assert checker.format == row["format"]
    if "not-well-formed" in row["notes"]:
        assert "xml-syntax" in {f.code for f in found}
    elif row["format"] in ("urlset", "sitemapindex", "text"):
        assert checker.entries == int(row["url_count"])
    assert _check(data, 997)[1] == found
    if len(data) < 20_000:
        assert _check(data, 1)[1] == found


@pytest.mark.skipif(not ROBOTS, reason=MISSING)
@pytest.mark.parametrize("row", ROBOTS, ids=[row["local_name"] for row in ROBOTS])
def test_real_robots_sitemap_lines(row: dict[str, str]) -> None:
    """A real robots.txt: only robots-relative-sitemap findings, each with a line."""
    data = (REALDATA / "files" / row["local_name"]).read_bytes()
    assert all(f.code == "robots-relative-sitemap" and f.line for f in check_robots(data, "r"))


@pytest.mark.skipif(not CORPUS_FILES, reason=MISSING)
@pytest.mark.parametrize("name", CORPUS_FILES)
def test_corpus_file_checks_without_error(name: str) -> None:
    """Every corpus file is checked without an exception, the same one byte at a time."""
    data = (CORPUS / name).read_bytes()
    if "robots" in name:
        assert check_robots(data, name) == check_robots(data, name)
        return
    checker, found = _check(data)
    assert checker.format is not None or found
    if len(data) < 50_000:
        assert _check(data, 1)[1] == found
