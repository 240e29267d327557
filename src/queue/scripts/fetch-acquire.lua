--[[
  The second half of a worker's fetch (src/queue/fetch-acquire.ts): BullMQ's own moveToActive or
  moveToFinished runs first, as the function `bullmq` (a verbatim copy of the installed BullMQ's
  script), and when it hands the worker a job whose data names a conversation, this takes that
  conversation's lease for the job and reads the head, as acquire-6.lua would right after, in
  the same round trip. The job's lock was set a moment ago by BullMQ's half with the token read
  here, so the fence holds by construction; it is still checked, as acquire-6 does.

  The keys of the fetched job's conversation are known only here, so they are built from their
  parts (src/queue/keys.ts gives each key as <before><conversation ID><after>); every one shares
  the queue's prefix, so they sit in the queue's Redis Cluster slot like BullMQ's own job keys.

  Set by fetch-acquire.ts before this part: optsArg (index of BullMQ's packed options, which
  hold the lock token) and own (index of this part's first argument).

  Input (ARGV from own on):
    +0  lease TTL (s)
    +1  start the call: lock duration (ms); 0 = only read (see acquire-6.lua)
    +2, +3   mailbox key before and after the conversation ID
    +4, +5   lease key before and after
    +6, +7   messages key before and after
    +8, +9   BullMQ's lock key before and after the job ID
    +10 stranded key
    +11 stalled key (BullMQ's stalled-candidates set)

  Output: BullMQ's reply, unchanged; when it hands over a job of a conversation, with two
  elements appended: [5] acquire-6.lua's output for that job, [6] the lock token it used.
]]
local rcall = redis.call
--- @include "head-record"
--- @include "acquire-head"

local function conversationOf(jobFields)
  for i = 1, #jobFields - 1, 2 do
    if jobFields[i] == 'data' then
      local ok, data = pcall(cjson.decode, jobFields[i + 1])
      if ok and type(data) == 'table' and type(data['conversationId']) == 'string' then
        return data['conversationId']
      end
      return nil
    end
  end
  return nil
end

local result = bullmq()
if type(result) == 'table' and type(result[1]) == 'table' and type(result[2]) == 'string' then
  local conversationId = conversationOf(result[1])
  local token = cmsgpack.unpack(ARGV[optsArg])['token']
  if conversationId and type(token) == 'string' and token ~= '' then
    local jobId = result[2]
    local a = own
    result[5] = acquireHead(ARGV[a + 2] .. conversationId .. ARGV[a + 3],
      ARGV[a + 4] .. conversationId .. ARGV[a + 5],
      ARGV[a + 6] .. conversationId .. ARGV[a + 7],
      ARGV[a + 8] .. jobId .. ARGV[a + 9],
      ARGV[a + 10], ARGV[a + 11], jobId, ARGV[a], token, conversationId, ARGV[a + 1])
    result[6] = token
  end
end
return result
