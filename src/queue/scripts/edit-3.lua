--[[
  Applies its sender's edit to a message that waits for its agent call: its stored record is
  replaced by the edited one, or (an edit that no longer asks the bot) it is marked given up as
  withdraw-1.lua does. Atomic against the read that starts the call (acquire and advance mark
  `started` in the same script that returns the record): the call sends either the record from
  before or the one written here, never half of each. Once a call started, failed, waited out
  a rate limit or answered, the text was sent already: nothing is written (an edit changes
  nothing then, and nothing is called twice).

  Under at-most-once the worker reads the head without marking it, and marks `started` just
  before the call: a head that a job holds may have been read already, so it counts as too late
  (ARGV[5] = 1, with the mailbox and lease keys), or the edit could land after the read.

  Input:
    KEYS[1] messages    hash of the conversation's message records
    KEYS[2] mailbox     list of the conversation's unfinished message IDs
    KEYS[3] lease       the job that holds the conversation

    ARGV[1] message ID
    ARGV[2] the record the caller read and edited (compare-and-set)
    ARGV[3] the edited record (JSON), or '' to withdraw the message
    ARGV[4] the give-up mark when withdrawing (JSON, a GaveUp with `withdrawn`)
    ARGV[5] '1': a held head is too late (at-most-once), '0': not

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
if ARGV[5] == '1' and rcall('EXISTS', KEYS[3]) == 1 and rcall('LINDEX', KEYS[2], 0) == ARGV[1] then return 1 end
if record ~= ARGV[2] then return 3 end
if ARGV[3] == '' then
  rcall('HSET', KEYS[1], p .. 'gaveUp', ARGV[4])
else
  rcall('HSET', KEYS[1], ARGV[1], ARGV[3])
end
return 2
