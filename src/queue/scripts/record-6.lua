--[[
  Records one step of a message's progress (call started, the agent's reply, posting chunk i,
  a failed attempt), only while the job still holds its BullMQ lock, and renews that lock as
  BullMQ's own extendLock does: one round trip that checks ownership, keeps it and writes, so a
  worker paused past its lock can never record over the worker that took its job.
  A stale worker still records `posted` (a chunk it did post is a fact, whoever owns the job
  now) but nothing that starts a new step. `posted` only ever grows: a stale worker's lower
  count never hides chunks the new owner already posted.
  A lock that lapsed while nobody took the job (Redis was away longer than the lock, or came back
  from its append-only file with the lock expired) is this worker's still, as long as the job is
  in BullMQ's active list: the stalled check has not handed it back and no other worker fetched
  it (either would have set or left no lock with the job out of `active`). The lock is taken
  back with this token, in this same script, so the stalled check cannot hand the job out after.
  Only a lock held by another token, or a job no longer active, is refused.

  Input:
    KEYS[1] lock        string  BullMQ's lock of the job, value = its token
    KEYS[2] messages    hash
    KEYS[3] answered    string  marks the conversation as one the bot answered in
    KEYS[4] stalled     set     BullMQ's stalled-candidates set of the queue
    KEYS[5] active      list    BullMQ's active jobs of the queue
    KEYS[6] seen        string  the message's mark in the ingress's seen ledger (kept a day)

    ARGV[1] lock token ('' = unfenced)
    ARGV[2] message ID
    ARGV[3] answered TTL (s); 0 leaves the mark alone
    ARGV[4] lock duration (ms) to renew the lock for; 0 = do not renew
    ARGV[5] job ID (member of `stalled`)
    ARGV[6..] field, value pairs (field names without the message ID; '' deletes the field)

  Output:
    1  recorded (a lapsed lock taken back, see above, when a lock duration was given)
    0  lost: the lock is not this job's (only `posted` was recorded), or the message is finished
   -1  gone: no record of the message and no seen mark either: Redis lost its data (restarted
       without persistence), so nobody else has the message; nothing was written
]]
local rcall = redis.call
if rcall('HEXISTS', KEYS[2], ARGV[2]) == 0 then
  -- A finished message leaves its seen mark behind for a day; a message Redis lost does not.
  if rcall('EXISTS', KEYS[6]) == 0 then return -1 end
  return 0
end
local prefix = ARGV[2] .. ':'
local lock = rcall('GET', KEYS[1])
local owned = ARGV[1] == '' or lock == ARGV[1]
-- Lapsed unseen, the job still active: renewed below (a lock duration is needed to take it back).
if not owned and not lock and tonumber(ARGV[4]) > 0 and rcall('LPOS', KEYS[5], ARGV[5]) then owned = true end
-- The fields are written in one HSET and one HDEL: each call from Lua costs Redis CPU.
local sets, dels = {}, {}
for i = 6, #ARGV - 1, 2 do
  if ARGV[i] == 'posted' then
    local current = tonumber(rcall('HGET', KEYS[2], prefix .. 'posted') or '0')
    local value = tonumber(ARGV[i + 1])
    if value and value > current then
      sets[#sets + 1] = prefix .. 'posted'
      sets[#sets + 1] = ARGV[i + 1]
    end
  elseif owned then
    if ARGV[i + 1] == '' then
      dels[#dels + 1] = prefix .. ARGV[i]
    else
      sets[#sets + 1] = prefix .. ARGV[i]
      sets[#sets + 1] = ARGV[i + 1]
    end
  end
end
if #sets > 0 then rcall('HSET', KEYS[2], unpack(sets)) end
if #dels > 0 then rcall('HDEL', KEYS[2], unpack(dels)) end
if not owned then return 0 end
if ARGV[1] ~= '' and tonumber(ARGV[4]) > 0 then
  rcall('SET', KEYS[1], ARGV[1], 'PX', ARGV[4])
  rcall('SREM', KEYS[4], ARGV[5])
end
if tonumber(ARGV[3]) > 0 then rcall('SET', KEYS[3], '1', 'EX', ARGV[3]) end
return 1
