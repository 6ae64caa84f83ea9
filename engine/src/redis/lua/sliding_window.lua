-- Sliding window counter (window.h): "<window start> <current> <previous>".
local w, quota = param, cap
local ws, wn, cur, prev = nowS, nowN, 0, 0
local v = redis.call('GET', key)
if v then
  local a = find(v, ' ', 1, true)
  local b = find(v, ' ', a + 1, true)
  local ss, sn = parse(sub(v, 1, a - 1))
  local c = sub(v, a + 1, b - 1) + 0
  local ds, dn = diff(nowS, nowN, ss, sn)
  local d = nil
  if ds < BIG and ds > -BIG then d = ds * E9 + dn end
  if (d and d < w) or (not d and ds < 0) then
    ws, wn, cur, prev = ss, sn, c, sub(v, b + 1) + 0
  elseif d and d < 2 * w then
    ws, wn = add(ss, sn, w)
    prev = c
  end
end
local is, inn = diff(nowS, nowN, ws, wn)
local into = 0
if is >= 0 then into = is * E9 + inn end
-- floor((w - x) * 65536 / w): exact, by long division when (w - x) * 65536 passes 2^53.
local function weight(x, w)
  local a = w - x
  if a >= w then return 65536 end
  if a < 137438953472 then return (a * 65536 - math.fmod(a * 65536, w)) / w end
  local q, r = 0, a
  for _ = 1, 16 do
    if r >= w - r then q, r = q + q + 1, r - (w - r) else q, r = q + q, r + r end
  end
  return q
end
local est = idiv(prev * weight(into, w), 65536) + cur
if cost > quota or est + cost > quota then
  if cost > quota then reason = 2 else reason = 1 end
  if quota > est then remaining = quota - est end
  local ids, idn = add(ws, wn, w)
  if cur > 0 then ids, idn = add(ids, idn, w) end
  reset = nonneg(diff(ids, idn, nowS, nowN))
  if reason == 1 then
    -- window.h searches the first instant the estimate admits `cost`; solved here in closed
    -- form: weight(x) <= m  <=>  x >= w + 1 - ceil((m + 1) * w / 65536).
    local bs, bn, p, c, x = ws, wn, prev, cur, into
    if cur + cost > quota then
      bs, bn = add(ws, wn, w)
      p, c, x = cur, 0, 0
    end
    if p > 0 then
      local m = cdiv((quota - c - cost + 1) * 65536, p) - 1
      if m < 65536 then
        local wq = idiv(w, 65536)
        local first = w + 1 - ((m + 1) * wq + cdiv((m + 1) * (w - wq * 65536), 65536))
        if first > x then x = first end
      end
    end
    local rs, rn = diff(bs, bn, nowS, nowN)
    retry = atLeastOne(add(rs, rn, x))
  end
else
  cur = cur + cost
  local ids, idn = add(ws, wn, w)
  ids, idn = add(ids, idn, w)
  local rs, rn = diff(ids, idn, nowS, nowN)
  redis.call('SET', key, fmt(ws, wn) .. format(' %d %d', cur, prev), 'PX', px(rs, rn, floorMs))
  remaining, reset = quota - est - cost, out(rs, rn)
end
