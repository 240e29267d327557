--[[
  The ingress's two steps for a message in one round trip (src/queue/push-add.ts): the mailbox
  push (push-7.lua), then the add of the message's job where the caller would add one, as
  BullMQ's own script: `addPlain` (addStandardJob) or `addPrioritized` (addPrioritizedJob),
  verbatim copies of the installed BullMQ's scripts. The push comes first, so no job ever
  exists before its message.

  A job is added when the message was accepted or seen before and no other job holds its
  conversation: a plain job when its channel has no other unfinished message (or it was seen
  before: a redelivery's job is added again, a no-op while it exists), else a job whose priority
  is the channel's backlog (src/queue/priority.ts: the power of two at or below it).

  Called with addStandardJob's keys and arguments (what BullMQ sent), then this part's. Set by
  push-add.ts before it: ownKeys and own, the index of this part's first key and argument.

  Input (KEYS from ownKeys on, ARGV from own on):
    KEYS +0..+6  push-7.lua's keys
    KEYS +7      BullMQ's prioritized zset
    KEYS +8      BullMQ's priority counter
    ARGV +0..+7  push-7.lua's arguments
    ARGV +8      BullMQ's largest priority

  Output: {push, added}
    push   push-7.lua's output
    added  BullMQ's reply (the job ID, or its negative error code), or nil when no job was added
]]
local rcall = redis.call
--- @include "redis-now"
--- @include "push-message"

local K, A = {}, {}
for i = 0, 6 do K[i + 1] = KEYS[ownKeys + i] end
for i = 0, 7 do A[i + 1] = ARGV[own + i] end

local pushed = pushMessage(K, A)
local status, pending, held = pushed[1], pushed[2], pushed[3]
if status == -1 or held == 1 or held == 2 then return {pushed} end
if status == 0 or pending <= 1 then return {pushed, addPlain(KEYS, ARGV)} end

local priority = 1
while priority * 2 <= pending do priority = priority * 2 end
local lowest = tonumber(ARGV[own + 8])
if priority > lowest then priority = lowest end
local opts = cmsgpack.unpack(ARGV[3])
opts['priority'] = priority
-- addStandardJob's keys: wait, paused, meta, id, completed, delayed, active, events, marker.
local keys = {KEYS[9], KEYS[3], KEYS[4], KEYS[ownKeys + 7], KEYS[6], KEYS[5], KEYS[7], KEYS[8], KEYS[ownKeys + 8]}
return {pushed, addPrioritized(keys, {ARGV[1], ARGV[2], cmsgpack.pack(opts)})}
