"""What the measurement tools of this folder share: the package's compiled path, the
sibling ``benchmarks/parse.py`` as a module, and parsers whose C drain does only some
steps (``bench.py``'s per-step variants).

Run the tools from the checkout's root with the extension built (``pip install -e .``).
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # the checkout (run as a script)

from sitemap_reader.parse import native  # noqa: E402
from sitemap_reader.parse import parser as parser_module  # noqa: E402
from sitemap_reader.parse.parser import SitemapParser  # noqa: E402
from sitemap_reader.records import Alternate, Image, UrlRecord  # noqa: E402

REALDATA = HERE.parent.parent.parent / "shared" / "realdata" / "files"
if native.CORE is None:
    raise SystemExit(f"these tools measure the compiled path: {native.describe()}")
#: The extension module.
core: Any = native.CORE
#: Every step of the drain in C (what the package runs).
ALL = core.N_LOC | core.N_DATE | core.N_FIELDS | core.N_RECORD


def bench_parse() -> Any:
    """benchmarks/parse.py as a module (its name would shadow nothing when loaded so)."""
    spec = importlib.util.spec_from_file_location("bench_parse", HERE.parent / "parse.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_parse"] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def native_parser(url: str, flags: int | None = ALL, *, drop: bool = False) -> SitemapParser:
    """A parser on the compiled path whose drain runs ``flags``' steps in C (None: the
    reference's Python drain over the C reader; ``drop``: entries read, then dropped)."""
    with native.using("native"):
        made = SitemapParser(url)
    emitter: Any = made._emit
    if drop:
        emitter._drain = emitter.pending.clear
    elif flags is None:
        emitter._drain = functools.partial(parser_module._Emitter.drain, emitter)
    elif flags != ALL:
        native.drainer(emitter, None, emitter.now, parser_module._FREQS, parser_module._PRIORITIES)
        record = (UrlRecord, emitter.now.timestamp(), None, False, None, None, Image, Alternate)
        emitter._drain = core.Drainer(emitter, native._FUNCS, flags, record).drain
    return made
