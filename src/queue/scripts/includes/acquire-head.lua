--[[
  Included by acquire-6 and by the fetch that acquires (fetch-acquire.ts). Needs rcall and the
  "head-record" include defined first.

  acquireHead: takes a conversation's lease for a job (when free or already its own) and
  returns the head message, as acquire-6.lua documents (its output is this function's).
  lockFresh: BullMQ set the job's lock with this token and duration earlier in the same script
  (the fetch that acquires), so it is neither checked nor renewed again.
]]
local function acquireHead(mailboxKey, leaseKey, messagesKey, lockKey, strandedKey, stalledKey,
                           jobId, leaseTtl, token, conversationId, lockMs, lockFresh)
  if token ~= '' and not lockFresh and rcall('GET', lockKey) ~= token then return {'lost'} end
  local holder = rcall('GET', leaseKey)
  -- A held lease guarantees the holder drains the mailbox, so nothing is stranded.
  rcall('ZREM', strandedKey, conversationId)
  if holder and holder ~= jobId then return {'held', holder} end
  local head = rcall('LINDEX', mailboxKey, 0)
  if not head then
    rcall('DEL', leaseKey)
    return {'empty'}
  end
  rcall('SET', leaseKey, jobId, 'EX', leaseTtl)
  local record = readHead(messagesKey, head)
  startCall(messagesKey, lockKey, stalledKey, head, record, token, jobId, lockMs, lockFresh)
  return {'ok', head, record, rcall('LLEN', mailboxKey)}
end
