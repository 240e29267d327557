--[[
  Accepts one message into its conversation's mailbox, once, and says whether a job already
  holds the conversation (then that job drains this message too, and no job need be queued).
  When none does, the lease is reserved for the job the caller queues next (ARGV[8]), so the
  messages that follow before that job runs queue no job of their own: one job per busy
  spell of a conversation, not one per message. A caller that dies before queueing it leaves
  a lease whose job does not exist; the stranded sweep finds it (listed below) and wakes a
  job that takes the lease over, within seconds.

  Input:
    KEYS[1] seen        string  `seen:<platform>:<messageId>`, the ingress's seen ledger
                                (src/ingress/seen-ledger.ts): absent, 'delivered' (an adapter
                                claimed the first delivery) or 'queued' (set here)
    KEYS[2] mailbox     list    message IDs of the conversation, oldest first
    KEYS[3] messages    hash    the conversation's message records (see mailbox.ts for fields)
    KEYS[4] pending     zset    the channel's unfinished message IDs, scored by arrival (ms)
    KEYS[5] stranded    zset    conversations with messages that no job has taken yet
    KEYS[6] lease       string  the job ID that holds (drains) the conversation

    ARGV[1] message ID
    ARGV[2] message payload (JSON)
    ARGV[3] seen TTL (s)
    ARGV[4] message TTL (s)
    ARGV[5] now (ms)
    ARGV[6] most unfinished messages a channel may have (0 = no cap)
    ARGV[7] conversation ID (member of `stranded`)
    ARGV[8] the job ID the caller queues when no job holds the conversation ('' = reserve nothing)

  Output:
    {1, pending, held}  accepted; pending = the channel's unfinished messages, this one included
    {0, 0, held}        queued before (a redelivery): nothing written. Any value but
                        'delivered' counts (the '1' earlier versions wrote, too)
    {-1, pending, 0}    refused: the channel already has `ARGV[6]` unfinished messages

    held: 0 no job held the conversation: the lease is now ARGV[8]'s (queue that job); 1 a job
    holds it and drains the mailbox (push and the holder's advance are atomic, so it cannot
    release the lease without seeing this message); 2 held, and the message at the head is
    waiting out a retry or rate limit; 3 held by ARGV[8] itself (a redelivery: queue that job
    again, a no-op while it exists, which heals a caller that died before queueing it).
]]
local rcall = redis.call

local function held()
  local holder = rcall('GET', KEYS[6])
  if not holder then return 0 end
  if holder == ARGV[8] then return 3 end
  local head = rcall('LINDEX', KEYS[2], 0)
  if head then
    local waits = rcall('HMGET', KEYS[3], head .. ':attempts', head .. ':limited')
    if tonumber(waits[1] or '0') > 0 or tonumber(waits[2] or '0') > 0 then return 2 end
  end
  return 1
end

local seen = rcall('GET', KEYS[1])
if seen and seen ~= 'delivered' then return {0, 0, held()} end
local ttl = tonumber(ARGV[4])
-- Entries older than a message's lifetime belong to messages that expired unfinished.
rcall('ZREMRANGEBYSCORE', KEYS[4], '-inf', tonumber(ARGV[5]) - ttl * 1000)
local pending = rcall('ZCARD', KEYS[4])
local cap = tonumber(ARGV[6])
if cap > 0 and pending >= cap then return {-1, pending, 0} end
rcall('SET', KEYS[1], 'queued', 'EX', ARGV[3])
rcall('HSET', KEYS[3], ARGV[1], ARGV[2])
rcall('EXPIRE', KEYS[3], ttl)
rcall('RPUSH', KEYS[2], ARGV[1])
rcall('EXPIRE', KEYS[2], ttl)
rcall('ZADD', KEYS[4], ARGV[5], ARGV[1])
rcall('EXPIRE', KEYS[4], ttl)
-- Until a job takes the conversation, the sweep looks at it: a crash before the job was
-- added, or a holder that ended without releasing the lease.
rcall('ZADD', KEYS[5], 'NX', ARGV[5], ARGV[7])
local h = held()
if h == 0 and ARGV[8] ~= '' then rcall('SET', KEYS[6], ARGV[8], 'EX', ttl) end
return {1, pending + 1, h}
