--[[
  Included by acquire and advance (rcall must be defined first).

  readHead: the head's record, HMGET of its fields in the order toHead (mailbox.ts) reads them.

  startCall: when the caller starts the call (a lock token and a lock duration given), marks a
  head with a stored message, no reply, no give-up mark and no call started before as `started`
  and renews the job's lock as BullMQ's extendLock does (the lock, then the job out of the stalled
  set), all in the caller's round trip; not when lockFresh (BullMQ locked the job in this same
  script). `started` counts the calls started that recorded neither an answer nor an error (the
  worker died during them): each mark adds one, and the head returned shows the count from before
  it. A head whose earlier call died with its worker is not marked here: the worker marks it right
  before calling again, so a worker killed in between (reading the thread, under load) does not
  count as a second call toward the cap of two.
]]
local function readHead(messagesKey, head)
  local h = head .. ':'
  return rcall('HMGET', messagesKey, head, h .. 'reply', h .. 'posted', h .. 'attempts', h .. 'limited',
    h .. 'started', h .. 'posting', h .. 'agentMessageId', h .. 'gaveUp')
end

local function startCall(messagesKey, lockKey, stalledKey, head, record, token, jobId, lockMs, lockFresh)
  if token == '' or tonumber(lockMs) <= 0 or not record[1] or record[2] or record[9] then return end
  if record[6] and tonumber(record[6]) and tonumber(record[6]) > 0 then return end
  rcall('HINCRBY', messagesKey, head .. ':started', 1)
  if lockFresh then return end
  rcall('SET', lockKey, token, 'PX', lockMs)
  rcall('SREM', stalledKey, jobId)
end
