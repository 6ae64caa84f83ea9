-- Store::keyspaceAt: one step of a walk over the store's keys (SCAN), each counted as the memory
-- store counts its state at the caller's now: a bucket while it is not fresh again (algorithms.h
-- idleAt later than now), a budget slot while its last use + lifetime is later than now in whole
-- ms, truncated (entry.lua's nowMs). A key of a limit this process has not decided on is
-- counted as Redis holds it. lua_scripts.h has the calling convention.
local sub, find, format = string.sub, string.find, string.format
local tS, tN
if ARGV[5] == '' then
  local t = redis.call('TIME')
  tS, tN = t[1] + 0, t[2] * 1000
end
-- name -> {kind, window ns, leaky rate or period ms, now s, now n, now ms, slot lifetime ms,
-- expire ms}
local limits = {}
for i = 7, #ARGV, 7 do
  local s, n = tS, tN
  if ARGV[i + 4] ~= '' then s, n = ARGV[i + 4] + 0, ARGV[i + 5] + 0 end
  local ms
  if s < 0 then ms = s * 1000 + cdiv(n, 1000000) else ms = s * 1000 + idiv(n, 1000000) end
  limits[ARGV[i]] = {ARGV[i + 1], ARGV[i + 2] + 0, s, n, ms, ARGV[i + 6] + 0, ARGV[i + 3] + 0}
end
-- Key names are "<ns>:{<partition>}:<limit>:<key>" (redis_request.cpp); a limit name has no ':'.
local from = ARGV[3] + 0
local function limitOf(key)
  local at = from
  while true do
    local i = find(key, '}:', at, true)
    if not i then return nil end
    local j = find(key, ':', i + 2, true)
    if j then
      local l = limits[sub(key, i + 2, j - 1)]
      if l then return l end
    end
    at = i + 1
  end
end
-- Whether a bucket's state is fresh again at the limit's now; nil when the state is not the
-- limit's (another algorithm's, written before a change): counted as held.
local function live(key, rtype, l)
  local kind, p, s, n = l[1], l[2], l[3], l[4]
  if rtype == 'list' then
    if kind ~= 'l' then return nil end
    local v = redis.call('LINDEX', key, -1)
    if not v then return false end
    local es, en = parse(v)
    es, en = add(es, en, p)
    return later(es, en, s, n)
  end
  if rtype ~= 'string' or kind == 'l' then return nil end
  local v = redis.call('GET', key)
  local sp = find(v, ' ', 1, true)
  if kind == 'r' or kind == 'f' then
    if sp then v = sub(v, 1, sp - 1) end
    local es, en = parse(v)
    return later(es, en, s, n)
  end
  if not sp then return nil end
  if kind == 'h' then
    -- "<last ms> <tick ms> <current> <previous>": fresh two periods after its tick, or `expire`
    -- after its last count when that comes first (haproxy_rate.h haproxyIdleAt).
    local b = find(v, ' ', sp + 1, true)
    if not b then return nil end
    local ms = sub(v, sp + 1, b - 1) + 2 * p + 1
    local last, ex = sub(v, 1, sp - 1) + 0, l[7]
    if ex > 0 and last + ex < ms then ms = last + ex end
    local es, en = fromMs(ms)
    return later(es, en, s, n)
  end
  if kind == 'w' then
    local b = find(v, ' ', sp + 1, true)
    if not b then return nil end
    local es, en = parse(sub(v, 1, sp - 1))
    if sub(v, sp + 1, b - 1) + 0 > 0 then es, en = add(es, en, p) end
    es, en = add(es, en, p)
    return later(es, en, s, n)
  end
  local es, en = fromMs(sub(v, sp + 1) + cdiv((sub(v, 1, sp - 1) + 1000) * 1000, p))
  return later(es, en, s, n)
end
local cursor, want, seen = ARGV[1], ARGV[4] + 0, 0
local buckets, slots, scopes = 0, 0, 0
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[2], 'COUNT', want)
  cursor = r[1]
  for _, key in ipairs(r[2]) do
    seen = seen + 1
    local rtype, l = redis.call('TYPE', key)['ok'], limitOf(key)
    if rtype == 'zset' then
      local held
      if l and l[6] > 0 then held = redis.call('ZCOUNT', key, format('(%d', l[5] - l[6]), '+inf')
      else held = redis.call('ZCARD', key) end
      if held > 0 then slots, scopes = slots + held, scopes + 1 end
    elseif rtype ~= 'none' then
      local counted = true
      if l then
        counted = live(key, rtype, l)
        if counted == nil then counted = true end
      end
      if counted then buckets = buckets + 1 end
    end
  end
until cursor == '0' or seen >= want
return {cursor, buckets, slots, scopes}
