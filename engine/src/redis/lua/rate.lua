-- Token bucket and GCRA (rate.h): one timestamp, the moment the bucket is full again. rate.h's
-- two functions decide alike field for field (the same schedule told two ways), so they share
-- this script.
local t = param
local burst = cap * t
local fs, fn = nowS, nowN
-- A limit that settles keeps "<tat> <since>" (algorithms.h Settled): since when the bucket owes,
-- the stamp a settle must match; a full bucket owes nothing and starts owing anew.
local settles, since = ARGV[6] == '1', nil
local v = redis.call('GET', key)
if v then
  local sp = find(v, ' ', 1, true)
  if sp then since, v = sub(v, sp + 1), sub(v, 1, sp - 1) end
  local ts, tn = parse(v)
  if later(ts, tn, nowS, nowN) then fs, fn = ts, tn else since = nil end
end
local os, on = diff(fs, fn, nowS, nowN)
local owed = nil
if os < BIG then owed = os * E9 + on end
if owed and owed < burst then remaining = idiv(burst - owed, t) end
reset = owed or fmt(os, on)
if cost > cap then
  reason = 2
else
  local need = cost * t
  if owed and burst - owed >= need then
    local ttl = owed + need
    local ts, tn = add(fs, fn, need)
    local value = fmt(ts, tn)
    if settles then
      stamp = since or fmt(nowS, nowN)
      value = value .. ' ' .. stamp
    end
    redis.call('SET', key, value, 'PX', px(0, ttl, floorMs))
    remaining, reset = idiv(burst - ttl, t), ttl
  else
    reason = 1
    if owed then retry = owed + (need - burst)
    else retry = fmt(add(os, on, need - burst)) end
  end
end
