-- Sliding log (sliding_log.h): a LIST of timestamps, oldest first. Entries that left the window
-- are trimmed on every request, refusals included, as sliding_log.h prunes them: once trimmed they
-- stay gone even if a caller's clock steps back. Each entry is trimmed once, so a flood of
-- refusals writes nothing after the first. New entries are pushed before the trim: a list emptied
-- and refilled within the script would fail in a migrating Cluster slot, where a key missing on
-- the source counts as moved away.
local w, quota = param, cap
local n = redis.call('LLEN', key)
local cs, cn = add(nowS, nowN, -w)
local function gone(i)
  local s, ns = parse(redis.call('LINDEX', key, i))
  return s < cs or (s == cs and ns <= cn)
end
local expired = 0
if n > 0 then
  if gone(n - 1) then
    expired = n
  elseif gone(0) then
    local lo, hi = 1, n - 1
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if gone(mid) then lo = mid + 1 else hi = mid end
    end
    expired = lo
  end
end
local live = n - expired
if quota > live then remaining = quota - live end
local ls, ln
if live > 0 then
  ls, ln = parse(redis.call('LINDEX', key, -1))
  local s, ns = add(ls, ln, w)
  reset = nonneg(diff(s, ns, nowS, nowN))
end
if cost > quota then
  reason = 2
elseif live + cost > quota then
  reason = 1
  local es, en = parse(redis.call('LINDEX', key, expired + live + cost - quota - 1))
  es, en = add(es, en, w)
  retry = atLeastOne(diff(es, en, nowS, nowN))
else
  local ss, sn = nowS, nowN
  if live > 0 and later(ls, ln, nowS, nowN) then ss, sn = ls, ln end
  local stamp, batch, left = fmt(ss, sn), {}, cost
  while left > 0 do
    local k = left
    if k > 256 then k = 256 end
    for i = 1, k do batch[i] = stamp end
    redis.call('RPUSH', key, unpack(batch, 1, k))
    left = left - k
  end
  if expired > 0 then redis.call('LTRIM', key, expired, -1) end
  local es, en = add(ss, sn, w)
  local rs, rn = diff(es, en, nowS, nowN)
  redis.call('PEXPIRE', key, px(rs, rn, floorMs))
  remaining, reset = quota - live - cost, out(rs, rn)
end
if reason ~= 0 and expired > 0 then redis.call('LTRIM', key, expired, -1) end
