"""The robots.txt side of the core: the job that finds a site's sitemaps.

RFC 9309 section 2.3.1: a 4xx robots.txt means "no rules, no sitemaps" (a normal answer:
everything allowed); a 5xx, or a server or network error once connected (timeout, reset,
a cut body), means the robots.txt is unreachable, and the crawler must assume everything
disallowed until it answers: the robots audit marks every record of that origin
``disallowed`` (``--obey-robots`` drops them), and the tree and the summary say why. A
redirect the address guard refuses costs only the robots.txt: the site is not
"unreachable", its own host's well-known paths are probed.

The site's well-known sitemap paths are probed when robots.txt lists none (unless the
site could not be reached at all), and also when every sitemap it lists fails (404,
unreachable, not a sitemap): robots.txt then led nowhere, and the probes run as if it
had listed none (:class:`Listed` watches the listed ones settle). A robots.txt vouches
for its own host: the sitemaps it lists may list URLs there (``site`` scope). With
robots.txt disabled, one GET of the home page (body unread, redirects not followed)
decides whether a bare domain answers over https.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from sitemap_reader.discovery.actions import Action, Done, Fetch
from sitemap_reader.discovery.rules import found_sitemap, origin_prefix, server_of
from sitemap_reader.discovery.targets import well_known_urls
from sitemap_reader.parse.gunzip import GZIP_MAGIC, Gunzip, GunzipError
from sitemap_reader.parse.robots import RobotsTxt, parse_robots
from sitemap_reader.parse.scope import host_of

if TYPE_CHECKING:
    from datetime import datetime

    from sitemap_reader.discovery.job import Job
    from sitemap_reader.limits import Limits
    from sitemap_reader.options import Options

#: Failure codes of a robots.txt fetch that make it *unreachable* (RFC 9309 2.3.1.4: a
#: server or network error once connected): everything is disallowed until it answers.
#: Not ``connect`` (no site: nothing to audit), ``blocked`` (our guard refused a hop),
#: ``redirects`` (RFC 9309 2.3.1.2: too many redirects is "unavailable", allow all).
UNREACHABLE_CODES: Final = frozenset({"timeout", "reset", "body", "retry-after"})
#: Problem codes of a robots.txt node that the run's summary repeats (not failures, but
#: they change what the run did: the rules it read, the sitemaps it looked for).
SUMMARY_CODES: Final = ("robots-html", "robots-led-nowhere")
#: The rules of an unreachable robots.txt: everything disallowed.
DISALLOW_ALL: Final = parse_robots(b"User-agent: *\nDisallow: /\n", "http://robots.invalid/")


@dataclass(slots=True, eq=False)
class Listed:
    """The sitemaps a site's robots.txt listed, watched until one leads somewhere: when
    all of them failed, the well-known paths are probed as children of ``robots``."""

    robots: Job
    pending: set[int] = field(default_factory=set)  # id() of the listed nodes not settled


def robots_delay(rules: RobotsTxt, user_agent: str) -> float | None:
    """Seconds between requests a robots.txt asks of ``user_agent``: the larger of its
    ``Crawl-delay`` and its ``Request-rate`` interval (``1/5s``: 5 s), or None."""
    found: list[float] = []
    delay = rules.crawl_delay(user_agent)
    if delay is not None:
        found.append(delay)
    rate = rules.rules.request_rate(user_agent)
    if rate is not None and rate.requests:
        found.append(float(rate.seconds) / float(rate.requests))
    return max(found) if found else None


def allows_everything(rules: RobotsTxt, user_agent: str) -> bool:
    """True when no Allow/Disallow rule applies to ``user_agent`` (the common case): the
    audit then marks every record allowed without asking per URL. Reads protego's rule
    groups; should they change shape, the answer is False and every URL is asked."""
    try:
        group = rules.rules._get_matching_rule_set(user_agent)
    except Exception:  # protego's internals moved: ask per URL
        return False
    return group is None or not getattr(group, "_rules", True)


class RobotsRules:
    """The robots.txt job's events (mixed into :class:`~sitemap_reader.discovery.Discovery`)."""

    if TYPE_CHECKING:
        options: Options
        limits: Limits
        token: str
        jobs: dict[int, Job]
        delays: dict[str, float]
        stopped: str | None

        def _add_child(
            self,
            job: Job,
            url: str,
            kind: str,
            depth: int,
            lastmod: datetime | None,
            actions: list[Action],
            reason: str | None = None,
        ) -> None: ...

    def _robots_begin(self, job: Job) -> list[Action]:
        node = job.node
        ticket = job.ticket(self.token)
        if self.options.walk.robots:
            return [
                Fetch(
                    ticket,
                    node.url,
                    max_redirects=self.limits.max_robots_redirects,
                    retry_connect=job.fallback is None,
                    target=job.site.index,
                    spacing=self.options.politeness.delay,
                )
            ]
        node.skipped = "robots.txt disabled"
        if job.fallback is None:
            return self._robots_end(job)
        job.probe = True
        home = node.url.removesuffix("robots.txt")
        return [
            Fetch(
                ticket,
                home,
                max_redirects=0,
                retry_connect=False,
                body=False,
                target=job.site.index,
                spacing=self.options.politeness.delay,
            )
        ]

    def _robots_response(self, job: Job, url: str, status: int) -> list[Action]:
        node = job.node
        job.reading = False
        if job.probe:
            return []
        node.status, node.final_url = status, url
        if 400 <= status < 500:
            return []  # RFC 9309 §2.3.1.3: unavailable, no restrictions, no sitemaps
        if 500 <= status < 600:
            self._unreachable(job, f"HTTP {status}")
            return []
        if not 200 <= status < 300:
            node.add_problem("http-status", f"robots.txt: HTTP {status}", fatal=True)
            return []
        job.robots_body = bytearray()
        job.reading = True
        return []

    def _robots_chunk(self, job: Job, chunk: bytes) -> list[Action]:
        body = job.robots_body
        assert body is not None
        body += chunk
        cap = self.limits.max_robots_bytes
        if len(body) >= cap:
            job.node.add_problem(
                "limit-robots-bytes", f"robots.txt longer than {cap:,} bytes: rest ignored"
            )
            job.reading = False
        return []

    def _robots_failure(
        self, job: Job, code: str, message: str, cannot_connect: bool
    ) -> list[Action]:
        node = job.node
        job.reading = False
        job.robots_body = None
        if job.probe:
            if cannot_connect and job.fallback is not None:
                node.add_problem("https-unavailable", f"{message}; using http")
                node.url = job.fallback
            job.fallback = None
            return self._robots_end(job)
        if code == "blocked" and job.hops:  # a redirect the guard refused: the host answered
            node.add_problem(code, f"robots.txt: redirect refused: {message}", fatal=True)
            return self._robots_end(job)
        if cannot_connect and job.fallback is not None:
            node.add_problem("https-unavailable", f"{message}; trying http")
            node.url, job.fallback = job.fallback, None
            return self._robots_begin(job)
        if code in UNREACHABLE_CODES:
            self._unreachable(job, message)
        else:
            node.add_problem(code, f"robots.txt: {message}", fatal=True)
        if cannot_connect:
            job.site.unreachable = message
        return self._robots_end(job)

    def _unreachable(self, job: Job, why: str) -> None:
        """RFC 9309 §2.3.1.4: an unreachable robots.txt disallows everything (the audit)."""
        job.node.add_problem(
            "robots-unavailable",
            f"robots.txt unavailable ({why}): everything disallowed until it answers",
            fatal=True,
        )
        self._robots_rules(job, DISALLOW_ALL)

    def _robots_end(self, job: Job) -> list[Action]:
        node, site = job.node, job.site
        job.reading = False
        listed: list[str] = []
        actions: list[Action] = []
        if self.options.walk.robots:
            body = self._robots_text(job)
            base = node.final_url or node.url
            if body is not None:
                job.watch.robots(body)
                cap = self.limits.max_robots_bytes
                rules = parse_robots(body, base, max_bytes=cap)
                listed = list(rules.sitemaps)
                node.format = "robots"
                if rules.is_html:
                    node.add_problem(
                        "robots-html",
                        "robots.txt is an HTML page: its links are not taken as sitemaps",
                    )
                self._robots_rules(job, rules)
            host = host_of(base)
            if site.scope is not None and host:
                site.scope.add_host(host)  # a robots.txt vouches for what it lists
        first = len(node.children)
        for url in listed:
            self._add_child(job, url, "sitemap", 0, None, actions)
        if not listed and site.unreachable is None:
            self._probe(job, actions)
        elif self.options.walk.guess:
            pushed = {id(c) for c in node.children[first:] if c.skipped is None}
            site.listed = Listed(job, pushed) if pushed else None
        job.finished = True
        self.jobs.pop(job.id, None)
        actions.append(Done(node, job.ticket(self.token)))
        return actions

    def _probe(self, job: Job, actions: list[Action]) -> None:
        """The well-known paths of the robots.txt's own origin, as children of its node."""
        if self.options.walk.guess:
            node = job.node
            for url in well_known_urls(node.final_url or node.url, self.options.walk.guess_paths):
                self._add_child(job, url, "guess", 0, None, actions)

    def _listed_settled(self, job: Job) -> list[Action]:
        """A sitemap robots.txt listed has settled: when it was the last of them and none
        led anywhere, robots.txt led nowhere: probe the well-known paths instead."""
        site, node = job.site, job.node
        listed = site.listed
        if listed is None or id(node) not in listed.pending:
            return []
        listed.pending.discard(id(node))
        if found_sitemap(node) or node.unchanged is not None:
            site.listed = None  # one of them leads somewhere: nothing to do
            return []
        if listed.pending or self.stopped is not None:
            return []
        site.listed = None
        robots = listed.robots.node
        count = sum(1 for c in robots.children if c.kind == "sitemap")
        robots.add_problem(
            "robots-led-nowhere",
            f"none of the {count} sitemap(s) robots.txt lists could be read: "
            "probed the well-known paths instead",
        )
        actions: list[Action] = []
        self._probe(listed.robots, actions)
        return actions

    def _robots_rules(self, job: Job, rules: RobotsTxt) -> None:
        """Keep the rules for the robots audit; the host's crawl delay, capped, reported."""
        node, site = job.node, job.site
        site.robots = rules
        site.robots_open = allows_everything(rules, self.options.politeness.user_agent)
        origins = {origin_prefix(node.url), origin_prefix(node.final_url or node.url)}
        site.robots_origins = tuple(o for o in origins if o is not None)
        if not self.options.politeness.crawl_delay:
            return
        asked = robots_delay(rules, self.options.politeness.user_agent)
        if asked is None or asked <= 0:
            return
        cap = self.limits.max_crawl_delay
        if asked > cap:
            node.add_problem(
                "limit-crawl-delay",
                f"robots.txt asks {asked:g} s between requests; {cap:g} s honoured",
            )
        node.crawl_delay = honoured = min(asked, cap)
        for url in (node.url, node.final_url or node.url):
            server = server_of(url)
            self.delays[server] = max(self.delays.get(server, 0.0), honoured)

    def _robots_text(self, job: Job) -> bytes | None:
        """The robots.txt body (None when absent), at most the cap, gunzipped if gzip."""
        data, job.robots_body = job.robots_body, None
        if data is None:
            return None
        cap = self.limits.max_robots_bytes
        if not data.startswith(GZIP_MAGIC):
            return bytes(data[:cap])
        out = bytearray()
        gunzip = Gunzip(max_output=cap, max_members=self.limits.max_gzip_members)
        try:
            for piece in gunzip.feed(bytes(data)):
                out += piece
        except GunzipError as exc:
            job.node.add_problem(exc.code, f"robots.txt: {exc}")
        return bytes(out[:cap])
