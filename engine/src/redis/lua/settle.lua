-- Store::settle (rate.h rateSettle, window.h fixedWindowSettle): the bucket is adjusted only if
-- it still holds the charge, i.e. carries the stamp the consumption returned and is not full
-- (rate) or over (window) at `now`. It is never created, and budget scopes are not touched.
local applied = 0
local v = redis.call('GET', key)
local sp = v and find(v, ' ', 1, true)
if sp and ARGV[6] == 'r' and sub(v, sp + 1) == ARGV[8] then
  local ts, tn = parse(sub(v, 1, sp - 1))
  local os, on = diff(ts, tn, nowS, nowN)
  if later(ts, tn, nowS, nowN) and os < BIG then
    local owed, t = os * E9 + on, param
    local burst, units = cap * t, cost
    if units < 0 then units = -units end
    if units > cap then units = cap end
    local delta, nextOwed = units * t, owed
    if cost < 0 then
      nextOwed = 0
      if owed > delta then nextOwed = owed - delta end
    elseif owed < burst then
      nextOwed = owed + delta
      if nextOwed > burst then nextOwed = burst end
    end
    local s, n = add(nowS, nowN, nextOwed)
    redis.call('SET', key, fmt(s, n) .. ' ' .. ARGV[8], 'PX', px(0, nextOwed, floorMs))
    applied = 1
  end
elseif sp and ARGV[6] == 'f' and sub(v, 1, sp - 1) == ARGV[8] then
  local es, en = parse(ARGV[8])
  if later(es, en, nowS, nowN) then
    local count = sub(v, sp + 1) + 0
    if cost < 0 then
      count = count + cost
      if count < 0 then count = 0 end
    elseif count < cap then
      count = count + cost
      if count > cap then count = cap end
    end
    local rs, rn = diff(es, en, nowS, nowN)
    redis.call('SET', key, ARGV[8] .. ' ' .. format('%d', count), 'PX', px(rs, rn, floorMs))
    applied = 1
  end
end
return applied
