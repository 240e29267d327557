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

  An edit older than one applied already (by its order: Slack's `edited.ts`, Discord's
  `edited_timestamp`), arriving late (Slack delivers events in no order; on Discord a hand-over's
  catch-up may replay an edit after a newer one came live), changes nothing: the newest edit stands. The order of the
  last edit applied is kept for a few minutes in the message's early-change hash (`at`, see
  early-change-3.lua; the push leaves it there when it applied an edit that came first).

  Input:
    KEYS[1] messages    hash of the conversation's message records
    KEYS[2] mailbox     list of the conversation's unfinished message IDs
    KEYS[3] lease       the job that holds the conversation
    KEYS[4] early       hash, the message's early-change record (only its `at` is read and written)

    ARGV[1] message ID
    ARGV[2] the record the caller read and edited (compare-and-set)
    ARGV[3] the edited record (JSON), or '' to withdraw the message
    ARGV[4] the give-up mark when withdrawing (JSON, a GaveUp with `withdrawn`)
    ARGV[5] '1': a held head is too late (at-most-once), '0': not
    ARGV[6] the edit's order: digits that sort as the edits were made ('' when unknown)
    ARGV[7] how long the order of the edit applied is kept (s)

  Output:
    0  no record: not stored (not addressed to the bot), already finished, or forgotten
    1  too late: a call of it started (or it was answered, given up on, retried)
    2  edited (or withdrawn)
    3  the record changed since the caller read it: nothing written (read again)
    4  a newer edit was applied already: nothing written
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
if ARGV[6] ~= '' then
  local at = rcall('HGET', KEYS[4], 'at')
  if at and at ~= '' and at >= ARGV[6] then return 4 end
end
if record ~= ARGV[2] then return 3 end
if ARGV[6] ~= '' then
  rcall('HSET', KEYS[4], 'at', ARGV[6])
  rcall('EXPIRE', KEYS[4], ARGV[7])
end
if ARGV[3] == '' then
  rcall('HSET', KEYS[1], p .. 'gaveUp', ARGV[4])
else
  rcall('HSET', KEYS[1], ARGV[1], ARGV[3])
end
return 2
