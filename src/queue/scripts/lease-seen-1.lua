--[[
  Takes a short lease on a platform message for one delivery of it, while that delivery does
  the work a repeat must not do beside it (read its files, charge a quota, post a notice). The
  lease lapses by itself if its holder dies, so a redelivery can take the message over; the
  holder renews it while it works and, once the message is stored, the push (push-7.lua) or
  replace-seen-1.lua turns it into the lasting mark.

  Input:
    KEYS[1] seen        string  `seen:<platform>:<messageId>` (src/ingress/seen-ledger.ts)

    ARGV[1] the lease: 'claiming:' and a random token
    ARGV[2] how long it lasts unless renewed (ms)

  Output:
    1   taken: KEYS[1] holds ARGV[1] for ARGV[2] ms
    0   another delivery holds a live lease (a value starting with 'claiming:'): nothing written
    -1  handled: 'delivered' (handled on the record) or 'queued' (accepted): nothing written
]]
local seen = redis.call('GET', KEYS[1])
if not seen then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if string.sub(seen, 1, 9) == 'claiming:' then return 0 end
return -1
