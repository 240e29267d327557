--[[
  Finishes the head message (if it still is the head) and moves to the next one, releasing the
  lease on an empty mailbox. Deleting the finished record is the last "posted" record of a
  reply. Fenced: a job that no longer holds its BullMQ lock is refused.

  Input:
    KEYS[1] mailbox     list
    KEYS[2] lease       string
    KEYS[3] messages    hash
    KEYS[4] lock        string  BullMQ's lock of the job, value = its token
    KEYS[5] pending     zset    the finished message's channel backlog
    KEYS[6] stranded    zset

    ARGV[1] job ID (the holder)
    ARGV[2] finished message ID
    ARGV[3] lease TTL (s)
    ARGV[4] lock token ('' = unfenced)
    ARGV[5] conversation ID

  Output:
    {'lost'}                   the lock is not this job's any more: nothing written
    {'empty'}                  mailbox empty: the lease is released
    {'ok', head, record, backlog}  the next message; record = HMGET of its fields, backlog =
                                   the channel's unfinished messages (ZCARD of KEYS[5])
]]
local rcall = redis.call
if ARGV[4] ~= '' and rcall('GET', KEYS[4]) ~= ARGV[4] then return {'lost'} end
local done = ARGV[2]
if rcall('LINDEX', KEYS[1], 0) == done then
  rcall('LPOP', KEYS[1])
  local d = done .. ':'
  rcall('HDEL', KEYS[3], done, d .. 'reply', d .. 'posted', d .. 'attempts', d .. 'limited', d .. 'started',
    d .. 'posting', d .. 'agentMessageId')
  rcall('ZREM', KEYS[5], done)
end
rcall('ZREM', KEYS[6], ARGV[5])
local head = rcall('LINDEX', KEYS[1], 0)
if not head then
  if rcall('GET', KEYS[2]) == ARGV[1] then rcall('DEL', KEYS[2]) end
  return {'empty'}
end
rcall('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
local h = head .. ':'
return {'ok', head, rcall('HMGET', KEYS[3], head, h .. 'reply', h .. 'posted', h .. 'attempts', h .. 'limited',
  h .. 'started', h .. 'posting', h .. 'agentMessageId'), rcall('ZCARD', KEYS[5])}
