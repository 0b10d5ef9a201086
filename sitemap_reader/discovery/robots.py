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
had listed none (:class:`~sitemap_reader.discovery.job.Listed` watches the listed ones
settle). A robots.txt vouches
for its own host: the sitemaps it lists may list URLs there (``site`` scope). With
robots.txt disabled, one GET of the home page (body unread, redirects not followed)
decides whether a bare domain answers over https.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from sitemap_reader.discovery import evidence
from sitemap_reader.discovery.actions import Action, Fetch
from sitemap_reader.discovery.children import Children
from sitemap_reader.discovery.job import Job
from sitemap_reader.discovery.model import Skipped
from sitemap_reader.discovery.parsing import Expired
from sitemap_reader.discovery.robots_audit import origin_prefix
from sitemap_reader.discovery.rules import server_of
from sitemap_reader.discovery.run_state import RunState
from sitemap_reader.discovery.scheduling import Scheduling
from sitemap_reader.discovery.settle import Settling
from sitemap_reader.parse.gunzip import GZIP_MAGIC, Gunzip, GunzipError
from sitemap_reader.parse.robots import RobotsTxt, parse_robots
from sitemap_reader.parse.scope import host_of

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


def robots_delay(rules: RobotsTxt, agent: str) -> float | None:
    """Seconds between requests a robots.txt asks of ``agent``: the larger of its
    ``Crawl-delay`` and its ``Request-rate`` interval (``1/5s``: 5 s), or None."""
    found = [s for s in (rules.crawl_delay(agent), rules.request_interval(agent)) if s is not None]
    return max(found) if found else None


class RobotsJob:
    """The part of the jobs of kind ``robots`` (see the module docstring)."""

    def __init__(
        self, state: RunState, scheduling: Scheduling, children: Children, settling: Settling
    ) -> None:
        self.state = state
        self.scheduling = scheduling
        self.children = children
        self.settling = settling

    def begin(self, job: Job) -> list[Action]:
        """Fetch robots.txt; with robots.txt disabled, only see whether https answers."""
        state, node = self.state, job.node
        ticket = job.ticket(state.token)
        spacing = state.options.politeness.delay
        if state.options.walk.robots:
            return [
                Fetch(
                    ticket,
                    node.url,
                    max_redirects=state.limits.max_robots_redirects,
                    retry_connect=job.fallback is None,
                    target=job.site.index,
                    spacing=spacing,
                    client=job.site.client,
                )
            ]
        node.skipped = Skipped("robots-off", "robots.txt not read (robots off)")
        if job.fallback is None:
            return self.end(job)
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
                spacing=spacing,
                client=job.site.client,
            )
        ]

    def follows(self, job: Job, key: str) -> bool:
        """A robots.txt follows every redirect (a failure after one is the hop's)."""
        job.hops.add(key)
        return True

    def refused(self, job: Job, url: str, redirects: Sequence[str]) -> list[Action]:
        """A hop refused (robots.txt follows every one, so only a driver's own refusal)."""
        return self.settling.refused(job, url, redirects, self.failure)

    def response(
        self,
        job: Job,
        url: str,
        status: int,
        fields: Mapping[str, str],
        max_body: int | None,
    ) -> list[Action]:
        """RFC 9309 2.3.1: 2xx is read, 4xx means no rules, 5xx disallows everything."""
        node = job.node
        job.reading = False
        if job.probe:
            return []
        node.status, node.final_url = status, url
        refusal = evidence.heard(job, status, fields)
        if 400 <= status < 500:
            job.reading = refusal  # its body says whether bot protection answered
            return []  # RFC 9309 §2.3.1.3: unavailable, no restrictions, no sitemaps
        if 500 <= status < 600:
            self._unreachable(job, f"HTTP {status}")
            job.reading = refusal
            return []
        if not 200 <= status < 300:
            node.add_problem("http-status", f"robots.txt: HTTP {status}", fatal=True)
            return []
        job.robots_body = bytearray()
        job.reading = True
        return []

    def body(self, job: Job, chunk: bytes, expired: Expired | None = None) -> list[Action]:
        """Gather the body, up to ``Limits.max_robots_bytes``."""
        node = job.node
        node.bytes += len(chunk)
        self.state.stats.bytes += len(chunk)
        body = job.robots_body
        wanted = evidence.gather(job, chunk)
        if body is None:
            job.reading = wanted
            return []
        body += chunk
        cap = self.state.limits.max_robots_bytes
        if len(body) >= cap:
            node.add_problem(
                "limit-robots-bytes", f"robots.txt longer than {cap:,} bytes: rest ignored"
            )
            job.reading = False
        return []

    def parsed(self, job: Job) -> list[Action]:
        """A robots.txt is parsed at its end, here: nothing is ever waiting elsewhere."""
        return []

    def failure(
        self, job: Job, code: str, message: str, cannot_connect: bool, status: int | None
    ) -> list[Action]:
        """The fetch failed: http after https, "unreachable", or the site's verdict."""
        node = job.node
        job.reading = False
        job.robots_body = None
        if job.probe:
            if cannot_connect and job.fallback is not None:
                node.add_problem("https-unavailable", f"{message}; using http")
                node.url = job.fallback
            job.fallback = None
            return self.end(job)
        if code == "blocked" and job.hops:  # a redirect the guard refused: the host answered
            node.add_problem(code, f"robots.txt: redirect refused: {message}", fatal=True)
            return self.end(job)
        if cannot_connect and job.fallback is not None:
            node.add_problem("https-unavailable", f"{message}; trying http")
            node.url, job.fallback = job.fallback, None
            return self.begin(job)
        if code in UNREACHABLE_CODES:
            self._unreachable(job, message)
        else:
            node.add_problem(code, f"robots.txt: {message}", fatal=True)
        if cannot_connect and node is job.site.root:  # not a twin's or a parent's
            job.site.unreachable = message
        return self.end(job)

    def end(self, job: Job) -> list[Action]:
        """The body ended: the rules for the audit, the sitemaps it lists (or the probes)."""
        state, node, site = self.state, job.node, job.site
        job.reading = False
        evidence.judge(job)
        listed: list[str] = []
        actions: list[Action] = []
        if state.options.walk.robots:
            body = self._text(job)
            base = node.final_url or node.url
            if body is not None:
                job.watch.robots(body)
                rules = parse_robots(body, base, max_bytes=state.limits.max_robots_bytes)
                listed = list(rules.sitemaps)
                node.format = "robots"
                if rules.is_html:
                    node.add_problem(
                        "robots-html",
                        "robots.txt is an HTML page: its links are not taken as sitemaps",
                    )
                self._rules(job, rules)
            host = host_of(base)
            if site.url_scope is not None and host:
                site.url_scope.add_host(host)  # a robots.txt vouches for what it lists
        self.children.from_robots(job, listed, actions)
        actions.append(self.scheduling.close(job))
        return actions

    def _unreachable(self, job: Job, why: str) -> None:
        """RFC 9309 §2.3.1.4: an unreachable robots.txt disallows everything (the audit)."""
        job.node.add_problem(
            "robots-unavailable",
            f"robots.txt unavailable ({why}): everything disallowed until it answers",
            fatal=True,
        )
        self._rules(job, DISALLOW_ALL)

    def _rules(self, job: Job, rules: RobotsTxt) -> None:
        """Keep the rules for the robots audit; the host's crawl delay, capped, reported."""
        state, node = self.state, job.node
        origins = (origin_prefix(node.url), origin_prefix(node.final_url or node.url))
        job.site.audit.read(rules, origins)
        politeness = state.options.politeness
        if not politeness.crawl_delay:
            return
        asked = robots_delay(rules, politeness.robots_agent or politeness.user_agent)
        if asked is None or asked <= 0:
            return
        cap = state.limits.max_crawl_delay
        if asked > cap:
            node.add_problem(
                "limit-crawl-delay",
                f"robots.txt asks {asked:g} s between requests; {cap:g} s honoured",
            )
        node.crawl_delay = honoured = min(asked, cap)
        delays = state.delays
        for url in (node.url, node.final_url or node.url):
            server = server_of(url)
            delays[server] = max(delays.get(server, 0.0), honoured)

    def _text(self, job: Job) -> bytes | None:
        """The robots.txt body (None when absent), at most the cap, gunzipped if gzip."""
        data, job.robots_body = job.robots_body, None
        if data is None:
            return None
        limits = self.state.limits
        cap = limits.max_robots_bytes
        if not data.startswith(GZIP_MAGIC):
            return bytes(data[:cap])
        out = bytearray()
        gunzip = Gunzip(max_output=cap, max_members=limits.max_gzip_members)
        try:
            for piece in gunzip.feed(bytes(data)):
                out += piece
        except GunzipError as exc:
            job.node.add_problem(exc.code, f"robots.txt: {exc}")
        return bytes(out[:cap])
