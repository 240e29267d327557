--[[
  Records one step of a message's progress (call started, the agent's reply, posting chunk i,
  a failed attempt), only while the job still holds its BullMQ lock: one round trip that both
  checks ownership and writes, so a worker paused past its lock can never record over the
  worker that took its job.

  Input:
    KEYS[1] lock        string  BullMQ's lock of the job, value = its token
    KEYS[2] messages    hash
    KEYS[3] answered    string  marks the conversation as one the bot answered in

    ARGV[1] lock token ('' = unfenced)
    ARGV[2] message ID
    ARGV[3] answered TTL (s); 0 leaves the mark alone
    ARGV[4..] field, value pairs (field names without the message ID; '' deletes the field)

  Output:
    1  recorded
    0  lost: the lock is not this job's, or the message is finished (its record is gone)
]]
local rcall = redis.call
if ARGV[1] ~= '' and rcall('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if rcall('HEXISTS', KEYS[2], ARGV[2]) == 0 then return 0 end
local prefix = ARGV[2] .. ':'
for i = 4, #ARGV - 1, 2 do
  if ARGV[i + 1] == '' then
    rcall('HDEL', KEYS[2], prefix .. ARGV[i])
  else
    rcall('HSET', KEYS[2], prefix .. ARGV[i], ARGV[i + 1])
  end
end
if tonumber(ARGV[3]) > 0 then rcall('SET', KEYS[3], '1', 'EX', ARGV[3]) end
return 1
