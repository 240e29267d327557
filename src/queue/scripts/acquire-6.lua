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
    {'ok', head, record, queued}
                               the lease is ours; record = HMGET of the head's fields, as
                               they were before this call; queued = the conversation's
                               unfinished messages, the head included

  Starting the call (ARGV[5] > 0, fenced): a head with no recorded reply has its `started` count
  raised by one (`record` shows the count from before) and the job's lock is renewed as BullMQ's
  extendLock does, in this same round trip. The worker that calls the agent soon after needs no
  "call started" write of its own: no other worker can hold the lock before the renewed one
  lapses (see Mailbox.acquire).
]]
local rcall = redis.call
--- @include "head-record"
--- @include "acquire-head"
return acquireHead(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6],
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
