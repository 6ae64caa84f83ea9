-- HAProxy's rate counter (haproxy_rate.h): "<last ms> <tick ms> <current> <previous>", integer
-- ms. ARGV[5] is the period in ms; ARGV[6] the expire in ms when refused requests are counted,
-- -1 - expire when they are not.
local p, ex, counts = param, ARGV[6] + 0, true
if ex < 0 then ex, counts = -1 - ex, false end
local MAXC, MAXMS = 67108863, 8796093022207
local tms = nowS * 1000 + idiv(nowN, 1000000)
if tms > MAXMS then tms = MAXMS elseif tms < -MAXMS then tms = -MAXMS end
local used, last, tick, cur, prev = false, 0, 0, 0, 0
local v = redis.call('GET', key)
if v then
  local a = find(v, ' ', 1, true)
  local b = find(v, ' ', a + 1, true)
  local c = find(v, ' ', b + 1, true)
  used, last, tick = true, sub(v, 1, a - 1) + 0, sub(v, a + 1, b - 1) + 0
  cur, prev = sub(v, b + 1, c - 1) + 0, sub(v, c + 1) + 0
  if tms < last then tms = last end  -- a clock stepping back stays at the latest count
end
-- floor(a * r / p) for 0 <= a < 2^26, 0 <= r < 2^32: in 16-bit halves of r, each exact.
local function muldiv(a, r)
  local rl = math.fmod(r, 65536)
  local hi = a * ((r - rl) / 65536)
  local ra = math.fmod(hi, p)
  return (hi - ra) / p * 65536 + idiv(ra * 65536 + a * rl, p)
end
local function even(t) return t - math.fmod(t, 2) + (math.fmod(t, 2) < 0 and -2 or 0) end
-- The entry at t: a table {used, last, tick, cur, prev}, gone after `expire` since its last count.
local function find_at(e, t)
  if e[1] and ex > 0 and t - e[2] >= ex then return {false, 0, 0, 0, 0} end
  return e
end
local function count(e, t, n)
  if not e[1] then
    if n > MAXC then n = MAXC end
    return {true, t, even(t), n, 0}
  end
  local l, tk, c, pv = t, e[3], e[4], e[5]
  if t - tk < p then
    c = c + n
    if c > MAXC then c = MAXC end
  else
    pv, c = c, n
    if c > MAXC then c = MAXC end
    tk = tk + p
    if t - tk >= p then pv, tk = 0, t end
    tk = even(tk)
  end
  return {true, l, tk, c, pv}
end
local function read(e, t)
  if not e[1] then return 0 end
  local r, pv, c = e[3] + p - t, e[5], e[4]
  if r < 0 then
    r = r + p
    if r >= 0 then pv = c else pv = 0 end
    c = 0
  end
  if c == 0 and pv <= 1 then return pv end
  return c + muldiv(pv, r)
end
local function judged(e, t, n)
  local f = find_at(e, t)
  if counts then return read(count(f, t, n), t) end
  return read(f, t) + n - 1
end
local function idleMs(e)
  local ms = e[3] + 2 * p + 1
  if ex > 0 and e[2] + ex < ms then ms = e[2] + ex end
  return ms
end
-- ms as a pair of time since now.
local function since(ms)
  local s, n = fromMs(ms)
  return diff(s, n, nowS, nowN)
end
local e = {used, last, tick, cur, prev}
local f = find_at(e, tms)
local most = cap
if not counts then most = cap + 1 end
if cost > most then
  reason = 2
  local est = read(f, tms)
  if cap > est then remaining = cap - est end
  if used then reset = nonneg(since(idleMs(e))) end
else
  local est
  if cost == 0 then est = read(f, tms) else est = judged(f, tms, cost) end
  if est > cap then reason = 1 else remaining = cap - est end
  if cost > 0 and (reason == 0 or counts) then
    e = count(f, tms, cost)
    local s, ns = since(idleMs(e))
    redis.call('SET', key, format('%d %d %d %d', e[2], e[3], e[4], e[5]), 'PX', px(s, ns, floorMs))
  end
  if e[1] then reset = nonneg(since(idleMs(e))) end
  if reason == 1 then
    -- The estimate only falls as time passes; a new entry admits any cost <= most.
    local lo, hi = tms + 1, e[3] + 2 * p + 1
    if hi < lo then hi = lo end
    while lo < hi do
      local mid = lo + idiv(hi - lo, 2)
      if judged(e, mid, cost) <= cap then hi = mid else lo = mid + 1 end
    end
    retry = atLeastOne(since(lo))
  end
end
