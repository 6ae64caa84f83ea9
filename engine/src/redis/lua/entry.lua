-- Every consumption script starts here (lua_scripts.h has the calling convention): the
-- arguments, the clock, and the budget step that picks the bucket to charge.
local E9, BIG = 1000000000, 9007198
local sub, find, format = string.sub, string.find, string.format
local nowS, nowN
if ARGV[1] == '' then
  local t = redis.call('TIME')
  nowS, nowN = t[1] + 0, t[2] * 1000
else
  nowS, nowN = ARGV[1] + 0, ARGV[2] + 0
end
local cost, cap, param = ARGV[3] + 0, ARGV[4] + 0, ARGV[5] + 0
local floorMs = 0
if ARGV[7] ~= '0' then floorMs = ARGV[7] + 0 end
-- PX for a key whose state is fresh again (s, n) from now. Redis expires on its own whole-ms
-- clock, taken when the script started, so one more ms keeps the key until after that instant.
local function px(s, n, least)
  local r = math.fmod(n, 1000000)
  local ms = s * 1000 + (n - r) / 1000000 + 1
  if r > 0 then ms = ms + 1 end
  if ms < least then return least end
  return ms
end

-- The budget: a ZSET per scope, member = bucket key, score = last use in whole ms (truncated,
-- as the memory store does); a slot is live while score + slotTtl > now. Levels chain, innermost
-- first: level i's scope holds every bucket charged below it, its own fallback included. The
-- key, or else the innermost fallback, is charged that every scope above it admits: as a live
-- member, or as a newcomer while fewer than `cap` of the scope's slots are live (the memory
-- store drops the expired ones at that point, then compares: the same decision). The outermost
-- fallback is always admitted. Expired slots are dropped below, when a newcomer takes a slot in
-- a scope holding `cap`.
local key, charged, levels = KEYS[1], 0, (#KEYS - 1) / 2
local slotTtl, nowMs, held = 0, 0, {}
if levels > 0 then
  slotTtl = ARGV[8] + 0
  if nowS < 0 then nowMs = nowS * 1000 + cdiv(nowN, 1000000)
  else nowMs = nowS * 1000 + idiv(nowN, 1000000) end
  local since = format('(%d', nowMs - slotTtl)
  for k = 0, levels do
    local name, admitted = ARGV[9 + 2 * k], true
    for i = k + 1, levels do
      local scope = KEYS[2 * i]
      local used = redis.call('ZSCORE', scope, name)
      if used ~= false and used + 0 + slotTtl > nowMs then
        held[i] = -1
      else
        local cap, h = ARGV[8 + 2 * i] + 0, redis.call('ZCARD', scope)
        if h >= cap and redis.call('ZCOUNT', scope, since, '+inf') >= cap then
          admitted = false
          break
        end
        held[i] = h
      end
    end
    if admitted then
      charged = k
      break
    end
  end
  if charged > 0 then key = KEYS[2 * charged + 1] end
end
local reason, remaining, retry, reset, delay, stamp = 0, 0, 0, 0, 0, 0
