-- The budget's bookkeeping, after the bucket decided (memory store's recordScope): the charged
-- key takes or refreshes its slot in every scope above it, whatever the bucket decided; the
-- scopes at or below a charged fallback stay untouched. A newcomer in a scope holding `cap` slots
-- (some of them expired, or it would not have been admitted) drops the expired ones, so a scope
-- never holds more than `cap` slots. The drop comes after the ZADD: the scope never empties
-- within the script (a key deleted and written again within a script fails in a migrating
-- Cluster slot, where a missing key counts as moved away).
if levels > 0 then
  local name, ms = ARGV[9 + 2 * charged], slotTtl + 1
  if ms < floorMs then ms = floorMs end
  for i = charged + 1, levels do
    local scope = KEYS[2 * i]
    redis.call('ZADD', scope, nowMs, name)
    if held[i] >= ARGV[8 + 2 * i] + 0 then
      redis.call('ZREMRANGEBYSCORE', scope, '-inf', nowMs - slotTtl)
    end
    redis.call('PEXPIRE', scope, ms)
  end
end
return {reason, remaining, retry, reset, delay, charged, stamp}
