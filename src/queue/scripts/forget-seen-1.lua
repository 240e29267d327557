--[[
  Releases an adapter's first-delivery claim on a platform message, so a redelivery is handled
  again (the first attempt could not be handed on). A message the mailbox accepted keeps its
  mark: forgetting it would let a redelivery be queued, and billed, twice.

  Input:
    KEYS[1] seen        string  `seen:<platform>:<messageId>`: 'delivered' (claimed by an
                                adapter) or 'queued' (accepted by push-7)

  Output:
    1  the claim was released
    0  nothing to release: no claim, or the message was queued
]]
if redis.call('GET', KEYS[1]) == 'delivered' then return redis.call('DEL', KEYS[1]) end
return 0
