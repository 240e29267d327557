--[[
  Forgets a conversation's unanswered messages (its workspace uninstalled the app), unless a
  job holds the conversation right now: that job finishes what it started.

  Input:
    KEYS[1] mailbox     list of unfinished message IDs
    KEYS[2] lease       string (the holding job ID)
    KEYS[3] messages    hash of message records
    KEYS[4] stranded    sorted set of conversations without a job

    ARGV[1] conversation ID (member of KEYS[4])

  Output:
    n >= 0  messages forgotten
    -1      a job holds the conversation: nothing written
]]
if redis.call('EXISTS', KEYS[2]) == 1 then
  return -1
end
local n = redis.call('LLEN', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
return n
