--[[
  Takes a conversation's lease for a job (when free or already its own) and returns the head
  message. Fenced: a job that no longer holds its BullMQ lock is refused.

  Input:
    KEYS[1] mailbox     list
    KEYS[2] lease       string  the job ID holding the conversation
    KEYS[3] messages    hash
    KEYS[4] lock        string  BullMQ's `<prefix>:chat:<jobId>:lock`, value = the job's token
    KEYS[5] stranded    zset
    KEYS[6] stalled     set     BullMQ's stalled-candidates set of the queue

    ARGV[1] job ID (the holder)
    ARGV[2] lease TTL (s)
    ARGV[3] lock token ('' = unfenced, for tools and tests)
    ARGV[4] conversation ID (member of `stranded`)
    ARGV[5] start the call: lock duration (ms); 0 = only read (see below)

  Output:
    {'lost'}                   the lock is not this job's any more: nothing written
    {'held', holder}           another job holds the conversation (it drains the mailbox)
    {'empty'}                  nothing to do: the lease is released
    {'ok', head, record...}    the lease is ours; record = HMGET of the head's fields, as
                               they were before this call

  Starting the call (ARGV[5] > 0, fenced): a head with no recorded reply is marked `started` and
  the job's lock is renewed as BullMQ's extendLock does, in this same round trip. The worker
  that calls the agent soon after needs no "call started" write of its own: no other worker can
  hold the lock before the renewed one lapses (see Mailbox.acquire).
]]
local rcall = redis.call
--- @include "head-record"
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
local record = readHead(KEYS[3], head)
startCall(KEYS[3], KEYS[4], KEYS[6], head, record, ARGV[3], ARGV[1], ARGV[5])
return {'ok', head, record}
