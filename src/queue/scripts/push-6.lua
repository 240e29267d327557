--[[
  Accepts one message into its conversation's mailbox, once.

  Input:
    KEYS[1] seen        string  `seen:<platform>:<messageId>`, the de-duplication mark
    KEYS[2] mailbox     list    message IDs of the conversation, oldest first
    KEYS[3] messages    hash    the conversation's message records (see mailbox.ts for fields)
    KEYS[4] pending     zset    the channel's unfinished message IDs, scored by arrival (ms)
    KEYS[5] stranded    zset    conversations with messages that no job has taken yet

    ARGV[1] message ID
    ARGV[2] message payload (JSON)
    ARGV[3] seen TTL (s)
    ARGV[4] message TTL (s)
    ARGV[5] now (ms)
    ARGV[6] most unfinished messages a channel may have (0 = no cap)
    ARGV[7] conversation ID (member of `stranded`)

  Output:
    {1, pending}   accepted; pending = the channel's unfinished messages, this one included
    {0, 0}         seen before (a redelivery): nothing written
    {-1, pending}  refused: the channel already has `ARGV[6]` unfinished messages
]]
local rcall = redis.call
if rcall('EXISTS', KEYS[1]) == 1 then return {0, 0} end
local ttl = tonumber(ARGV[4])
-- Entries older than a message's lifetime belong to messages that expired unfinished.
rcall('ZREMRANGEBYSCORE', KEYS[4], '-inf', tonumber(ARGV[5]) - ttl * 1000)
local pending = rcall('ZCARD', KEYS[4])
local cap = tonumber(ARGV[6])
if cap > 0 and pending >= cap then return {-1, pending} end
rcall('SET', KEYS[1], '1', 'EX', ARGV[3])
rcall('HSET', KEYS[3], ARGV[1], ARGV[2])
rcall('EXPIRE', KEYS[3], ttl)
rcall('RPUSH', KEYS[2], ARGV[1])
rcall('EXPIRE', KEYS[2], ttl)
rcall('ZADD', KEYS[4], ARGV[5], ARGV[1])
rcall('EXPIRE', KEYS[4], ttl)
-- Until a job takes the conversation, the sweep may wake it (a crash before the job was added).
rcall('ZADD', KEYS[5], 'NX', ARGV[5], ARGV[7])
return {1, pending + 1}
