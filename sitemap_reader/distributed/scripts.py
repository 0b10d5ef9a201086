"""The Lua scripts of the queue: each step that must be atomic is one script.

Redis runs a script alone, so each of these is a transaction with a condition in it.

The fence. Every take of a target (a new entry, a takeover, a retry) raises the entry's
*attempt* in its claim (``{ns}:claims``); the entry id and the attempt are the fencing
token of that run. Every step that writes for a run (refresh, publish, commit, fail,
give back) first checks, in the same script, that the claim still names this consumer
and this attempt and that the entry is still pending under it: a worker that was frozen
or cut off past its lease, whose target another worker took, is refused everything. Its
file is attempt-named and renamed into place only after its commit won, so a stale
attempt cannot change what is visible; what it leaves in Redis expires.

The queue's identity. Every script first checks the queue id (``{ns}:id``) the worker
read when it started: after a Redis restart without persistence the id is gone, the
script answers ``SRQUEUEGONE`` and the worker stops, instead of making an empty queue.

Written for Redis 6.2 and 7 alike (no functions, no 7-only options; ``cjson`` is in both).
KEYS[1..3] and ARGV[1..2] are the same in every script of a worker: the queue id key, the
targets stream, the claims hash; the queue id, the group.
"""

from __future__ import annotations

from typing import Final

_PRELUDE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('SRQUEUEGONE the queue is gone from Redis')
end
local function claim_of(id)
  local raw = redis.call('HGET', KEYS[3], id)
  if not raw then return nil end
  return cjson.decode(raw)
end
local function put(id, c) redis.call('HSET', KEYS[3], id, cjson.encode(c)) end
local function pending_to(id, consumer)
  local p = redis.call('XPENDING', KEYS[2], ARGV[2], id, id, 1)
  return #p > 0 and p[1][2] == consumer
end
local function fenced(id, consumer, attempt)
  local c = claim_of(id)
  if not c or c.c ~= consumer or c.a ~= tonumber(attempt) then return nil end
  if not pending_to(id, consumer) then return nil end
  return c
end
local function settle(id)
  redis.call('XACK', KEYS[2], ARGV[2], id)
  redis.call('XDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
end
"""

#: KEYS: queue id, targets. ARGV: a new id, group, "1" to create. The queue's id; when
#: there is none and ``create``, the stream, the group and a new id (None otherwise).
OPEN: Final = """
local id = redis.call('GET', KEYS[1])
if id then return id end
if ARGV[3] ~= '1' then return false end
redis.pcall('XGROUP', 'CREATE', KEYS[2], ARGV[2], '0', 'MKSTREAM')
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
"""

#: KEYS: queue id, targets, claims, known, done, failed, errors. ARGV: queue id, group,
#: again ("1"/"0"), target... Returns {new, requeued}. A target is new when it was never
#: enqueued; with ``again``, a target that is done or failed is queued once more.
ENQUEUE: Final = (
    _PRELUDE
    + """
local new, again = 0, 0
for i = 4, #ARGV do
  local t = ARGV[i]
  if redis.call('SADD', KEYS[4], t) == 1 then
    redis.call('XADD', KEYS[2], '*', 't', t)
    new = new + 1
  elseif ARGV[3] == '1' and (redis.call('HEXISTS', KEYS[5], t) == 1
                             or redis.call('HEXISTS', KEYS[6], t) == 1) then
    redis.call('HDEL', KEYS[5], t)
    redis.call('HDEL', KEYS[6], t)
    redis.call('HDEL', KEYS[7], t)
    redis.call('XADD', KEYS[2], '*', 't', t)
    again = again + 1
  end
end
return {new, again}
"""
)

#: KEYS: queue id, targets, claims. ARGV: queue id, group, consumer, entry id, lease ms.
#: A new entry this consumer just read: its first claim (attempt 1), as JSON; false when
#: the entry is not pending under the consumer. A repeated call gives the same claim.
REGISTER: Final = (
    _PRELUDE
    + """
local id, consumer = ARGV[4], ARGV[3]
if not pending_to(id, consumer) then return false end
local c = claim_of(id)
if c and c.c == consumer then return cjson.encode(c) end
c = c or {a = 0, f = 0, d = 0, q = 0}
c.a, c.c, c.l = c.a + 1, consumer, tonumber(ARGV[5])
put(id, c)
return cjson.encode(c)
"""
)

#: KEYS: queue id, targets, claims. ARGV: queue id, group, consumer, lease ms, cursor,
#: rows to look at. Looks at the pending entries after ``cursor`` and takes the first one
#: idle past *its owner's* lease (given back: at once; failed: after the retry delay).
#: An owner that stopped refreshing died or stalled holding it: a target that was run
#: alone then counts a failure, one run beside others becomes a suspect (``q``: the next
#: run is alone), so a target that kills its workers is found and its neighbours are not.
#: Returns {cursor} or {cursor, id, claim JSON, field, value, ...}.
TAKEOVER: Final = (
    _PRELUDE
    + """
local consumer, lease, rows_max = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[6])
local cursor = ARGV[5]
for pass = 1, 2 do  -- from the cursor to the end, then once more from the start
  local start = cursor == '0-0' and '-' or '(' .. cursor
  local rows = redis.call('XPENDING', KEYS[2], ARGV[2], start, '+', rows_max)
  for _, row in ipairs(rows) do
    local id, owner, idle = row[1], row[2], row[3]
    cursor = id
    local c = claim_of(id)
    local bound = c and c.l or lease
    if idle >= bound then
      local got = redis.call('XCLAIM', KEYS[2], ARGV[2], consumer, bound, id)
      local entry = got[1]
      if entry and entry[2] then
        c = c or {a = 0, f = 0, d = 0, q = 0}
        if owner ~= '~free' and owner ~= '~retry' then
          if c.q == 1 then c.f = c.f + 1 else c.d, c.q = c.d + 1, 1 end
        end
        c.a, c.c, c.l = c.a + 1, consumer, lease
        put(id, c)
        local out = {cursor, id, cjson.encode(c)}
        for _, v in ipairs(entry[2]) do out[#out + 1] = v end
        return out
      else
        settle(id)  -- deleted while pending: nothing to run
      end
    end
  end
  local from_start = start == '-'
  if #rows == rows_max then break end  -- more to look at: the next call goes on
  cursor = '0-0'
  if from_start then break end
end
return {cursor}
"""
)

#: KEYS: queue id, targets, claims, workers. ARGV: queue id, group, consumer, worker info
#: JSON, then entry id, attempt pairs. Resets the idle time of every entry this attempt
#: still holds (XCLAIM JUSTID) and records the worker's heartbeat. 1/0 per pair (0: lost).
HEARTBEAT: Final = (
    _PRELUDE
    + """
redis.call('HSET', KEYS[4], ARGV[3], ARGV[4])
local held = {}
for i = 5, #ARGV, 2 do
  if fenced(ARGV[i], ARGV[3], ARGV[i + 1]) then
    redis.call('XCLAIM', KEYS[2], ARGV[2], ARGV[3], 0, ARGV[i], 'JUSTID')
    held[#held + 1] = 1
  else
    held[#held + 1] = 0
  end
end
return held
"""
)

#: KEYS: queue id, targets, claims, done, errors, state, records, sent, commit.
#: ARGV: queue id, group, consumer, entry id, attempt, target, summary JSON, "1" to store
#: the state, state blob, "1" to mark the records' end, commit TTL s. The fenced commit:
#: mark the target done (with its new state), settle its entry, and set the commit
#: marker that lets the attempt's file be renamed into place. 1, or 0 when refused (a
#: repeated call after a lost reply finds the marker and gives 1 again).
FINISH: Final = (
    _PRELUDE
    + """
if redis.call('EXISTS', KEYS[9]) == 1 then return 1 end
if not fenced(ARGV[4], ARGV[3], ARGV[5]) then return 0 end
redis.call('HSET', KEYS[4], ARGV[6], ARGV[7])
redis.call('HDEL', KEYS[5], ARGV[6])
if ARGV[8] == '1' then redis.call('HSET', KEYS[6], ARGV[6], ARGV[9]) end
if ARGV[10] == '1' then
  redis.call('XADD', KEYS[7], '*', 't', ARGV[6], 'end', ARGV[7])
end
redis.call('DEL', KEYS[8])
settle(ARGV[4])
redis.call('SET', KEYS[9], '1', 'EX', tonumber(ARGV[11]))
return 1
"""
)

#: KEYS: queue id, targets, claims, errors, failed, dead, sent. ARGV: queue id, group,
#: consumer, entry id, attempt, target, error, max failures, retry delay ms, failures to
#: add (1 for a failed run, 0 when the takeover already counted it). Returns 0 (refused),
#: 1 (to be retried: given to ``~retry`` until the delay passed) or 2 (dead-lettered).
FAIL: Final = (
    _PRELUDE
    + """
local id, consumer = ARGV[4], ARGV[3]
local c = fenced(id, consumer, ARGV[5])
if not c then return 0 end
c.f = c.f + tonumber(ARGV[10])
if c.f >= tonumber(ARGV[8]) then
  redis.call('XADD', KEYS[6], '*', 't', ARGV[6], 'error', ARGV[7],
             'failures', c.f, 'attempts', c.a)
  redis.call('HSET', KEYS[5], ARGV[6], ARGV[7])
  redis.call('HDEL', KEYS[4], ARGV[6])
  redis.call('DEL', KEYS[7])
  settle(id)
  return 2
end
redis.call('HSET', KEYS[4], ARGV[6], ARGV[7])
c.c, c.l = '~retry', tonumber(ARGV[9])
put(id, c)
redis.call('XCLAIM', KEYS[2], ARGV[2], '~retry', 0, id, 'IDLE', 0, 'JUSTID')
return 1
"""
)

#: KEYS: queue id, targets, claims. ARGV: queue id, group, consumer, entry id, attempt.
#: Give a target back (a worker shutting down): to ``~free``, which any worker takes at
#: once, at no cost to the target. 1, or 0 when refused.
RELEASE: Final = (
    _PRELUDE
    + """
local id = ARGV[4]
local c = fenced(id, ARGV[3], ARGV[5])
if not c then return 0 end
c.c, c.l = '~free', 0
put(id, c)
redis.call('XCLAIM', KEYS[2], ARGV[2], '~free', 0, id, 'IDLE', 0, 'JUSTID')
return 1
"""
)

#: KEYS: queue id, targets, claims. ARGV: queue id, group, consumer, entry id, attempt.
#: Drop an entry that needs no run (a duplicate of a done target, or not ours).
DISCARD: Final = (
    _PRELUDE
    + """
if not fenced(ARGV[4], ARGV[3], ARGV[5]) then return 0 end
settle(ARGV[4])
return 1
"""
)

#: KEYS: queue id, targets, claims, records, sent. ARGV: queue id, group, consumer, entry
#: id, attempt, target, dedupe TTL s, then key, record JSON pairs. Appends each record
#: whose URL key is new for the target (an attempt after a crash adds only what earlier
#: ones did not); -1 without appending when the attempt is not the owner any more.
PUBLISH: Final = (
    _PRELUDE
    + """
if not fenced(ARGV[4], ARGV[3], ARGV[5]) then return -1 end
local n = 0
for i = 8, #ARGV, 2 do
  if redis.call('SADD', KEYS[5], ARGV[i]) == 1 then
    redis.call('XADD', KEYS[4], '*', 't', ARGV[6], 'r', ARGV[i + 1])
    n = n + 1
  end
end
redis.call('EXPIRE', KEYS[5], tonumber(ARGV[7]))
return n
"""
)

#: KEYS: queue id, targets, claims. ARGV: queue id, group, entry id, attempt. Whether the
#: attempt still holds its claim (a file of it is live, not a dead attempt's leftover).
LIVE: Final = (
    _PRELUDE
    + """
local c = claim_of(ARGV[3])
return c and c.a == tonumber(ARGV[4]) and 1 or 0
"""
)
