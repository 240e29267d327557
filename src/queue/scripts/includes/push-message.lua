--[[
  push-7.lua's body as a function of its keys (K) and arguments (A), so the push can also run
  beside BullMQ's job add in one script (push-add.lua). K and A are as push-7.lua's KEYS and ARGV.
]]

--[[
  The record as its sender's edit or deletion that came first (early-change-3.lua, K[7]) left
  it, or the payload unchanged when none came. An edit replaces the text (the payload's last
  key, so no JSON is decoded here); a withdrawal (the mention edited out, the text emptied, the
  message deleted) stores it with an empty text and marked given up, so no worker calls the
  agent for it or posts for it, as withdraw-1.lua would have marked it once stored. Of the
  change only its order is left, until it expires.
]]
local function withEarlyChange(K, A)
  local early = rcall('HMGET', K[7], 'text', 'mark', 'at')
  if not early[2] then return A[2] end
  -- An edit's order stays (edit-4.lua): an older edit that arrives after the store changes nothing.
  if early[3] and early[3] ~= '' then rcall('HDEL', K[7], 'text', 'mark', 'deleted') else rcall('DEL', K[7]) end
  local head = string.match(A[2], '^(.*,"text":)"')
  if early[1] and head then return head .. early[1] .. '}' end
  rcall('HSET', K[3], A[1] .. ':gaveUp', early[2])
  return head and (head .. '""}') or A[2]
end

local function pushMessage(K, A)
  local function held()
    local holder = rcall('GET', K[6])
    if not holder then return 0 end
    if holder == A[8] then return 3 end
    local head = rcall('LINDEX', K[2], 0)
    if head then
      local waits = rcall('HMGET', K[3], head .. ':attempts', head .. ':limited')
      if tonumber(waits[1] or '0') > 0 or tonumber(waits[2] or '0') > 0 then return 2 end
    end
    return 1
  end

  local seen = rcall('GET', K[1])
  -- 'delivered' and a delivery's lease ('claiming:…') are claims, not a stored message.
  if seen and seen ~= 'delivered' and string.sub(seen, 1, 9) ~= 'claiming:' then return {0, 0, held()} end
  local ttl = tonumber(A[4])
  local now = redisNowMs()
  -- Entries older than a message's lifetime belong to messages that expired unfinished.
  rcall('ZREMRANGEBYSCORE', K[4], '-inf', now - ttl * 1000)
  local pending = rcall('ZCARD', K[4])
  local cap = tonumber(A[6])
  if cap > 0 and pending >= cap then return {-1, pending, 0} end
  rcall('SET', K[1], 'queued', 'EX', A[3])
  rcall('HSET', K[3], A[1], withEarlyChange(K, A))
  rcall('EXPIRE', K[3], ttl)
  rcall('RPUSH', K[2], A[1])
  rcall('EXPIRE', K[2], ttl)
  rcall('ZADD', K[4], now, A[1])
  rcall('EXPIRE', K[4], ttl)
  -- Until a job takes the conversation, the sweep looks at it: a crash before the job was
  -- added, or a holder that ended without releasing the lease.
  rcall('ZADD', K[5], 'NX', now, A[7])
  local h = held()
  if h == 0 and A[8] ~= '' then rcall('SET', K[6], A[8], 'EX', ttl) end
  return {1, pending + 1, h}
end
