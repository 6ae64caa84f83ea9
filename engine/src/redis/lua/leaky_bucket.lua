-- Leaky bucket (leaky_bucket.h, nginx limit_req): "<excess> <last ms>", truncating arithmetic.
local rate, burst, dl = param, cap * 1000, ARGV[6] + 0
local tms = nowS * 1000 + idiv(nowN, 1000000)  -- floor, nginx's msec clock
local ex, last, fresh = 0, 0, true
local v = redis.call('GET', key)
if v then
  local sp = find(v, ' ', 1, true)
  ex, last, fresh = sub(v, 1, sp - 1) + 0, sub(v, sp + 1) + 0, false
end
local ms, first = 0, 0
if not fresh then
  ms = tms - last
  if ms < 0 then ms = 0 end
  -- From the idle instant on, everything has leaked: first = 0 (and rate * ms may pass 2^53).
  if ms < cdiv((ex + 1000) * 1000, rate) then
    first = ex - idiv(rate * ms, 1000) + 1000
    if first < 0 then first = 0 end
  end
end
if first <= burst then remaining = idiv(burst - first, 1000) + 1 end
if not fresh then
  local s, ns = fromMs(last + cdiv((ex + 1000) * 1000, rate))
  reset = nonneg(diff(s, ns, nowS, nowN))
end
if cost > cap + 1 then
  reason = 2
else
  local excess = first + 1000 * (cost - 1)
  if excess > burst then
    reason = 1
    local need = ex + 1000 - (burst - 1000 * (cost - 1))
    local s, ns = fromMs(last + cdiv(need * 1000, rate))
    retry = atLeastOne(diff(s, ns, nowS, nowN))
  else
    if ms ~= 0 or fresh then last = tms end
    local s, ns = fromMs(last + cdiv((excess + 1000) * 1000, rate))
    s, ns = diff(s, ns, nowS, nowN)
    redis.call('SET', key, format('%d %d', excess, last), 'PX', px(s, ns, floorMs))
    remaining, reset = idiv(burst - excess, 1000), nonneg(s, ns)
    if dl >= 0 and excess > dl * 1000 then
      delay = idiv((excess - dl * 1000) * 1000, rate) * 1000000
    end
  end
end
