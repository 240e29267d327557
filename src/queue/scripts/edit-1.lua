--[[
  Applies its sender's edit to a message that waits for its agent call: its stored record is
  replaced by the edited one, or (an edit that no longer asks the bot) it is marked given up as
  withdraw-1.lua does. Atomic against the read that starts the call (acquire and advance mark
  `started` in the same script that returns the record): the call sends either the record from
  before or the one written here, never half of each. Once a call started, failed, waited out
  a rate limit or answered, the text was sent already: nothing is written (an edit changes
  nothing then, and nothing is called twice).

  Input:
    KEYS[1] messages    hash of the conversation's message records

    ARGV[1] message ID
    ARGV[2] the record the caller read and edited (compare-and-set)
    ARGV[3] the edited record (JSON), or '' to withdraw the message
    ARGV[4] the give-up mark when withdrawing (JSON, a GaveUp with `withdrawn`)

  Output:
    0  no record: not stored (not addressed to the bot), already finished, or forgotten
    1  too late: a call of it started (or it was answered, given up on, retried)
    2  edited (or withdrawn)
    3  the record changed since the caller read it: nothing written (read again)
]]
local rcall = redis.call
local record = rcall('HGET', KEYS[1], ARGV[1])
if not record then return 0 end
local p = ARGV[1] .. ':'
local f = rcall('HMGET', KEYS[1], p .. 'reply', p .. 'started', p .. 'gaveUp', p .. 'attempts', p .. 'limited')
if f[1] or f[3] then return 1 end
for _, i in ipairs({2, 4, 5}) do
  if f[i] and tonumber(f[i]) and tonumber(f[i]) > 0 then return 1 end
end
if record ~= ARGV[2] then return 3 end
if ARGV[3] == '' then
  rcall('HSET', KEYS[1], p .. 'gaveUp', ARGV[4])
else
  rcall('HSET', KEYS[1], ARGV[1], ARGV[3])
end
return 2
