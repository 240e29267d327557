--[[
  Moves a conversation's lease from a job that is gone (finished or failed without releasing
  it) to another job, only if the named job still holds it.

  Input:
    KEYS[1] lease       string

    ARGV[1] the job believed gone
    ARGV[2] the new holder
    ARGV[3] lease TTL (s)

  Output:
    1  moved
    0  the lease is not (any more) held by ARGV[1]: nothing written
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
  return 1
end
return 0
