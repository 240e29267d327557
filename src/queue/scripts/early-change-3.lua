--[[
  Keeps its sender's edit or deletion of a message that is not stored yet, for the push that
  stores it to apply (push-7.lua, includes/push-message.lua). Slack delivers events in no order:
  the edit of a question sent a second ago (a password pasted by mistake, edited out) may come
  before the question itself, or its first delivery failed and is retried after the edit.

  Atomic against that push, which runs as one script too: either the message is stored and
  nothing is written here (the caller edits or withdraws the stored record), or the push, run
  after this, finds the change. A message taken in and finished already, or refused, needs no
  change kept: nothing is stored of it any more, and a push of it now is a duplicate.

  A later edit replaces an earlier one kept; one that is older (by its order, when both have
  one) arriving late does not. A deletion is final: no edit replaces it. Once the message is
  stored, the hash keeps only the order of the last edit applied (`at`, for edit-4.lua).

  Input:
    KEYS[1] messages    hash    the conversation's message records
    KEYS[2] seen        string  the message's seen ledger entry (see push-7.lua)
    KEYS[3] early       hash    the change kept: `text` (the edited text as a JSON string; none:
                                withdrawn), `mark` (the give-up mark when withdrawn), `at` (its
                                order), `deleted` ('1': its sender deleted the message)

    ARGV[1] message ID
    ARGV[2] the edited text as a JSON string, or '' to withdraw the message
    ARGV[3] the give-up mark (JSON, a GaveUp with `withdrawn`)
    ARGV[4] the change's order: a string that sorts as the edits were made ('' when unknown)
    ARGV[5] '1': a deletion, '0': an edit
    ARGV[6] how long the change is kept (s), and how recent its message must be (its sent time)
    ARGV[7] the message's sent time (ms, as its platform says)

  Output:
    0  stored: nothing written (change the stored record, edit-4.lua)
    1  taken in and finished already, or refused: nothing written
    2  kept (replacing an earlier change)
    3  a newer change is kept already (a later edit, or a deletion): nothing written
    4  old: the message was sent longer ago than ARGV[6] by Redis's clock (the caller's may be
       minutes off the platform's): no push of it is still to come, nothing written
]]
local rcall = redis.call
--- @include "redis-now"
if math.abs(redisNowMs() - tonumber(ARGV[7])) > tonumber(ARGV[6]) * 1000 then return 4 end
if rcall('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
local seen = rcall('GET', KEYS[2])
-- 'delivered' and a delivery's lease ('claiming:…') are claims: the push is still to come.
if seen and seen ~= 'delivered' and string.sub(seen, 1, 9) ~= 'claiming:' then return 1 end
local kept = rcall('HMGET', KEYS[3], 'at', 'deleted')
if kept[2] then return 3 end
if ARGV[5] ~= '1' and kept[1] and kept[1] ~= '' and ARGV[4] ~= '' and kept[1] >= ARGV[4] then return 3 end
rcall('DEL', KEYS[3])
if ARGV[2] ~= '' then rcall('HSET', KEYS[3], 'text', ARGV[2]) end
rcall('HSET', KEYS[3], 'mark', ARGV[3], 'at', ARGV[4])
if ARGV[5] == '1' then rcall('HSET', KEYS[3], 'deleted', '1') end
rcall('EXPIRE', KEYS[3], ARGV[6])
return 2
