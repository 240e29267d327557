--[[
  A worker's fetch and finish with the mailbox's steps in BullMQ's own round trip
  (src/queue/fetch-acquire.ts). BullMQ's moveToActive or moveToFinished runs as the function
  `bullmq(KEYS, ARGV)` (a verbatim copy of the installed BullMQ's script); around it:

  - before it, only in moveToFinished of a job that answered its head (the finish that
    advances): what advance-9.lua does after the last post, fenced by the job's lock: the head
    is popped and its record deleted (the reply's last "posted" record). The mailbox is then
    normally empty, and the lease is released before BullMQ completes the job. When a message
    arrived meanwhile, the lease goes to the hand-off job ID given (the caller queues that job
    next) and the conversation is listed as stranded, so a caller that dies before queueing it
    is healed by the sweep;
  - after it, when BullMQ hands the worker a job whose data names a conversation: what
    acquire-6.lua does for that job (the fetch that acquires). BullMQ's half locked the job a
    moment ago with the token read here for the lock duration this part is given (the worker's
    lockDuration), so the fence holds by construction: the lock is neither read nor renewed
    again here (a GET, a SET and an SREM fewer per fetched job).

  The keys of those conversations are known only here, so they are built from their parts
  (src/queue/keys.ts gives each key as <before><ID><after>); all share the queue's prefix, so
  they sit in the queue's Redis Cluster slot like BullMQ's own job keys.

  Set by fetch-acquire.ts before this part: optsArg (index of BullMQ's packed options, which
  hold the lock token) and own (index of this part's first argument).

  Input (ARGV from own on):
    +0  lease TTL (s)
    +1  start the fetched job's call: lock duration (ms); 0 = only read (see acquire-6.lua)
    +2, +3   mailbox key before and after the conversation ID
    +4, +5   lease key before and after
    +6, +7   messages key before and after
    +8, +9   BullMQ's lock key before and after the job ID
    +10 stranded key
    +11 stalled key (BullMQ's stalled-candidates set)
    The finish that advances only (moveToFinished; ARGV[1] is the finishing job's ID):
    +12 conversation ID of the finishing job
    +13 the message it answered
    +14 that message's channel backlog key
    +15 hand-off job ID
    +16 unused (was the caller's clock: the hand-off is listed at Redis's own, redis-now.lua)

  Output: {BullMQ's reply, acquire, token, handoff, backlog}
    acquire  acquire-6.lua's output for the job BullMQ handed over, or nil
    token    the lock token it was fenced with, or nil
    handoff  the head left for the hand-off job (its message ID), or nil
    backlog  with a hand-off: the finished message's channel's unfinished messages (ZCARD of
             its backlog key), so the hand-off job goes in line with that channel's priority
]]
local rcall = redis.call
--- @include "head-record"
--- @include "acquire-head"
--- @include "finish-head"
--- @include "redis-now"

local a = own
local function key(at, id) return ARGV[a + at] .. id .. ARGV[a + at + 1] end

local function conversationOf(jobFields)
  for i = 1, #jobFields - 1, 2 do
    if jobFields[i] == 'data' then
      local ok, data = pcall(cjson.decode, jobFields[i + 1])
      if ok and type(data) == 'table' and type(data['conversationId']) == 'string' then
        return data['conversationId']
      end
      return nil
    end
  end
  return nil
end

local token = cmsgpack.unpack(ARGV[optsArg])['token']
if type(token) ~= 'string' or token == '' then token = nil end

local handoff = false
local backlog = 0
local done = ARGV[a + 13]
if done and done ~= '' and token and rcall('GET', key(8, ARGV[1])) == token then
  local conversationId = ARGV[a + 12]
  local mailboxKey, leaseKey = key(2, conversationId), key(4, conversationId)
  finishHead(mailboxKey, key(6, conversationId), ARGV[a + 14], ARGV[a + 10], conversationId, done)
  local waiting = rcall('LINDEX', mailboxKey, 0)
  if waiting then
    rcall('SET', leaseKey, ARGV[a + 15], 'EX', ARGV[a])
    rcall('ZADD', ARGV[a + 10], 'NX', redisNowMs(), conversationId)
    handoff = waiting
    backlog = rcall('ZCARD', ARGV[a + 14])
  elseif rcall('GET', leaseKey) == ARGV[1] then
    rcall('DEL', leaseKey)
  end
end

local result = bullmq(KEYS, ARGV)
local acquired = false
if token and type(result) == 'table' and type(result[1]) == 'table' and type(result[2]) == 'string' then
  local conversationId = conversationOf(result[1])
  if conversationId then
    local jobId = result[2]
    acquired = acquireHead(key(2, conversationId), key(4, conversationId), key(6, conversationId),
      key(8, jobId), ARGV[a + 10], ARGV[a + 11], jobId, ARGV[a], token, conversationId, ARGV[a + 1], true)
  end
end
return {result, acquired, acquired and token, handoff, backlog}
