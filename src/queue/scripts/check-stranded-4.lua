--[[
  Looks at one conversation listed in `stranded` (messages accepted, no job seen taking them):
  drops it from the list when nothing waits, else returns its head so the sweep can queue the
  head's job (a no-op when that job exists), or the holder of its lease so the sweep can check
  that job still exists (messages pushed while a job held the conversation queue no job).
  A listed entry is looked at again only later (its score becomes Redis's now, redis-now.lua).

  Input:
    KEYS[1] mailbox     list
    KEYS[2] lease       string
    KEYS[3] messages    hash
    KEYS[4] stranded    zset

    ARGV[1] conversation ID (member of `stranded`)

  Output:
    {'held', head, payload, holder}  a job holds the conversation; the sweep checks it lives
    {'empty'}                 nothing waits: dropped from the list
    {'stranded', head, payload}
]]
local rcall = redis.call
--- @include "redis-now"
local head = rcall('LINDEX', KEYS[1], 0)
if not head then
  rcall('ZREM', KEYS[4], ARGV[1])
  return {'empty'}
end
rcall('ZADD', KEYS[4], 'XX', redisNowMs(), ARGV[1])
local holder = rcall('GET', KEYS[2])
local payload = rcall('HGET', KEYS[3], head)
if holder then return {'held', head, payload, holder} end
return {'stranded', head, payload}
