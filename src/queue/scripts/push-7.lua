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
                                claimed the first delivery), 'claiming:<token>' (a delivery's
                                lease, lease-seen-1.lua) or 'queued' (set here)
    KEYS[2] mailbox     list    message IDs of the conversation, oldest first
    KEYS[3] messages    hash    the conversation's message records (see mailbox.ts for fields)
    KEYS[4] pending     zset    the channel's unfinished message IDs, scored by arrival (ms)
    KEYS[5] stranded    zset    conversations with messages that no job has taken yet
    KEYS[6] lease       string  the job ID that holds (drains) the conversation
    KEYS[7] early       hash    its sender's edit or deletion that came before the message
                                (early-change-3.lua); applied to the record stored here, then deleted

    ARGV[1] message ID
    ARGV[2] message payload (JSON, its `text` the last key: an early edit replaces it)
    ARGV[3] seen TTL (s)
    ARGV[4] message TTL (s)
    ARGV[5] unused (was the caller's clock: scores are Redis's own time, redis-now.lua)
    ARGV[6] most unfinished messages a channel may have (0 = no cap)
    ARGV[7] conversation ID (member of `stranded`)
    ARGV[8] the job ID the caller queues when no job holds the conversation ('' = reserve nothing)

  Output:
    {1, pending, held}  accepted; pending = the channel's unfinished messages, this one included
    {0, 0, held}        queued before (a redelivery): nothing written. Any value but
                        'delivered' and a lease counts (the '1' earlier versions wrote, too)
    {-1, pending, 0}    refused: the channel already has `ARGV[6]` unfinished messages

    held: 0 no job held the conversation: the lease is now ARGV[8]'s (queue that job); 1 a job
    holds it and drains the mailbox (push and the holder's advance are atomic, so it cannot
    release the lease without seeing this message); 2 held, and the message at the head is
    waiting out a retry or rate limit; 3 held by ARGV[8] itself (a redelivery: queue that job
    again, a no-op while it exists, which heals a caller that died before queueing it).
]]
local rcall = redis.call
--- @include "redis-now"
--- @include "push-message"

return pushMessage(KEYS, ARGV)
