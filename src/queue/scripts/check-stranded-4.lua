--[[
  Looks at one conversation listed in `stranded` (messages accepted, no job seen taking them):
  drops it from the list when a job holds it or nothing waits, else returns its head so the
  sweep can queue the head's job (a no-op when that job exists).

  Input:
    KEYS[1] mailbox     list
    KEYS[2] lease       string
    KEYS[3] messages    hash
    KEYS[4] stranded    zset

    ARGV[1] conversation ID (member of `stranded`)
    ARGV[2] now (ms): the entry's new score, so it is looked at again only later

  Output:
    {'held'}                  a job holds the conversation: dropped from the list
    {'empty'}                 nothing waits: dropped from the list
    {'stranded', head, payload}
]]
local rcall = redis.call
if rcall('EXISTS', KEYS[2]) == 1 then
  rcall('ZREM', KEYS[4], ARGV[1])
  return {'held'}
end
local head = rcall('LINDEX', KEYS[1], 0)
if not head then
  rcall('ZREM', KEYS[4], ARGV[1])
  return {'empty'}
end
rcall('ZADD', KEYS[4], 'XX', ARGV[2], ARGV[1])
return {'stranded', head, rcall('HGET', KEYS[3], head)}
