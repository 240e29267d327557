--[[
  Settles whether a message the ingress stopped waiting for (Redis stalled or away past its retry
  bound) was stored, and makes the answer final. A push already written may still run when Redis
  resumes; run on the push's own connection, this runs after it. When the message is not stored,
  it is marked refused, so a push of it that runs later is a no-op (push-7.lua takes any mark
  but 'delivered' and a lease for "queued before"), and the caller that marked it, alone, tells the user:
  two ingress processes that each got one of Slack's two events of a message post one notice.

  Input:
    KEYS[1] seen        string  `seen:<platform>:<messageId>` (src/ingress/seen-ledger.ts): absent,
                                'delivered', a delivery's lease 'claiming:<token>', 'queued', or a
                                refusal mark written here
    ARGV[1] the caller's mark, 'refused:<unique token>'
    ARGV[2] the mark's TTL (s): as long as a push of the message counts as a redelivery

  Output:
    1  refused: marked now, or earlier by this caller (the same mark). The caller tells the user
    0  refused by another caller, who tells the user
    2  stored: the mailbox accepted it (it will be answered)
]]
local seen = redis.call('GET', KEYS[1])
-- A claim or a lease is not a store: the push replaces either with 'queued'.
if not seen or seen == 'delivered' or string.sub(seen, 1, 9) == 'claiming:' then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return 1
end
if seen == ARGV[1] then return 1 end
if string.sub(seen, 1, 8) == 'refused:' then return 0 end
return 2
