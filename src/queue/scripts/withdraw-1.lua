--[[
  Withdraws a message its sender deleted before it was answered: marks it given up (the
  worker that reaches it then calls nothing and posts nothing, see MessageProcessor's
  resumeGiveUp). A message whose answer is recorded is left alone: the agent was called and
  billed, and its worker posts it.

  Input:
    KEYS[1] messages    hash of the conversation's message records

    ARGV[1] message ID
    ARGV[2] the give-up mark (JSON, a GaveUp with `withdrawn`)

  Output:
    0  no record: not stored (not addressed to the bot), already finished, or forgotten
    1  answered already (or given up on): nothing written
    2  withdrawn before its call
    3  withdrawn, but a call of it had started (its answer is posted if that call returns)
]]
local rcall = redis.call
if rcall('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
local p = ARGV[1] .. ':'
local f = rcall('HMGET', KEYS[1], p .. 'reply', p .. 'started', p .. 'gaveUp')
if f[1] or f[3] then return 1 end
rcall('HSET', KEYS[1], p .. 'gaveUp', ARGV[2])
if f[2] and tonumber(f[2]) and tonumber(f[2]) > 0 then return 3 end
return 2
