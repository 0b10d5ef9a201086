"""What a run of the discovery core is asked to do: :class:`Config` (policy, not I/O)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sitemap_reader.errors import UsageError
from sitemap_reader.limits import Limits
from sitemap_reader.parse.scope import SCOPE_MODES
from sitemap_reader.scoring import ScoreFunc


@dataclass(frozen=True, slots=True)
class Config:
    """The policy of a run, the same for every driver.

    ``timeout`` is the per-sitemap budget in seconds (``Limits.sitemap_timeout`` when
    None); drivers enforce it and the core names it in the problem. ``follow`` are
    regexes a listed child sitemap must match to be fetched (empty: all). ``score``
    replaces the default ranking score. ``merge_duplicates``: the output is held (ranked,
    ``top``), so the in-scope copies of URLs already emitted go out too, as
    :attr:`~sitemap_reader.discovery.actions.Emit.repeats`, for the holder to merge.
    """

    limits: Limits = field(default_factory=Limits)
    strict: bool = False
    scope: str = "site"
    robots: bool = True
    guess: bool = True
    timeout: float | None = None
    score: ScoreFunc | None = None
    follow: tuple[re.Pattern[str], ...] = ()
    merge_duplicates: bool = False

    def __post_init__(self) -> None:
        if self.scope not in SCOPE_MODES:
            raise UsageError(f"scope must be one of {', '.join(SCOPE_MODES)}, not {self.scope!r}")
        if self.timeout is not None and self.timeout <= 0:
            raise UsageError("timeout must be positive")

    @property
    def seconds(self) -> float:
        """The per-sitemap budget, resolved."""
        return self.limits.sitemap_timeout if self.timeout is None else self.timeout
