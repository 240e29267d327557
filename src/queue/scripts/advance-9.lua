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
    KEYS[7] stalled     set     BullMQ's stalled-candidates set of the queue
    KEYS[8] wait        list    BullMQ's waiting jobs of the queue
    KEYS[9] prioritized zset    BullMQ's prioritized jobs of the queue

    ARGV[1] job ID (the holder)
    ARGV[2] finished message ID
    ARGV[3] lease TTL (s)
    ARGV[4] lock token ('' = unfenced)
    ARGV[5] conversation ID
    ARGV[6] start the next message's call: lock duration (ms), as in acquire; 0 = only read
    ARGV[7] '1' when the job's turn is over: it yields if another job waits in line;
            '2' when its worker is shutting down: it yields whenever a next message waits, so
            the next head is only read (no call started) and the job goes back in line

  Output:
    {'lost'}                   the lock is not this job's any more: nothing written
    {'empty'}                  mailbox empty: the lease is released
    {'ok', head, record, backlog, yield, queued}
                               the next message; record = HMGET of its fields as they were
                               before this call, backlog = the channel's unfinished messages
                               (ZCARD of KEYS[5]), yield = 1 when the turn is over and another
                               job waits, or always when handing back (the caller goes back in
                               line; its call is not started),
                               queued = the conversation's unfinished messages, the head included
]]
local rcall = redis.call
--- @include "head-record"
--- @include "finish-head"
if ARGV[4] ~= '' and rcall('GET', KEYS[4]) ~= ARGV[4] then return {'lost'} end
finishHead(KEYS[1], KEYS[3], KEYS[5], KEYS[6], ARGV[5], ARGV[2])
local head = rcall('LINDEX', KEYS[1], 0)
if not head then
  if rcall('GET', KEYS[2]) == ARGV[1] then rcall('DEL', KEYS[2]) end
  return {'empty'}
end
rcall('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
local record = readHead(KEYS[3], head)
-- A turn ends only for someone: with nobody in line, going back in line would be fetched
-- straight back (a delayed move, a fetch and an acquire, for nothing).
local yield = 0
if ARGV[7] == '2' or (ARGV[7] == '1' and rcall('LLEN', KEYS[8]) + rcall('ZCARD', KEYS[9]) > 0) then yield = 1 end
if yield == 0 then startCall(KEYS[3], KEYS[4], KEYS[7], head, record, ARGV[4], ARGV[1], ARGV[6]) end
return {'ok', head, record, rcall('ZCARD', KEYS[5]), yield, rcall('LLEN', KEYS[1])}
