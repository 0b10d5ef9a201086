"""One politeness budget per host across processes: the ``host_budget`` option.

:class:`~sitemap_reader.crawl.fetch.Pacer` spaces the requests of one process. Processes
that read the same sites at once (Redis workers, Spark or Ray tasks, CLI runs side by
side) each keep their own gap and together hit a host that many times faster. Given one
Redis URL, :class:`RedisPacer` keeps each host's next free moment in Redis instead, so
the gap holds between all of them.

Theory of operation
-------------------
Each host has a key, ``sitemap-reader:pace:HOST``, holding the start of the latest
request reserved for it, in microseconds of the Redis server's clock (one clock for every
machine), and, while a server asked us to wait, ``sitemap-reader:pace:hold:HOST``.
:meth:`RedisPacer.wait` runs one script that reads the server's time, reserves the host's
next slot (``max(now, latest + gap, hold)``) and returns how long to sleep: one round
trip, atomic, so two processes asking at once get successive slots.
:meth:`RedisPacer.answered` moves the mark to the moment an answer came (never back), as
the in-process pacer does; :meth:`RedisPacer.hold` keeps every process off a host until a
moment (a ``Retry-After``). Keys expire a minute after their last slot, so a dead process
leaves nothing held: there is no token to give back, only a moment that passes.

Redis that cannot be reached does not end a run: the process says so once (a warning)
and paces by itself, as without ``host_budget``, until Redis answers again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from sitemap_reader._safe_text import redact_url
from sitemap_reader.crawl.fetch import Pacer
from sitemap_reader.errors import missing_extra
from sitemap_reader.options import Options

log = logging.getLogger("sitemap_reader")

#: The prefix of the hosts' keys.
PREFIX: Final = "sitemap-reader:pace:"
#: How long a host's key outlives its latest slot (milliseconds).
LINGER_MS: Final = 60_000
#: Seconds a call to Redis may take before the process paces by itself.
REDIS_TIMEOUT: Final = 5.0

# KEYS: the host's mark (the start of its latest reserved request) and its hold (no request
# before it). ARGV: the verb, the gap (us), how far ahead a hold reaches (us), the keys'
# linger (ms). "wait" reserves the next slot and returns the sleep (us); "answered"
# moves the mark to now, never back; "hold" moves the hold to now + ahead, never back.
_SCRIPT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local mark = tonumber(redis.call('GET', KEYS[1]) or '0')
local verb, gap, ahead, linger = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if verb == 'hold' then
  local hold = math.max(tonumber(redis.call('GET', KEYS[2]) or '0'), now + ahead)
  redis.call('SET', KEYS[2], string.format('%d', hold), 'PX',
             math.floor((hold - now) / 1000) + linger)
  return 0
end
local start = now
if verb == 'wait' then
  start = math.max(now, tonumber(redis.call('GET', KEYS[2]) or '0'))
  if gap > 0 then start = math.max(start, mark + gap) end
end
mark = math.max(mark, start)
redis.call('SET', KEYS[1], string.format('%d', mark), 'PX',
           math.floor((mark - now) / 1000) + linger)
return start - now
"""


class RedisPacer:
    """:class:`Pacer`'s promise across every process given the same Redis URL (see the
    module docstring); :meth:`close` it when done (the reader does)."""

    def __init__(self, url: str) -> None:
        try:
            import redis.asyncio as aioredis
            from redis.exceptions import RedisError
        except ImportError as exc:
            raise missing_extra("host_budget needs the Redis client", "distributed") from exc
        self._failures = (RedisError, OSError)  # what means "Redis cannot be reached"
        self.url = url
        self._client: Any = aioredis.Redis.from_url(
            url, socket_timeout=REDIS_TIMEOUT, socket_connect_timeout=REDIS_TIMEOUT
        )
        self._script: Any = self._client.register_script(_SCRIPT)
        self._local = Pacer()  # while Redis cannot be reached
        self._warned = False
        self._pending: set[asyncio.Task[object]] = set()

    async def wait(self, host: str, gap: float) -> None:
        """Sleep until ``host``'s next slot, reserved for this request in Redis."""
        sleep = await self._run(host, gap, "wait")
        if sleep is None:
            await self._local.wait(host, gap)
        elif sleep > 0:
            await asyncio.sleep(sleep / 1e6)

    def answered(self, host: str) -> None:
        """A request to ``host`` has its answer: the next slot counts from now."""
        self._local.answered(host)
        self._later(self._run(host, 0.0, "answered"))

    async def hold(self, host: str, seconds: float) -> None:
        """No process sends ``host`` a request for ``seconds`` from now."""
        await self._local.hold(host, seconds)
        await self._run(host, 0.0, "hold", seconds)

    def _later(self, call: Any) -> None:
        task = asyncio.ensure_future(call)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _run(self, host: str, gap: float, verb: str, ahead: float = 0.0) -> int | None:
        """The script's answer (microseconds), or None when Redis cannot be reached."""
        micros = str(int(gap * 1e6))
        try:
            sleep = await self._script(
                keys=[PREFIX + host, PREFIX + "hold:" + host],
                args=[verb, micros, str(int(ahead * 1e6)), LINGER_MS],
            )
        except self._failures as exc:
            if not self._warned:
                self._warned = True
                shown = redact_url(self.url)
                log.warning("host budget %s cannot be reached (%s): pacing alone", shown, exc)
            return None
        if self._warned:
            self._warned = False
            log.warning("host budget %s answers again", redact_url(self.url))
        return int(sleep)

    async def close(self) -> None:
        """Finish the marks still being sent; close the connection."""
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        await self._client.aclose()


def pacer_for(options: Options) -> Pacer | RedisPacer:
    """The pacer a reader's options ask for: shared through Redis with ``host_budget``,
    else this process's own."""
    url = options.politeness.host_budget
    return Pacer() if url is None else RedisPacer(url)
