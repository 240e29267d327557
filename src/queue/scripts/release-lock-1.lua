--[[
  Releases a short lock only if the caller still holds it (compare-and-delete). A lock that
  expired and was taken by someone else keeps its new holder: deleting it would let a third
  taker in beside them.

  Input:
    KEYS[1] lock        string  the lock, holding its taker's token

    ARGV[1] the caller's token

  Output:
    1  released
    0  not held by the caller (expired, or taken by another): nothing written
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
