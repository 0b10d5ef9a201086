"""Sitemap discovery in N Scrapy processes sharing one Redis (scrapy-redis underneath).

What this module owns: the shared state that makes a :class:`RedisSitemapMixin` spider
crawl a site once across many processes on scrapy-redis's queue and dupefilter, with the
limits shared, a clean common end, and no sitemap or page lost to a killed process.

* :class:`Scheduler` extends ``scrapy_redis.scheduler.Scheduler``. Page requests go to
  scrapy-redis's priority queue and dupefilter (one Lua call sets the fingerprint, counts
  ``max_urls`` and queues the request, so nothing is marked seen without being queued).
  Robots.txt and sitemap requests go to a queue of their own, deduplicated by URL across
  all processes and counted against ``max_sitemaps`` (per target, robots.txt not counted).
* A process takes a sitemap with a *lease* (owner and expiry, in the same Lua call that
  pops it) and keeps it alive every ``SITEMAP_READER_REDIS_POLL`` seconds. The sitemap
  counts as done only once every request its callback produced is in Redis: the mixin
  appends a marker request after the callback's output, and Scrapy schedules a
  callback's requests in order, so the marker reaches the scheduler last; a process that
  is locally idle also finishes any lease it still holds (all its output is scheduled by
  then). A lease that expires (its owner was killed) puts the sitemap back in the queue, so
  another process, or the restarted one, reads it again; the pages it had already queued
  are dropped by the dupefilter, the others are queued now.
* A process takes a page the same way (the reliable-queue pattern): the one Lua call that
  pops it from scrapy-redis's queue also records it under a *lease token* (owner and
  expiry, renewed every poll), and the process acknowledges the token only once the
  request is out of Scrapy's engine: downloaded, its callback run to the end (async
  callbacks too) and every item and request that callback produced processed or in Redis,
  or a redirect or retry of it in Redis. The engine's in-progress set is where that is
  visible: it holds the request from its download's start until all of this is over (no
  signal marks the end of a callback: ``item_scraped`` fires per item, ``spider_error`` per
  exception, neither for a callback that yields nothing). A lease that expires (its owner
  was killed or frozen) puts the page back in the queue for another process.
* Each process that popped anything is marked *busy* (same Lua call) until it is locally
  idle again. A process closes only when the shared queues are empty, no lease is held and
  no process is busy, so all processes end together, and none ends while another could
  still produce work. Waiting processes poll every ``SITEMAP_READER_REDIS_POLL`` seconds
  instead of Scrapy's 5 s heartbeat.

What a SIGKILL costs: nothing is lost. The pages and sitemaps the killed process held come
back when their leases expire (``SITEMAP_READER_REDIS_LEASE`` seconds), and are crawled
again: the duplicates are at most the leases it held, the requests it had taken and not
yet acknowledged (its downloads, up to ``CONCURRENT_REQUESTS``, plus the responses its
callbacks were still handling). A process holds at most ``2 x CONCURRENT_REQUESTS`` page
leases: past that it takes no page until some are acknowledged (async callbacks run
beside the downloads, and Scrapy kept taking pages while dozens awaited: 49 leases at
4 concurrent). A process whose reactor is blocked for longer than a
lease has its pages taken over as well (a duplicate, never a loss).

``SCHEDULER_PERSIST`` must be True (enforced): otherwise the first process to close would
delete the shared queue and dupefilter under the others. The state stays in Redis after the
crawl (a restarted process then finds nothing to do); delete the keys ``<spider>:*`` before
crawling the same spider afresh.
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Final

from scrapy import Request
from scrapy.http import Response
from scrapy.utils.request import request_from_dict
from twisted.internet import task

from sitemap_reader._safe_text import printable
from sitemap_reader.errors import UsageError, missing_extra
from sitemap_reader.options import Options
from sitemap_reader.scrapy.driver import META_KEY, SITEMAP_META_KEY
from sitemap_reader.scrapy.settings import RedisOptions, options_from_settings, redis_options
from sitemap_reader.scrapy.spider import SitemapReaderMixin

try:
    from scrapy_redis.dupefilter import RFPDupeFilter
    from scrapy_redis.queue import PriorityQueue
    from scrapy_redis.scheduler import Scheduler as _RedisScheduler
except ImportError as exc:  # pragma: no cover - tested by the extra's presence
    raise missing_extra("sitemap_reader.scrapy.redis needs scrapy-redis", "scrapy-redis") from exc

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler
    from twisted.python.failure import Failure

logger = logging.getLogger("sitemap_reader.scrapy.redis")

#: ``meta`` key of a sitemap request taken from the shared queue: the URL it is leased by.
CLAIM_KEY: Final = "sitemap_reader_claim"
#: ``meta`` key of the marker that ends a sitemap's output: the URL of the sitemap.
DONE_KEY: Final = "sitemap_reader_done"
#: ``meta`` key of the request that only wakes a waiting engine (never stored).
_WAKE_KEY: Final = "sitemap_reader_wake"
#: Default key prefix of the shared state (``%(spider)s`` is the spider's name).
DEFAULT_KEY: Final = RedisOptions().redis_key

# KEYS: known, todo, requests, seq, count; ARGV: url, data, limit (0: none).
# 1 queued, 0 known already, -1 over the limit.
_PUSH_SITEMAP: Final = """
if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
local limit = tonumber(ARGV[3])
if limit > 0 and redis.call('INCR', KEYS[5]) > limit then return -1 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), ARGV[1])
return 1
"""
# KEYS: dupefilter, queue, count; ARGV: fingerprint ('' for dont_filter), score, data, limit.
_PUSH_PAGE: Final = """
if ARGV[1] ~= '' and redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
local limit = tonumber(ARGV[4])
if limit > 0 and redis.call('INCR', KEYS[3]) > limit then return -1 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
"""
# KEYS: todo, requests, expiry, owners, busy, queue, page expiry, page leases;
# ARGV: owner, until, token. A sitemap first, else a page, either leased (a page under
# ``token``, with its queue score, to go back where it was); the owner is busy until idle.
_NEXT: Final = """
while true do
  local popped = redis.call('ZPOPMIN', KEYS[1])
  if not popped[1] then break end
  local data = redis.call('HGET', KEYS[2], popped[1])
  if data then
    redis.call('ZADD', KEYS[3], ARGV[2], popped[1])
    redis.call('HSET', KEYS[4], popped[1], ARGV[1])
    redis.call('ZADD', KEYS[5], ARGV[2], ARGV[1])
    return {'s', data, popped[1]}
  end
end
local page = redis.call('ZRANGE', KEYS[6], 0, 0, 'WITHSCORES')
if page[1] then
  redis.call('ZREM', KEYS[6], page[1])
  redis.call('ZADD', KEYS[7], ARGV[2], ARGV[3])
  redis.call('HSET', KEYS[8], ARGV[3], page[2] .. ' ' .. page[1])
  redis.call('ZADD', KEYS[5], ARGV[2], ARGV[1])
  return {'p', page[1], ARGV[3]}
end
return false
"""
# KEYS: todo, expiry, owners, busy, queue, page expiry, page leases, pages requeued;
# ARGV: owner, now, idle ('1': this owner is idle). Expired leases go back to their queues
# (pages counted), dead owners leave busy; returns {sitemaps requeued, pending, pages requeued}.
_IDLE: Final = """
if ARGV[3] == '1' then redis.call('ZREM', KEYS[4], ARGV[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[2])
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
for _, url in ipairs(expired) do
  redis.call('ZREM', KEYS[2], url)
  redis.call('HDEL', KEYS[3], url)
  redis.call('ZADD', KEYS[1], 0, url)
end
local pages = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', ARGV[2])
for _, token in ipairs(pages) do
  local entry = redis.call('HGET', KEYS[7], token)
  redis.call('ZREM', KEYS[6], token)
  redis.call('HDEL', KEYS[7], token)
  if entry then
    local cut = string.find(entry, ' ', 1, true)
    redis.call('ZADD', KEYS[5], string.sub(entry, 1, cut - 1), string.sub(entry, cut + 1))
  end
end
if #pages > 0 then redis.call('INCRBY', KEYS[8], #pages) end
local pending = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[5])
  + redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[4]) + redis.call('ZCARD', KEYS[6])
return {#expired, pending, #pages}
"""
# KEYS: todo, requests, expiry, owners, done; ARGV: url, owner, release (1: give it back).
_FINISH: Final = """
if ARGV[3] == '1' then
  if redis.call('HGET', KEYS[4], ARGV[1]) == ARGV[2] then
    redis.call('ZREM', KEYS[3], ARGV[1])
    redis.call('HDEL', KEYS[4], ARGV[1])
    redis.call('ZADD', KEYS[1], 0, ARGV[1])
  end
  return 0
end
redis.call('SADD', KEYS[5], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
if redis.call('HGET', KEYS[4], ARGV[1]) == ARGV[2] then
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('HDEL', KEYS[4], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
end
return 1
"""
# KEYS: expiry, owners, busy, page expiry; ARGV: owner, until, n, n sitemap URLs, page
# tokens (the leases this owner still holds; a token reaped meanwhile is not revived).
_RENEW: Final = """
redis.call('ZADD', KEYS[3], 'XX', ARGV[2], ARGV[1])
local n = tonumber(ARGV[3])
for i = 4, 3 + n do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[1] then
    redis.call('ZADD', KEYS[1], 'XX', ARGV[2], ARGV[i])
  end
end
for i = 4 + n, #ARGV do
  redis.call('ZADD', KEYS[4], 'XX', ARGV[2], ARGV[i])
end
return 0
"""


class Keys:
    """The Redis keys of one spider's shared sitemap state (``prefix:name``)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        #: Set: every sitemap URL ever queued (the cross-process "visited").
        self.known = f"{prefix}:known"
        #: Sorted set: sitemap URLs waiting, in discovery order.
        self.todo = f"{prefix}:todo"
        #: Hash: sitemap URL -> its serialized request (until it is done).
        self.requests = f"{prefix}:requests"
        #: Sorted set: leased sitemap URL -> lease expiry (Unix time).
        self.expiry = f"{prefix}:expiry"
        #: Hash: leased sitemap URL -> owner.
        self.owners = f"{prefix}:owners"
        #: Set: sitemap URLs whose requests are all in Redis.
        self.done = f"{prefix}:done"
        #: Sorted set: owner -> expiry, for each process holding popped work.
        self.busy = f"{prefix}:busy"
        #: Hash: owner -> start time, every process that opened (for status and tests).
        self.workers = f"{prefix}:workers"
        self.seq = f"{prefix}:seq"
        #: Counter of page requests admitted (``max_urls``).
        self.urls = f"{prefix}:urls"
        #: Sorted set: lease token of a page taken from the queue -> lease expiry.
        self.page_expiry = f"{prefix}:page_expiry"
        #: Hash: lease token -> ``"<queue score> <serialized request>"``, until acknowledged.
        self.page_leases = f"{prefix}:page_leases"
        #: Counter of page leases put back in the queue (each may be one page fetched twice).
        self.page_requeued = f"{prefix}:page_requeued"

    def sitemaps(self, target: object) -> str:
        """Counter of sitemaps admitted for one target (``max_sitemaps``)."""
        return f"{self.prefix}:sitemaps:{target}"


def owner_pid(owner: str) -> int:
    """The process id in an owner name (``host:pid:nonce``)."""
    return int(owner.split(":")[-2])


def token_owner(token: str) -> str:
    """The owner in a page lease token (``owner/n``)."""
    return token.rpartition("/")[0]


class Scheduler(_RedisScheduler):  # type: ignore[misc]
    """scrapy-redis's scheduler, with shared sitemap leases, limits and a common end.

    Settings: ``SCHEDULER_PERSIST = True`` (required), scrapy-redis's ``REDIS_URL`` and
    ``DUPEFILTER_CLASS = "scrapy_redis.dupefilter.RFPDupeFilter"`` (or a subclass),
    ``SCHEDULER_QUEUE_CLASS`` left at scrapy-redis's ``PriorityQueue``;
    ``SITEMAP_READER_REDIS_LEASE`` (seconds, default 60; a long parse blocks the renewal),
    ``SITEMAP_READER_REDIS_POLL`` (seconds, default 1) and ``SITEMAP_READER_REDIS_KEY``
    (default ``%(spider)s:sitemap_reader``), declared in :class:`RedisOptions`.
    """

    crawler: Crawler
    keys: Keys
    owner: str
    lease: float
    poll: float
    most_held: int
    _prefix: str

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Scheduler:
        """scrapy-redis's constructor, then the checks and the settings of this one."""
        settings = crawler.settings
        if not settings.getbool("SCHEDULER_PERSIST"):
            raise UsageError(
                "sitemap_reader.scrapy.redis.Scheduler needs SCHEDULER_PERSIST = True: "
                "without it the first process to finish deletes the shared queue"
            )
        options = redis_options(settings)
        instance: Scheduler = super().from_crawler(crawler)
        instance.crawler = crawler
        instance.lease = options.redis_lease
        instance.poll = options.redis_poll
        instance.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        instance._prefix = options.redis_key
        #: Page leases held at most: what a SIGKILL may cost in pages fetched again.
        instance.most_held = 2 * max(1, settings.getint("CONCURRENT_REQUESTS"))
        return instance

    # -- Scrapy's scheduler interface ----------------------------------------------------

    def open(self, spider: Spider) -> None:
        """Open scrapy-redis's queue and dupefilter, check them, start the heartbeat."""
        super().open(spider)
        if not isinstance(self.queue, PriorityQueue):
            raise UsageError("SCHEDULER_QUEUE_CLASS must be scrapy_redis.queue.PriorityQueue")
        if not isinstance(self.df, RFPDupeFilter):
            raise UsageError("DUPEFILTER_CLASS must be scrapy_redis.dupefilter.RFPDupeFilter")
        self.keys = Keys(self._prefix % {"spider": spider.name})
        self.codec = self.queue.serializer  # scrapy-redis's (pickle unless configured)
        server = self.server
        self._push_sitemap = server.register_script(_PUSH_SITEMAP)
        self._push_page = server.register_script(_PUSH_PAGE)
        self._next = server.register_script(_NEXT)
        self._idle = server.register_script(_IDLE)
        self._finish = server.register_script(_FINISH)
        self._renew = server.register_script(_RENEW)
        options = _options_of(spider, self.crawler)
        self.limits = options.limits
        self.max_urls = options.delivery.max_urls
        if not isinstance(self._in_progress(), set):
            raise UsageError(
                "sitemap_reader.scrapy.redis.Scheduler needs Scrapy's engine in-progress set "
                "(scrapy>=2.13) to tell when a page's callback is done"
            )
        self.claimed: set[str] = set()
        #: Page requests taken here and not acknowledged yet -> their lease tokens.
        self.held: dict[Request, str] = {}
        self.tokens = itertools.count()
        self.local: deque[Request] = deque()
        self.waiting = False
        server.hset(self.keys.workers, self.owner, str(time.time()))
        self.beat = task.LoopingCall(self._beat)
        self.beat.start(self.poll, now=False)

    def close(self, reason: str) -> None:
        """Give back the leases still held and leave the shared state (persisted)."""
        if getattr(self, "beat", None) is not None and self.beat.running:
            self.beat.stop()
        for url in list(getattr(self, "claimed", ())):
            self._finish(keys=self._finish_keys(), args=[url, self.owner, "1"])
        if hasattr(self, "held"):
            self._settle()
            if self.held:  # unfinished pages: expired now, so the reaping below requeues them
                self.server.zadd(self.keys.page_expiry, dict.fromkeys(self.held.values(), 0))
                self.held.clear()
            self._reap(idle=True)
        super().close(reason)  # persist is enforced: nothing is flushed

    def enqueue_request(self, request: Request) -> bool:
        """Sitemaps to the shared sitemap queue, pages to scrapy-redis's; markers act."""
        meta = request.meta
        if meta.get(_WAKE_KEY):
            return True
        done = meta.get(DONE_KEY)
        if done is not None:
            self._done(done)
            return True
        if SITEMAP_META_KEY in meta:
            claim = meta.get(CLAIM_KEY)
            if claim is not None and claim in self.claimed:
                self.local.append(request)  # a redirect or retry of a sitemap leased here
                return True
            return self._enqueue_sitemap(request)
        return self._enqueue_page(request)

    def next_request(self) -> Request | None:
        """A follow-up of a leased sitemap, else a sitemap (leased), else a page (leased)."""
        if self.local:
            return self.local.popleft()
        self._settle()
        if len(self.held) >= self.most_held:
            # Downloads and callbacks (async ones too) hold this many pages already: take
            # no more until some are done (the engine asks again as each request ends).
            self._stat("page_leases_full")
            return None
        keys = self.keys
        while True:
            token = f"{self.owner}/{next(self.tokens)}"
            reply = self._next(
                keys=[
                    *(keys.todo, keys.requests, keys.expiry, keys.owners, keys.busy),
                    *(self.queue.key, keys.page_expiry, keys.page_leases),
                ],
                args=[self.owner, time.time() + self.lease, token],
            )
            if not reply:
                return None
            kind, data, name = reply
            sitemap = kind in (b"s", "s")
            try:
                request = self._decode(data)
            except Exception as exc:  # e.g. a callback renamed since it was queued
                # Taken for good: a lease left to expire would hand it round forever.
                self._drop(sitemap, name.decode() if isinstance(name, bytes) else name, exc)
                continue
            break
        if sitemap:
            self.claimed.add(request.meta[CLAIM_KEY])
            self._stat("sitemaps_taken")
        else:
            # The engine puts it in its in-progress set before anything else runs.
            self.held[request] = token
            if self.stats is not None:
                self.stats.inc_value("scheduler/dequeued/redis")
                self.stats.max_value("sitemap_reader/redis/page_leases_peak", len(self.held))
        self.waiting = False
        return request

    def has_pending_requests(self) -> bool:
        """True while this process or any other holds or could produce work."""
        if self.local or not self._locally_idle():
            return True
        self._settle()
        if self.held:  # the engine has not let go of a page yet: not idle after all
            return True
        # Idle here: every request of the sitemaps still leased here has been scheduled.
        for url in list(self.claimed):
            self._done(url)
        pending = self._reap(idle=True)
        self.waiting = bool(pending)
        return bool(pending)

    def __len__(self) -> int:
        return len(self.queue) + int(self.server.zcard(self.keys.todo)) + len(self.local)

    # -- the rest ------------------------------------------------------------------------

    def _enqueue_sitemap(self, request: Request) -> bool:
        url = request.url
        ticket = request.meta[SITEMAP_META_KEY]
        request.meta[CLAIM_KEY] = url
        limit = 0 if ticket.get("kind") == "robots" else self.limits.max_sitemaps
        if self.max_urls and self._urls_exhausted():
            self._stat("sitemaps_over_max_urls")
            return False
        keys = self.keys
        result = self._push_sitemap(
            keys=[
                keys.known,
                keys.todo,
                keys.requests,
                keys.seq,
                keys.sitemaps(ticket.get("target")),
            ],
            args=[url, self._encode(request), limit],
        )
        if result == 1:
            self._stat("sitemaps_queued")
            return True
        self._stat("sitemaps_known" if result == 0 else "sitemaps_over_max_sitemaps")
        return False

    def _enqueue_page(self, request: Request) -> bool:
        fingerprint = "" if request.dont_filter else self.df.request_fingerprint(request)
        limit = (self.max_urls or 0) if META_KEY in request.meta else 0
        result = self._push_page(
            keys=[self.df.key, self.queue.key, self.keys.urls],
            args=[fingerprint, -request.priority, self._encode(request), limit],
        )
        if result == 1:
            if self.stats is not None:
                self.stats.inc_value("scheduler/enqueued/redis")
            return True
        if result == 0:
            self.df.log(request, self.spider)
        else:
            self._stat("urls_over_max_urls")
        return False

    def _urls_exhausted(self) -> bool:
        cap = self.max_urls or 0
        return cap > 0 and int(self.server.get(self.keys.urls) or 0) >= cap

    def _done(self, url: str) -> None:
        self.claimed.discard(url)
        self._finish(keys=self._finish_keys(), args=[url, self.owner, "0"])
        self._stat("sitemaps_done")

    def _finish_keys(self) -> list[str]:
        keys = self.keys
        return [keys.todo, keys.requests, keys.expiry, keys.owners, keys.done]

    def _in_progress(self) -> object:
        """The engine's set of requests from download start to callback end (None: gone)."""
        return getattr(getattr(self.crawler.engine, "_slot", None), "inprogress", None)

    def _settle(self) -> None:
        """Acknowledge the pages the engine is done with; keep the rest leased.

        A request leaves the in-progress set once its callback's output has been processed
        (items through the pipelines, requests in the scheduler, so in Redis), or once the
        redirect or retry that replaced it has been scheduled. Without the set (the engine
        is gone) nothing is acknowledged: an unknown page is given back, never dropped.
        """
        in_progress = self._in_progress()
        if not self.held or not isinstance(in_progress, set):
            return
        done = [request for request in self.held if request not in in_progress]
        if not done:
            return
        self._ack([self.held.pop(request) for request in done])

    def _ack(self, tokens: list[str]) -> None:
        with self.server.pipeline() as pipe:  # MULTI: both or neither
            pipe.zrem(self.keys.page_expiry, *tokens)
            pipe.hdel(self.keys.page_leases, *tokens)
            pipe.execute()

    def _drop(self, sitemap: bool, name: str, exc: Exception) -> None:
        """Settle a request from Redis that does not decode, with one line saying so."""
        if sitemap:
            self._finish(keys=self._finish_keys(), args=[name, self.owner, "0"])
        else:
            self._ack([name])
        logger.error(
            "sitemap-reader: dropped a %s request from Redis that does not decode: %s",
            "sitemap" if sitemap else "page",
            printable(f"{type(exc).__name__}: {exc}"),
        )
        self._stat("undecodable_dropped")

    def _reap(self, *, idle: bool) -> int:
        """Put expired leases back in their queues (and leave busy if ``idle``); pending work."""
        keys = self.keys
        sitemaps, pending, pages = self._idle(
            keys=[
                *(keys.todo, keys.expiry, keys.owners, keys.busy),
                *(self.queue.key, keys.page_expiry, keys.page_leases, keys.page_requeued),
            ],
            args=[self.owner, time.time(), "1" if idle else "0"],
        )
        for name, count in (("sitemap", sitemaps), ("page", pages)):
            if count:
                logger.info("sitemap-reader: %d expired %s leases back in the queue", count, name)
                self._stat(f"{name}_leases_expired", int(count))
        return int(pending)

    def _locally_idle(self) -> bool:
        engine = self.crawler.engine
        if engine is None:
            return True
        slot = engine.scraper.slot
        return not engine.downloader.active and (slot is None or slot.is_idle())

    def _beat(self) -> None:
        """Renew this process's leases, requeue expired ones, wake a waiting engine."""
        try:
            self._settle()
            keys = self.keys
            self._renew(
                keys=[keys.expiry, keys.owners, keys.busy, keys.page_expiry],
                args=[
                    *(self.owner, time.time() + self.lease, len(self.claimed)),
                    *sorted(self.claimed),
                    *self.held.values(),
                ],
            )
            if not self.waiting:  # a busy process takes back dead leases too
                self._reap(idle=False)
        except Exception as exc:  # a Redis hiccup: the next beat tries again
            logger.warning("sitemap-reader: lease renewal failed: %s", exc)
            return
        engine = self.crawler.engine
        if engine is None or engine.spider is None:
            return
        if self.waiting or not engine.needs_backout():
            # A process with room for more (idle, or waiting on one long download) would
            # only ask the shared queue again on Scrapy's 5 s heartbeat; crawl() runs the
            # engine's next loop now (the request itself is dropped by enqueue_request).
            engine.crawl(Request("data:,", meta={_WAKE_KEY: True}, dont_filter=True))

    def _encode(self, request: Request) -> bytes:
        data: bytes = self.codec.dumps(request.to_dict(spider=self.spider))
        return data

    def _decode(self, data: bytes) -> Request:
        return request_from_dict(self.codec.loads(data), spider=self.spider)

    def _stat(self, name: str, count: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"sitemap_reader/redis/{name}", count)


def _options_of(spider: Spider, crawler: Crawler) -> Options:
    """The spider's options (the mixin's), else those of the ``SITEMAP_READER_*`` settings."""
    driver = getattr(spider, "_sitemap_reader", None)
    if callable(driver):
        options: Options = driver().options
        return options
    return options_from_settings(crawler.settings)[0]


class RedisSitemapMixin(SitemapReaderMixin):
    """:class:`SitemapReaderMixin` for N processes on :class:`Scheduler` (scrapy-redis).

    The same attributes and callbacks; each robots.txt / sitemap callback's output ends with
    a marker telling the scheduler that every request of that sitemap is in Redis. No
    process judges the run's targets: each reads only some of the sitemaps.
    """

    _sitemap_reader_verdict = False

    def _sitemap_reader_parse(self, response: Response) -> Iterator[Request]:
        """The mixin's callback, then the end-of-sitemap marker."""
        return _ended(super()._sitemap_reader_parse(response), response.meta, response.url)

    def _sitemap_reader_failed(self, failure: Failure) -> Iterator[Request]:
        """The mixin's errback, then the end-of-sitemap marker."""
        request = getattr(failure, "request", None)
        meta = request.meta if request is not None else {}
        url = request.url if request is not None else "data:,"
        return _ended(super()._sitemap_reader_failed(failure), meta, url)


def _ended(output: Iterable[Request], meta: dict[str, Any], url: str) -> Iterator[Request]:
    """``output``, then a marker request for the sitemap leased in ``meta`` (if any)."""
    try:
        yield from output
    except Exception:  # the sitemap is finished all the same; a re-read would fail again
        logger.exception("sitemap-reader: a sitemap callback failed: %s", url)
    claim = meta.get(CLAIM_KEY)
    if claim is not None:
        yield Request(
            url, meta={DONE_KEY: claim, "allow_offsite": True, "depth_reset": True},
            dont_filter=True,
        )  # fmt: skip
