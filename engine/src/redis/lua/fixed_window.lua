-- Fixed window (window.h): "<window end> <count>"; refused requests are counted. ARGV[6] says
-- where windows fall: '0' from the key's first request (w in ns), else on the calendar
-- (calendarEnd: 'e' multiples of w ms, 'm' months, 'y' years), the caller's time being Unix time.
local w, unit = param, ARGV[6]
local count, expired = 0, true
local es, en
local v = redis.call('GET', key)
if v then
  local sp = find(v, ' ', 1, true)
  es, en = parse(sub(v, 1, sp - 1))
  if later(es, en, nowS, nowN) then expired, count = false, sub(v, sp + 1) + 0 end
end
if expired then
  if unit == '0' then es, en = add(nowS, nowN, w)
  else es, en = fromMs(calendarEnd(nowS * 1000 + idiv(nowN, 1000000), unit, w)) end
end
local rs, rn = diff(es, en, nowS, nowN)
reset = out(rs, rn)
if cost > cap then
  reason = 2
  if cap > count then remaining = cap - count end
  if expired then reset = 0 end
else
  -- Exact below 2^53; beyond it the window is long refused and only "over" matters.
  count = count + cost
  if count > 9007199254740992 then count = 9007199254740992 end
  stamp = fmt(es, en)
  redis.call('SET', key, stamp .. ' ' .. format('%d', count), 'PX', px(rs, rn, floorMs))
  if count <= cap then remaining = cap - count else reason, retry = 1, reset end
end
