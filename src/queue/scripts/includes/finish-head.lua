--[[
  Included by advance-9 and by the finish that advances (fetch-acquire.lua). Needs rcall.

  finishHead: the message `done` is answered: when it still is the head, pops it and deletes
  its record (the last "posted" record of its reply) and its channel backlog entry; the
  conversation is no longer stranded either way.
]]
local function finishHead(mailboxKey, messagesKey, pendingKey, strandedKey, conversationId, done)
  if rcall('LINDEX', mailboxKey, 0) == done then
    rcall('LPOP', mailboxKey)
    local d = done .. ':'
    rcall('HDEL', messagesKey, done, d .. 'reply', d .. 'posted', d .. 'attempts', d .. 'limited', d .. 'started',
      d .. 'posting', d .. 'agentMessageId', d .. 'gaveUp', d .. 'chunks')
    rcall('ZREM', pendingKey, done)
  end
  rcall('ZREM', strandedKey, conversationId)
end
