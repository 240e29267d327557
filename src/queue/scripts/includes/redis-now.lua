--[[
  Redis's own clock in ms. Scores that processes on other machines compare (the stranded list,
  a channel's unfinished messages) are taken from here, never from a caller's clock: two
  machines' clocks may be seconds or minutes apart (a VM resumed from pause, a host without NTP).
  Redis replicates a script's effects, so TIME before a write is allowed.
]]
local function redisNowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
