"""The Lua scripts of the queue: each step that must be atomic is one script.

Redis runs a script alone, so each of these is a transaction with a condition in it.
Every step that settles a target first checks that the caller still owns the entry (it
is in the group's pending list under the caller's consumer name): a worker whose lease
lapsed and whose target another worker took over can neither refresh, acknowledge nor
fail it any more, so the state and the done marker are written once, by the owner.
Written for Redis 6.2 and 7 alike (no functions, no 7-only options).
"""

from __future__ import annotations

from typing import Final

_OWNED = """
local function owned(stream, group, consumer, id)
  local p = redis.call('XPENDING', stream, group, id, id, 1)
  if #p == 0 or p[1][2] ~= consumer then return nil end
  return p[1]
end
"""

#: KEYS: known, done, failed, errors, targets. ARGV: again ("1"/"0"), target...
#: Returns {new, requeued}. A target is new when it was never enqueued; with ``again``, a
#: target that is done or failed is queued once more (one that is still waiting is not).
ENQUEUE: Final = """
local new, again = 0, 0
for i = 2, #ARGV do
  local t = ARGV[i]
  if redis.call('SADD', KEYS[1], t) == 1 then
    redis.call('XADD', KEYS[5], '*', 't', t)
    new = new + 1
  elseif ARGV[1] == '1' and (redis.call('HEXISTS', KEYS[2], t) == 1
                             or redis.call('HEXISTS', KEYS[3], t) == 1) then
    redis.call('HDEL', KEYS[2], t)
    redis.call('HDEL', KEYS[3], t)
    redis.call('HDEL', KEYS[4], t)
    redis.call('XADD', KEYS[5], '*', 't', t)
    again = again + 1
  end
end
return {new, again}
"""

#: KEYS: targets. ARGV: group, consumer, min idle ms, cursor. The raw XAUTOCLAIM reply
#: (2 elements on Redis 6.2, 3 on 7), unparsed: :func:`~.queue.parse_autoclaim` reads it.
AUTOCLAIM: Final = """
return redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], 'COUNT', 1)
"""

#: KEYS: targets, workers. ARGV: group, consumer, worker info JSON, id...
#: Resets the idle time of every entry still owned (XCLAIM JUSTID does not count a
#: delivery) and records the worker's heartbeat. Returns 1/0 per id (0: lost).
HEARTBEAT: Final = (
    _OWNED
    + """
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
local held = {}
for i = 4, #ARGV do
  if owned(KEYS[1], ARGV[1], ARGV[2], ARGV[i]) then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    held[#held + 1] = 1
  else
    held[#held + 1] = 0
  end
end
return held
"""
)

#: KEYS: targets, done, errors, state, records, sent. ARGV: group, consumer, id, target,
#: summary JSON, "1" to store the state, state blob, "1" to mark the records' end.
#: The output file is already in place: mark the target done (with its new state), and
#: acknowledge and delete its entry, all at once. Returns 1, or 0 when not the owner.
FINISH: Final = (
    _OWNED
    + """
if not owned(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[4], ARGV[5])
redis.call('HDEL', KEYS[3], ARGV[4])
if ARGV[6] == '1' then redis.call('HSET', KEYS[4], ARGV[4], ARGV[7]) end
if ARGV[8] == '1' then
  redis.call('XADD', KEYS[5], '*', 't', ARGV[4], 'end', ARGV[5])
  redis.call('DEL', KEYS[6])
end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
return 1
"""
)

#: KEYS: targets, errors, failed, dead, sent. ARGV: group, consumer, id, target, error,
#: max deliveries, idle ms to set. Returns 0 (not the owner), 1 (will be retried: the
#: entry's idle time is set so that it can be taken again after the retry delay) or 2
#: (dead-lettered: delivered max times already; its records-stream dedupe set goes).
FAIL: Final = (
    _OWNED
    + """
local p = owned(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
if not p then return 0 end
if tonumber(p[4]) >= tonumber(ARGV[6]) then
  redis.call('XADD', KEYS[4], '*', 't', ARGV[4], 'error', ARGV[5], 'deliveries', p[4])
  redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
  redis.call('HDEL', KEYS[2], ARGV[4])
  redis.call('DEL', KEYS[5])
  redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
  redis.call('XDEL', KEYS[1], ARGV[3])
  return 2
end
redis.call('HSET', KEYS[2], ARGV[4], ARGV[5])
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'IDLE', ARGV[7], 'JUSTID')
return 1
"""
)

#: KEYS: targets. ARGV: group, consumer, id, idle ms. Give an owned entry back (a worker
#: shutting down, or a duplicate of a done target with idle 0 and ack): 1, or 0.
RELEASE: Final = (
    _OWNED
    + """
if not owned(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then return 0 end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'IDLE', ARGV[4], 'JUSTID')
return 1
"""
)

#: KEYS: targets. ARGV: group, consumer, id. Drop an owned entry (a duplicate of a
#: target already done, or a deleted entry): acknowledge and delete it.
DISCARD: Final = (
    _OWNED
    + """
if not owned(KEYS[1], ARGV[1], ARGV[2], ARGV[3]) then return 0 end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
return 1
"""
)

#: KEYS: records, sent. ARGV: target, then key, record JSON pairs. Appends each record
#: whose URL key is new for the target: a target run again after a crash adds only what
#: the first run did not. Returns the number appended.
PUBLISH: Final = """
local n = 0
for i = 2, #ARGV, 2 do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
    redis.call('XADD', KEYS[1], '*', 't', ARGV[1], 'r', ARGV[i + 1])
    n = n + 1
  end
end
return n
"""
