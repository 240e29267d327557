--[[
  Takes a conversation's lease for a job (when free or already its own) and returns the head
  message. Fenced: a job that no longer holds its BullMQ lock is refused.

  Input:
    KEYS[1] mailbox     list
    KEYS[2] lease       string  the job ID holding the conversation
    KEYS[3] messages    hash
    KEYS[4] lock        string  BullMQ's `<prefix>:chat:<jobId>:lock`, value = the job's token
    KEYS[5] stranded    zset

    ARGV[1] job ID (the holder)
    ARGV[2] lease TTL (s)
    ARGV[3] lock token ('' = unfenced, for tools and tests)
    ARGV[4] conversation ID (member of `stranded`)

  Output:
    {'lost'}                   the lock is not this job's any more: nothing written
    {'held', holder}           another job holds the conversation (it drains the mailbox)
    {'empty'}                  nothing to do: the lease is released
    {'ok', head, record...}    the lease is ours; record = HMGET of the head's fields
]]
local rcall = redis.call
if ARGV[3] ~= '' and rcall('GET', KEYS[4]) ~= ARGV[3] then return {'lost'} end
local holder = rcall('GET', KEYS[2])
-- A held lease guarantees the holder drains the mailbox, so nothing is stranded.
rcall('ZREM', KEYS[5], ARGV[4])
if holder and holder ~= ARGV[1] then return {'held', holder} end
local head = rcall('LINDEX', KEYS[1], 0)
if not head then
  rcall('DEL', KEYS[2])
  return {'empty'}
end
rcall('SET', KEYS[2], ARGV[1], 'EX', ARGV[2])
local h = head .. ':'
return {'ok', head, rcall('HMGET', KEYS[3], head, h .. 'reply', h .. 'posted', h .. 'attempts', h .. 'limited',
  h .. 'started', h .. 'posting', h .. 'agentMessageId')}
