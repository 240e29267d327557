--[[
  Takes back a job's BullMQ lock that lapsed unseen: Redis was away longer than the lock (or came
  back from its append-only file with it expired), so BullMQ's own renewal finds no lock to
  extend. The job is still its worker's while it is in the active list with no lock: the stalled
  check has not handed it back and no other worker fetched it. Taken back with the same token, and
  out of the stalled set, as BullMQ's extendLock does; refused when any lock is there.

  Input:
    KEYS[1] lock        string  BullMQ's lock of the job
    KEYS[2] stalled     set     BullMQ's stalled-candidates set of the queue
    KEYS[3] active      list    BullMQ's active jobs of the queue

    ARGV[1] lock token
    ARGV[2] lock duration (ms)
    ARGV[3] job ID

  Output:
    1  taken back
    0  refused: a lock is there (this token's or another's), or the job is not active
]]
local rcall = redis.call
if rcall('EXISTS', KEYS[1]) == 1 or not rcall('LPOS', KEYS[3], ARGV[3]) then return 0 end
rcall('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
rcall('SREM', KEYS[2], ARGV[3])
return 1
