"""The one exception tree of sitemap-reader.

Foreign exceptions (expat, zlib, aiohttp, OSError) are translated into these at the
boundary where they happen, chained with ``from`` so the cause stays visible.
Content problems inside a sitemap are *not* exceptions: they are recorded as
:class:`~sitemap_reader.records.Problem` values and parsing goes on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

if TYPE_CHECKING:
    from sitemap_reader.records.outcomes import Verdict


class SitemapReaderError(Exception):
    """Root of every exception this library raises on purpose."""


class UsageError(SitemapReaderError, ValueError):
    """The caller passed something that cannot work (a bad option, a closed parser)."""


class FetchError(SitemapReaderError):
    """A network fetch failed for good (after retries)."""


class DiscoveryError(SitemapReaderError):
    """Nothing could be discovered for a target: unreachable, or no sitemap anywhere.

    ``verdicts`` holds each target's verdict with its evidence
    (:class:`~sitemap_reader.records.outcomes.Verdict`, by the target as given): why each
    gave nothing, as data (blocked, absent, unreachable, broken...); ``reasons`` each
    target's reason in words, without the target (:meth:`reason`), for a door that shows
    the target beside it."""

    def __init__(
        self,
        message: str,
        verdicts: Mapping[str, Verdict] | None = None,
        reasons: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.verdicts: dict[str, Verdict] = dict(verdicts or {})
        self.reasons: dict[str, str] = dict(reasons or {})

    def reason(self, target: str) -> str:
        """Why ``target`` gave nothing (the whole message when it is not one of them)."""
        return self.reasons.get(target, str(self))

    def __reduce__(self) -> tuple[Any, ...]:  # pickled whole (a worker process's error)
        return (type(self), (str(self), self.verdicts, self.reasons))


class StateError(UsageError):
    """An incremental state file cannot be used: not a state file, a newer schema, in use
    by another run, or an I/O error."""


def error_line(exc: BaseException) -> str:
    """One line for an error a door shows: our own messages as they are (plain words
    already), another's with its type (for a bug report)."""
    message = str(exc) or type(exc).__name__
    return message if isinstance(exc, SitemapReaderError) else f"{type(exc).__name__}: {message}"


class MissingExtraError(SitemapReaderError, ImportError):
    """An optional dependency is not installed; the message names the extra and how to
    install it from where the user is (:func:`install_line`)."""


def missing_extra(needs: str, extra: str) -> MissingExtraError:
    """The error of a missing extra: ``needs`` says what needs what ("DataFrames need
    pandas"), followed by the line that installs ``extra`` here."""
    return MissingExtraError(f"{needs}: {install_line(extra)}")


def install_line(extra: str) -> str:
    """The command that installs ``extra`` into this environment, from where this copy of
    the package came: its checkout (``.`` when that is the working folder; ``-e`` kept for
    an editable install), or the package index when it was installed from one.

    >>> install_line("spark").startswith("python -m pip install ")
    True
    """
    checkout, editable = _checkout()
    if checkout is None:
        return f"python -m pip install 'sitemap-reader[{extra}]'"
    here = "." if checkout == Path.cwd().resolve() else str(checkout)
    return f"python -m pip install {'-e ' if editable else ''}'{here}[{extra}]'"


def _checkout() -> tuple[Path | None, bool]:
    """The source folder this copy runs from, and whether it is installed editable; None
    when it came from an index (or a wheel). The installed metadata counts only when it
    describes this copy (its files went where the metadata is, or it is the editable
    install's folder)."""
    here = Path(__file__).resolve()
    try:
        installed = distribution("sitemap-reader")
        found = json.loads(installed.read_text("direct_url.json") or "{}")
        ours = here.is_relative_to(Path(str(installed.locate_file(""))).resolve())
    except (PackageNotFoundError, ValueError):
        found, ours = {}, False
    url = found.get("url", "") if isinstance(found, dict) else ""
    if url.startswith("file://") and "dir_info" in found:
        folder = Path(unquote(url.removeprefix("file://"))).resolve()
        if ours or here.is_relative_to(folder):
            return folder, bool(found["dir_info"].get("editable"))
    if ours:
        return None, False
    source = here.parents[1]  # not installed: run from a checkout, or a copy of the package
    return (source, False) if (source / "pyproject.toml").is_file() else (None, False)
