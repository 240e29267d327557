--[[
  Replaces a delivery's lease on a platform message (lease-seen-1.lua) only while that delivery
  still holds it (compare-and-set): with itself, to renew it, or with 'delivered' once the
  message was handled on the record. A lease the push turned into 'queued', or that lapsed and
  was taken by another delivery, is left as it is.

  Input:
    KEYS[1] seen        string  `seen:<platform>:<messageId>` (src/ingress/seen-ledger.ts)

    ARGV[1] the lease the caller holds
    ARGV[2] the new value (ARGV[1] again, or 'delivered')
    ARGV[3] its time to live (ms)

  Output:
    1  replaced
    0  not held by the caller: nothing written
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
