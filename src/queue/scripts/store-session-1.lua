--[[
  Stores a Discord shard's gateway session record (adapters/discord/gateway-sessions.ts),
  stamped with Redis's clock as `storedAt`: the next process judges how old the record is by
  Redis's clock too, never by its writer's clock against its own (they may be minutes apart).

  Input:
    KEYS[1] the shard's sessions   hash

    ARGV[1] the session ID (its field)
    ARGV[2] the record, a JSON object without `storedAt`
    ARGV[3] the hash's TTL (ms)

  Output:
    the stamp (Redis's time, ms)
]]
--- @include "redis-now"
local now = redisNowMs()
-- The record is the writer's own JSON object: the stamp goes before its closing brace.
local record = string.sub(ARGV[2], 1, -2) .. ',"storedAt":' .. string.format('%d', now) .. '}'
redis.call('HSET', KEYS[1], ARGV[1], record)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return now
