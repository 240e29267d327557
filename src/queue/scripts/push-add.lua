--[[
  The ingress's two steps for a message in one round trip (src/queue/push-add.ts): the mailbox
  push (push-6.lua) and, when the caller would then queue the message's job as a plain job,
  BullMQ's addStandardJob, which runs as the function `bullmq` (a verbatim copy of the installed
  BullMQ's script). The push comes first, so no job ever exists before its message.

  The job is added here only where the caller would add it without a priority: the message was
  accepted or seen before, no other job holds its conversation, and its channel has no other
  unfinished message. A channel with a backlog gets a prioritized job, added by the caller after
  this returns (its priority is the backlog, known only now); until then the lease names that
  job and the stranded list the conversation, as between push and add today.

  Set by push-add.ts before this part: ownKeys (index of push-6.lua's first key among KEYS) and
  own (index of its first argument among ARGV), after BullMQ's keys and arguments.

  Output: {push, added}
    push   push-6.lua's output
    added  BullMQ's reply (the job ID, or its negative error code), or nil when it did not run
]]
local rcall = redis.call
--- @include "push-message"

local K, A = {}, {}
for i = 0, 5 do K[i + 1] = KEYS[ownKeys + i] end
for i = 0, 7 do A[i + 1] = ARGV[own + i] end

local pushed = pushMessage(K, A)
local status, pending, held = pushed[1], pushed[2], pushed[3]
local byAnother = held == 1 or held == 2
if status ~= -1 and not byAnother and (status == 0 or pending <= 1) then
  return {pushed, bullmq()}
end
return {pushed}
