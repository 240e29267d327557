--[[
  Forgets a conversation's unanswered messages (its workspace uninstalled the app), unless a
  job holds the conversation right now: that job finishes what it started.

  Input:
    KEYS[1] mailbox     list of unfinished message IDs
    KEYS[2] lease       string (the holding job ID)
    KEYS[3] messages    hash of message records
    KEYS[4] stranded    sorted set of conversations without a job

    ARGV[1] conversation ID (member of KEYS[4])
    ARGV[2..] jobs of the conversation the caller removed before they ran: a lease reserved
              for one of them (see push-6.lua) holds nothing, and goes with the messages

  Output:
    n >= 0  messages forgotten
    -1      a job holds the conversation: nothing written
]]
local holder = redis.call('GET', KEYS[2])
if holder then
  local removed = false
  for i = 2, #ARGV do
    if ARGV[i] == holder then removed = true end
  end
  if not removed then return -1 end
  redis.call('DEL', KEYS[2])
end
local n = redis.call('LLEN', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
return n
