--[[
  Forgets a conversation's unanswered messages (its workspace uninstalled the app). A job that
  holds the conversation right now keeps the one message it works on (the head) and finishes
  it; every message behind it goes, so none of them reaches the agent (and bills) after the
  uninstall.

  Input:
    KEYS[1] mailbox     list of unfinished message IDs
    KEYS[2] lease       string (the holding job ID)
    KEYS[3] messages    hash of message records
    KEYS[4] stranded    sorted set of conversations without a job

    ARGV[1] conversation ID (member of KEYS[4])
    ARGV[2..] jobs of the conversation the caller removed before they ran: a lease reserved
              for one of them (see push-7.lua) holds nothing, and goes with the messages

  Output:
    the IDs of the messages forgotten (held: the ones behind the head), for the caller's count and log
]]
local holder = redis.call('GET', KEYS[2])
if holder then
  local removed = false
  for i = 2, #ARGV do
    if ARGV[i] == holder then removed = true end
  end
  if not removed then
    -- Only records of messages not started yet: the head's record (and progress) stays.
    local behind = redis.call('LRANGE', KEYS[1], 1, -1)
    redis.call('LTRIM', KEYS[1], 0, 0)
    for _, id in ipairs(behind) do redis.call('HDEL', KEYS[3], id) end
    return behind
  end
  redis.call('DEL', KEYS[2])
end
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
return ids
