"""The robots.txt side of the core: the job that finds a site's sitemaps.

RFC 9309: a 4xx robots.txt means "no rules, no sitemaps" (a normal answer); a 5xx or a
network failure is a failure of the robots.txt, not of the site. Either way the site's
well-known sitemap paths are probed when robots.txt lists none (unless the site could
not be reached at all). A robots.txt vouches for its own host: the sitemaps it lists
may list URLs there (``site`` scope). With robots.txt disabled, one GET of the home page
(body unread, redirects not followed) decides whether a bare domain answers over https.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sitemap_reader.discovery.actions import Action, Done, Fetch
from sitemap_reader.discovery.rules import origin_prefix, server_of
from sitemap_reader.discovery.targets import well_known_urls
from sitemap_reader.parse.gunzip import GZIP_MAGIC, Gunzip, GunzipError
from sitemap_reader.parse.robots import RobotsTxt, parse_robots
from sitemap_reader.parse.scope import host_of

if TYPE_CHECKING:
    from datetime import datetime

    from sitemap_reader.discovery.config import Config
    from sitemap_reader.discovery.job import Job
    from sitemap_reader.limits import Limits


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
        config: Config
        limits: Limits
        token: str
        jobs: dict[int, Job]
        delays: dict[str, float]

        def _add_child(
            self,
            job: Job,
            url: str,
            kind: str,
            depth: int,
            lastmod: datetime | None,
            actions: list[Action],
        ) -> None: ...

    def _robots_begin(self, job: Job) -> list[Action]:
        node = job.node
        ticket = job.ticket(self.token)
        if self.config.robots:
            return [
                Fetch(
                    ticket,
                    node.url,
                    max_redirects=self.limits.max_robots_redirects,
                    retry_connect=job.fallback is None,
                    target=job.site.index,
                    delay=self.config.delay,
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
                delay=self.config.delay,
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
        if cannot_connect and job.fallback is not None:
            node.add_problem("https-unavailable", f"{message}; trying http")
            node.url, job.fallback = job.fallback, None
            return self._robots_begin(job)
        node.add_problem(code, f"robots.txt: {message}", fatal=True)
        if cannot_connect:
            job.site.unreachable = message
        return self._robots_end(job)

    def _robots_end(self, job: Job) -> list[Action]:
        node, site = job.node, job.site
        job.reading = False
        listed: list[str] = []
        actions: list[Action] = []
        if self.config.robots:
            body = self._robots_text(job)
            base = node.final_url or node.url
            if body is not None:
                job.watch.robots(body)
                cap = self.limits.max_robots_bytes
                rules = parse_robots(body, base, max_bytes=cap)
                listed = list(rules.sitemaps)
                node.format = "robots"
                self._robots_rules(job, rules)
            host = host_of(base)
            if site.scope is not None and host:
                site.scope.add_host(host)  # a robots.txt vouches for what it lists
        for url in listed:
            self._add_child(job, url, "sitemap", 0, None, actions)
        if not listed and self.config.guess and site.unreachable is None:
            for url in well_known_urls(node.final_url or node.url, self.config.guess_paths):
                self._add_child(job, url, "guess", 0, None, actions)
        job.finished = True
        self.jobs.pop(job.id, None)
        actions.append(Done(node, job.ticket(self.token)))
        return actions

    def _robots_rules(self, job: Job, rules: RobotsTxt) -> None:
        """Keep the rules for the robots audit; the host's crawl delay, capped, reported."""
        node, site = job.node, job.site
        site.robots = rules
        site.robots_open = allows_everything(rules, self.config.user_agent)
        origins = {origin_prefix(node.url), origin_prefix(node.final_url or node.url)}
        site.robots_origins = tuple(o for o in origins if o is not None)
        if not self.config.crawl_delay:
            return
        asked = robots_delay(rules, self.config.user_agent)
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
