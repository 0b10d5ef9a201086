"""Build hook: the optional compiled parser (``sitemap_reader/parse/_native/_expatcore.c``).

hatchling calls :class:`NativeBuild` before it builds a wheel. The hook compiles the one C
file with setuptools' ``build_ext`` (its compiler detection, the running Python's headers)
and warnings as errors, then ships the module in the wheel (a platform wheel), or, for an
editable install, puts it beside the source (``pip install -e .``).

Optional by construction (the aiohttp/yarl convention): when there is no compiler, no
headers, or the compiler refuses the file, the hook prints one line saying so and the wheel
is the pure-Python one; ``pip install`` never fails for want of a compiler.
``SITEMAP_READER_NO_EXTENSIONS=1`` at build time skips compiling. ``sitemap-reader
--version`` says which path is active.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

NAME = "sitemap_reader.parse._native._expatcore"
SOURCE = Path("sitemap_reader") / "parse" / "_native" / "_expatcore.c"
#: gcc and clang: warnings are errors (-Wconversion is left out: CPython's headers trip it).
GCC_FLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-Wshadow",
             "-Wstrict-prototypes", "-Wvla"]  # fmt: skip
#: MSVC: level 4 warnings as errors, less the ones CPython's own headers raise there.
MSVC_FLAGS = ["/std:c11", "/O2", "/W4", "/WX", "/wd4100", "/wd4127", "/wd4204"]


def log(message: str) -> None:
    print(f"sitemap-reader build: {message}", file=sys.stderr, flush=True)


def compile_extension(root: Path, out: Path) -> Path:
    """Compile the extension into ``out``; return the built file. Raises on any failure."""
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    class _BuildExt(build_ext):  # type: ignore[misc]
        def build_extension(self, ext: Any) -> None:
            msvc = self.compiler.compiler_type == "msvc"
            ext.extra_compile_args = MSVC_FLAGS if msvc else GCC_FLAGS
            ext.libraries = [] if msvc else ["m"]
            super().build_extension(ext)

    extension = Extension(NAME, [str(SOURCE)])
    dist = Distribution({"name": "sitemap-reader", "ext_modules": [extension]})
    dist.script_name = "hatch_build.py"
    command = _BuildExt(dist)
    command.build_lib = str(out / "lib")
    command.build_temp = str(out / "temp")
    previous = os.getcwd()
    os.chdir(root)
    try:
        command.ensure_finalized()
        command.run()
        built = Path(command.get_ext_fullpath(NAME))
    finally:
        os.chdir(previous)
    if not built.is_absolute():
        built = root / built
    if not built.is_file():
        raise RuntimeError(f"the compiler made no {built.name}")
    return built


class NativeBuild(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        target = SOURCE.with_name(f"_expatcore{suffix}")
        if version == "editable":  # a module left by an earlier build must not outlive it
            (root / target).unlink(missing_ok=True)
        if os.environ.get("SITEMAP_READER_NO_EXTENSIONS"):
            log("SITEMAP_READER_NO_EXTENSIONS is set: the compiled parser is not built")
            return
        self._folder = folder = Path(tempfile.mkdtemp(prefix="sitemap-reader-build-"))
        try:
            built = compile_extension(root, folder)
        except Exception as exc:  # no compiler, no headers, a warning: pure Python
            reason = " ".join(str(exc).split())[:300] or type(exc).__name__
            log(f"the compiled parser could not be built ({reason}); "
                "installing the pure-Python path, which gives the same results")  # fmt: skip
            return
        if version == "editable":  # beside the source, which the install points at
            shutil.copyfile(built, root / target)
            log(f"compiled parser built in place: {target}")
            return
        build_data["force_include"][str(built)] = target.as_posix()
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        log(f"compiled parser built: {target}")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        folder = getattr(self, "_folder", None)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
