"""The robots audit of a site's records: what its robots.txt says about each URL, for us.

Each site owns one :class:`RobotsAudit` from the start of the run. It answers None until
the site's robots.txt was read (the robots.txt job calls :meth:`RobotsAudit.read`, with
the rules, or with "disallow everything" when robots.txt was unreachable); from then on,
a URL on an origin that robots.txt covers (its own, and the one it redirected to) is
``"allowed"`` or ``"disallowed"`` for our user agent, and a URL elsewhere is None.

The record builders of the site's jobs hold :meth:`RobotsAudit.verdict` (bound when the
job is made, read when each record is built), so a record leaves its builder with the
verdict in it and is never changed afterwards.
"""

from __future__ import annotations

from collections.abc import Iterable

from sitemap_reader.parse.robots import RobotsTxt


def origin_prefix(url: str) -> str | None:
    """``scheme://authority`` plus the next delimiter: URLs starting with it share the origin.

    >>> origin_prefix("https://example.com/a/b"), origin_prefix("/relative")
    ('https://example.com/', None)
    """
    start = url.find("//")
    if start < 0:
        return None
    end = url.find("/", start + 2)
    return url[: end + 1] if end > 0 else None


def allows_everything(rules: RobotsTxt, agent: str) -> bool:
    """True when no Allow/Disallow rule applies to ``agent`` (the common case): the
    audit then says "allowed" without asking per URL. Reads protego's rule groups;
    should they change shape, the answer is False and every URL is asked."""
    try:
        group = rules.rules._get_matching_rule_set(agent)
    except Exception:  # protego's internals moved: ask per URL
        return False
    return group is None or not getattr(group, "_rules", True)


class RobotsAudit:
    """One site's robots.txt verdicts (see the module docstring).

    >>> from sitemap_reader.parse.robots import parse_robots
    >>> audit = RobotsAudit("mybot")
    >>> audit.verdict("https://e.com/private/1") is None  # robots.txt not read yet
    True
    >>> audit.read(parse_robots(b"User-agent: *\\nDisallow: /private/\\n", "https://e.com/robots.txt"),
    ...            ["https://e.com/"])
    >>> audit.verdict("https://e.com/private/1"), audit.verdict("https://e.com/open")
    ('disallowed', 'allowed')
    >>> audit.verdict("https://other.example/private/1") is None  # not its origin
    True
    """

    __slots__ = ("_agent", "_audited", "_prefix", "everything", "origins", "rules")

    def __init__(self, agent: str) -> None:
        self._agent = agent
        #: The rules once read (None: no robots.txt read for the site yet).
        self.rules: RobotsTxt | None = None
        #: The origins (``scheme://host[:port]/``) the rules apply to.
        self.origins: tuple[str, ...] = ()
        #: No rule applies to our agent: every URL on those origins is allowed.
        self.everything = False
        # The origin of the last URL asked, and whether the rules cover it: consecutive
        # URLs of a sitemap nearly always share one, so the origin is parsed once a run.
        self._prefix: str | None = None
        self._audited = False

    def read(self, rules: RobotsTxt, origins: Iterable[str | None]) -> None:
        """The site's robots.txt was read (or found unreachable: ``rules`` disallow all)."""
        self.rules = rules
        self.everything = allows_everything(rules, self._agent)
        self.origins = tuple({o for o in origins if o is not None})
        self._prefix = None

    def verdict(self, url: str) -> str | None:
        """``"allowed"``, ``"disallowed"``, or None (no rules read, or another origin)."""
        rules = self.rules
        if rules is None:
            return None
        prefix = self._prefix
        if prefix is None or not url.startswith(prefix):
            self._prefix = prefix = origin_prefix(url)
            self._audited = prefix in self.origins
        if not self._audited:
            return None
        if self.everything or rules.can_fetch(url, self._agent):
            return "allowed"
        return "disallowed"
