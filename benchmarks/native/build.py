"""Build the parser's extension (sitemap_reader/parse/_native/_expatcore.c) for the running
Python, warnings as errors, into ``benchmarks/native/build/VARIANT`` (git-ignored; the
package's own build is ``pip install -e .``: hatch_build.py): variants for debugging,
sanitizers and fuzzing, which ``fuzz_native.py`` loads in place of the installed module
(``SITEMAP_NATIVE_BUILD=VARIANT``).

Run: ``.venv/bin/python benchmarks/native/build.py [--debug] [--sanitize [--coverage]]
[--cc gcc]``.

``--debug`` builds with -O0 -g; ``--sanitize`` with ASan and UBSan (run the result with
``LD_PRELOAD=$(gcc -print-file-name=libasan.so)``, as the interpreter itself is not
instrumented); ``--coverage`` (clang: ``--cc clang-14``) adds libFuzzer's coverage
instrumentation (``-fsanitize=fuzzer-no-link``), for coverage-guided fuzzing of the C with
atheris (variant ``sanitize-coverage``; run with a preloaded ASan+libFuzzer runtime, see
fuzz_native.py). Prints the path of the built module.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SOURCE = ROOT / "sitemap_reader" / "parse" / "_native" / "_expatcore.c"
#: The callgrind region helper of bench.py (a benchmark tool, built beside the prototype).
REGION = HERE / "_cgregion.c"
OUT = HERE / "build"
#: Warnings are errors (the issue's rule for the C build); -Wconversion is left out (the
#: CPython headers themselves trip it).
WARNINGS = ["-Wall", "-Wextra", "-Werror", "-Wshadow", "-Wstrict-prototypes", "-Wvla"]


def command(
    cc: str, debug: bool, sanitize: bool, target: Path, source: Path, coverage: bool = False
) -> list[str]:
    """The compiler command line."""
    include = sysconfig.get_paths()["include"]
    opt = ["-O0", "-g"] if debug else ["-O2", "-g"]
    if sanitize:
        checks = "address,undefined" + (",fuzzer-no-link" if coverage else "")
        opt = ["-O1", "-g", "-fno-omit-frame-pointer", f"-fsanitize={checks}",
               "-fno-sanitize-recover=undefined"]  # fmt: skip
    return [
        cc, "-shared", "-fPIC", "-std=c11", *opt, *WARNINGS, f"-I{include}", "-o", str(target),
        str(source), "-lm",
    ]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cc", default="gcc")
    parser.add_argument("--debug", action="store_true")
    parser.add_argument("--sanitize", action="store_true")
    parser.add_argument("--coverage", action="store_true", help="with --sanitize, clang only")
    args = parser.parse_args(argv)
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    variant = "sanitize" + ("-coverage" if args.coverage else "") if args.sanitize else None
    folder = OUT / (variant or ("debug" if args.debug else "release"))
    folder.mkdir(parents=True, exist_ok=True)
    for source in (SOURCE, REGION):
        target = folder / f"{source.stem}{suffix}"
        cmd = command(args.cc, args.debug, args.sanitize, target, source, args.coverage)
        result = subprocess.run(cmd, check=False)
        if result.returncode != 0:
            print(" ".join(cmd), file=sys.stderr)
            return result.returncode
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
