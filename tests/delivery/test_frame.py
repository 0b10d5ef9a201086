"""DataFrames (the pandas extra) and ``dump --format parquet`` (the parquet extra)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

import sitemap_reader as sr
from sitemap_reader.delivery import frame as frame_module
from sitemap_reader.discovery.model import SitemapNode
from sitemap_reader.errors import install_line
from sitemap_reader.records import Alternate, UrlRecord
from tests.conftest_cli import run_cli

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
BODY = f"""<urlset xmlns="{NS}" xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>https://example.com/a</loc><lastmod>2024-03-05T14:30:00+02:00</lastmod>
<changefreq>daily</changefreq><priority>0.8</priority>
<xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/a"/></url>
<url><loc>https://example.com/b</loc></url>
</urlset>""".encode()

ROOT = Path(__file__).resolve().parents[2]


def test_to_dataframe_typed_columns() -> None:
    """lastmod is datetime64[ns, UTC], changefreq categorical, priority float (NaN if absent)."""
    frame = sr.to_dataframe(sr.parse(BODY, url="https://example.com/sitemap.xml").urls)
    assert list(frame.columns) == list(frame_module.COLUMNS)
    assert str(frame["lastmod"].dtype) == "datetime64[ns, UTC]"
    assert frame["lastmod"][0] == pd.Timestamp("2024-03-05T12:30:00Z")
    assert pd.isna(frame["lastmod"][1])
    assert isinstance(frame["changefreq"].dtype, pd.CategoricalDtype)
    assert list(frame["changefreq"].cat.categories) == list(frame_module.CHANGEFREQ_ORDER)
    assert frame["changefreq"][0] == "daily" and pd.isna(frame["changefreq"][1])
    assert str(frame["priority"].dtype) == "float64"
    assert frame["priority"][0] == 0.8 and pd.isna(frame["priority"][1])
    assert frame["alternates"][0] == [{"hreflang": "de", "url": "https://example.com/de/a"}]
    assert frame["sitemap"][0] == "https://example.com/sitemap.xml"


def test_to_dataframe_empty_and_from_a_generator() -> None:
    """No records give an empty frame with the same typed columns; any iterable works."""
    empty = sr.to_dataframe(iter(()))
    assert len(empty) == 0 and str(empty["lastmod"].dtype) == "datetime64[ns, UTC]"
    records = (
        UrlRecord(f"https://example.com/{i}", alternates=(Alternate("x", "u"),)) for i in range(3)
    )
    assert len(sr.to_dataframe(records)) == 3


def test_tree_dataframe_one_row_per_node() -> None:
    """A tree becomes one row per node, depth first, with its parent and index lastmod."""
    child = SitemapNode(
        "https://example.com/a.xml",
        depth=1,
        format="urlset",
        status=200,
        bytes=120,
        urls=2,
        complete=True,
        lastmod=datetime(2024, 1, 1, tzinfo=UTC),
    )
    root = SitemapNode("https://example.com/sitemap.xml", format="sitemapindex", status=200,
                       complete=True, children=[child])  # fmt: skip
    frame = sr.tree_dataframe([root], extra={child.url: {"seconds": 0.25}})
    assert list(frame["url"]) == [root.url, child.url]
    assert list(frame["parent"].fillna("-")) == ["-", root.url]
    assert str(frame["lastmod"].dtype) == "datetime64[ns, UTC]"
    assert frame["seconds"][1] == 0.25 and frame["bytes"][1] == 120
    assert str(frame["status"].dtype) == "Int64"


def test_missing_pandas_names_the_extra() -> None:
    """Without pandas, to_dataframe raises an ImportError that names the extra."""
    code = (
        "import sys; sys.modules['pandas'] = None\n"
        "import sitemap_reader as sr\n"
        "try:\n    sr.to_dataframe([])\n"
        "except ImportError as exc:\n    print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert (
        out.stdout.strip() == f"MissingExtraError DataFrames need pandas: {install_line('pandas')}"
    )


async def test_dump_parquet_round_trip(tmp_path: Path) -> None:
    """dump --format parquet -o FILE writes typed columns that read back equal."""
    source = tmp_path / "s.xml"
    source.write_bytes(BODY)
    out = tmp_path / "urls.parquet"
    result = await run_cli("dump", str(source), "--format", "parquet", "-o", str(out), "-q")
    assert result.code == 0, result.err
    table = pq.read_table(out)
    assert str(table.schema.field("lastmod").type) == "timestamp[ns, tz=UTC]"
    frame = table.to_pandas()
    assert list(frame["url"]) == ["https://example.com/a", "https://example.com/b"]
    assert isinstance(frame["changefreq"].dtype, pd.CategoricalDtype)
    assert frame["priority"][0] == 0.8 and pd.isna(frame["priority"][1])
    assert frame["alternates"][0] == '[{"hreflang": "de", "url": "https://example.com/de/a"}]'


async def test_dump_parquet_needs_a_file_and_pyarrow(tmp_path: Path) -> None:
    """parquet to stdout is a usage error; without pyarrow the error names the extra."""
    source = tmp_path / "s.xml"
    source.write_bytes(BODY)
    result = await run_cli("dump", str(source), "--format", "parquet")
    assert result.code == 2 and "-o FILE" in result.err
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "from sitemap_reader.cli import main\n"
        f"sys.exit(main(['dump', {str(source)!r}, '--format', 'parquet', '-o', 'x.parquet']))\n"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, cwd=tmp_path, stderr=asyncio.subprocess.PIPE
    )
    _, err = await proc.communicate()
    assert proc.returncode == 2
    assert f"{ROOT}[parquet]'" in err.decode()  # the checkout's install line, from tmp_path
    assert not (tmp_path / "x.parquet").exists()
