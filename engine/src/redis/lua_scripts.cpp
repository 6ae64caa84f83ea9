#include "redis/lua_scripts.h"

#include <openssl/evp.h>

#include "support/hex.h"

namespace ratelab::redis {

namespace {

// The shebang makes Redis treat every script as a write: under maxmemory with noeviction it
// refuses the script outright (OOM), even when the decision would only have read. Without it a
// refusal that reads only would still answer Ok while the server is out of memory.
constexpr std::string_view kShebang = "#!lua\n";

// Shared text. Times are int64 nanoseconds, far above 2^53 (where Lua's doubles stop being
// exact) with server time, so a time is held as a pair (s, n): s = floor(t / 1e9), n = t - s*1e9
// in [0, 1e9). Durations are validated below kMaxDuration (< 2^53) and stay plain numbers;
// math.fmod is exact on doubles, so idiv/cdiv are exact where a / b and floor() might round.
// Numbers below 2^53 go to redis.call as numbers (Redis prints them exactly); larger ones are
// formatted here with %d, never with tostring (%.14g).
//
// Cost matters (Redis 7.0's Lua 5.1, measured in a loop inside one script): a closure that
// captures an enclosing local costs ~0.1-0.2 us per captured variable on every call, a C call
// (tonumber, string.*, math.fmod) ~0.06 us, a Lua call ~0.03 us. So each script includes only
// the helpers it uses, helpers reach library functions as globals and capture nothing (out()
// captures fmt, nonneg() and atLeastOne() capture out), and `s + 0` converts numeric text
// exactly as tonumber(s) does, without the call.
constexpr std::string_view kBase = R"lua(
-- a / b truncated toward zero (C++ semantics), exact for |a|, |b| < 2^53.
local function idiv(a, b) return (a - math.fmod(a, b)) / b end
-- ceil(a / b) for a >= 0, b > 0.
local function cdiv(a, b)
  local r = math.fmod(a, b)
  if r > 0 then return (a - r) / b + 1 end
  return (a - r) / b
end
)lua";

enum Helper : unsigned {
    kParse = 1u << 0,
    kFmt = 1u << 1,
    kAdd = 1u << 2,
    kDiff = 1u << 3,
    kLater = 1u << 4,
    kOut = 1u << 5,         // needs kFmt
    kNonneg = 1u << 6,      // needs kOut
    kAtLeastOne = 1u << 7,  // needs kOut
    kFromMs = 1u << 8,
};

struct HelperText {
    Helper helper;
    std::string_view text;
};

constexpr HelperText kHelpers[] = {
    {kParse, R"lua(
-- Decimal int64 text to a time pair.
local function parse(v)
  local len = #v
  if string.byte(v, 1) == 45 then
    local S, N = 0, 0
    if len > 10 then S, N = string.sub(v, 2, len - 9) + 0, string.sub(v, len - 8) + 0
    else N = string.sub(v, 2) + 0 end
    if N == 0 then return -S, 0 end
    return -S - 1, 1000000000 - N
  end
  if len > 9 then return string.sub(v, 1, len - 9) + 0, string.sub(v, len - 8) + 0 end
  return 0, v + 0
end
)lua"},
    {kFmt, R"lua(
-- A time pair to decimal int64 text.
local function fmt(s, n)
  if s >= 0 then
    if s == 0 then return string.format('%d', n) end
    return string.format('%d%09d', s, n)
  end
  if n == 0 then return string.format('-%d000000000', -s) end
  s, n = -s - 1, 1000000000 - n
  if s == 0 then return string.format('-%d', n) end
  return string.format('-%d%09d', s, n)
end
)lua"},
    {kAdd, R"lua(
-- Pair plus a duration d (|d| < 2^54, exactly representable).
local function add(s, n, d)
  local r = math.fmod(d, 1000000000)
  local q = (d - r) / 1000000000
  n = n + r
  if n >= 1000000000 then n, q = n - 1000000000, q + 1
  elseif n < 0 then n, q = n + 1000000000, q - 1 end
  return s + q, n
end
)lua"},
    {kDiff, R"lua(
local function diff(as, an, bs, bn)
  if an < bn then return as - bs - 1, an - bn + 1000000000 end
  return as - bs, an - bn
end
)lua"},
    {kLater, R"lua(
local function later(as, an, bs, bn) return as > bs or (as == bs and an > bn) end
)lua"},
    {kOut, R"lua(
-- A pair as a reply field: an integer when exact (|s| < 9007198), else decimal text.
local function out(s, n)
  if s < 9007198 and s > -9007198 then return s * 1000000000 + n end
  return fmt(s, n)
end
)lua"},
    {kNonneg, R"lua(
local function nonneg(s, n)
  if s < 0 then return 0 end
  return out(s, n)
end
)lua"},
    {kAtLeastOne, R"lua(
-- max(1, t) for a pair t.
local function atLeastOne(s, n)
  if s < 0 or (s == 0 and n == 0) then return 1 end
  return out(s, n)
end
)lua"},
    {kFromMs, R"lua(
-- ms (exact) to the pair of ms * 1e6 ns.
local function fromMs(ms)
  local r = math.fmod(ms, 1000)
  if r < 0 then r = r + 1000 end
  return (ms - r) / 1000, r * 1000000
end
)lua"},
};

// Arguments, the clock, and the budget step.
constexpr std::string_view kEntry = R"lua(
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
)lua";

// Token bucket and GCRA (rate.h): one timestamp, the moment the bucket is full again. rate.h's
// two functions decide alike field for field (the same schedule told two ways), so they share
// this script.
constexpr std::string_view kRate = R"lua(
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
)lua";

// Fixed window (window.h): "<window end> <count>"; refused requests are counted.
constexpr std::string_view kFixedWindow = R"lua(
local w = param
local count, expired = 0, true
local es, en
local v = redis.call('GET', key)
if v then
  local sp = find(v, ' ', 1, true)
  es, en = parse(sub(v, 1, sp - 1))
  if later(es, en, nowS, nowN) then expired, count = false, sub(v, sp + 1) + 0 end
end
if expired then es, en = add(nowS, nowN, w) end
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
)lua";

// Sliding window counter (window.h): "<window start> <current> <previous>".
constexpr std::string_view kSlidingWindow = R"lua(
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
)lua";

// Sliding log (sliding_log.h): a LIST of timestamps, oldest first. Entries that left the window
// are trimmed on every request, refusals included, as sliding_log.h prunes them: once trimmed they
// stay gone even if a caller's clock steps back. Each entry is trimmed once, so a flood of
// refusals writes nothing after the first. New entries are pushed before the trim: a list emptied
// and refilled within the script would fail in a migrating Cluster slot, where a key missing on
// the source counts as moved away.
constexpr std::string_view kSlidingLog = R"lua(
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
)lua";

// Leaky bucket (leaky_bucket.h, nginx limit_req): "<excess> <last ms>", truncating arithmetic.
constexpr std::string_view kLeakyBucket = R"lua(
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
)lua";

// The budget's bookkeeping, after the bucket decided (memory store's recordScope): the charged
// key takes or refreshes its slot in every scope above it, whatever the bucket decided; the
// scopes at or below a charged fallback stay untouched. A newcomer in a scope holding `cap` slots
// (some of them expired, or it would not have been admitted) drops the expired ones, so a scope
// never holds more than `cap` slots. The drop comes after the ZADD: the scope never empties
// within the script (a key deleted and written again within a script fails in a migrating
// Cluster slot, where a missing key counts as moved away).
constexpr std::string_view kEpilogue = R"lua(
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
)lua";

// Store::settle (rate.h rateSettle, window.h fixedWindowSettle): the bucket is adjusted only if
// it still holds the charge, i.e. carries the stamp the consumption returned and is not full
// (rate) or over (window) at `now`. It is never created, and budget scopes are not touched.
constexpr std::string_view kSettle = R"lua(
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
)lua";

Script makeScript(std::string_view name, unsigned helpers, std::string_view body) {
    Script s;
    s.name = name;
    s.source.append(kShebang);
    s.source.append("-- ratelab ").append(name).append(" v3");
    s.source.append(kBase);
    for (const HelperText& h : kHelpers)
        if (helpers & h.helper) s.source.append(h.text);
    s.source.append(kEntry).append(body);
    if (name != "settle") s.source.append(kEpilogue);
    s.sha1 = sha1Hex(s.source);
    return s;
}

}  // namespace

ScriptId scriptFor(Algorithm algorithm) {
    switch (algorithm) {
        case Algorithm::TokenBucket:
        case Algorithm::Gcra:
            return ScriptId::Rate;
        case Algorithm::FixedWindow:
            return ScriptId::FixedWindow;
        case Algorithm::SlidingWindow:
            return ScriptId::SlidingWindow;
        case Algorithm::SlidingLog:
            return ScriptId::SlidingLog;
        case Algorithm::LeakyBucket:
            break;
    }
    return ScriptId::LeakyBucket;
}

const std::array<Script, kScriptCount>& scripts() {
    static const std::array<Script, kScriptCount> all = {
        makeScript("rate", kParse | kFmt | kAdd | kDiff | kLater, kRate),
        makeScript("fixed_window", kParse | kFmt | kAdd | kDiff | kLater | kOut, kFixedWindow),
        makeScript("sliding_window", kParse | kFmt | kAdd | kDiff | kOut | kNonneg | kAtLeastOne,
                   kSlidingWindow),
        makeScript("sliding_log",
                   kParse | kFmt | kAdd | kDiff | kLater | kOut | kNonneg | kAtLeastOne,
                   kSlidingLog),
        makeScript("leaky_bucket", kFmt | kDiff | kOut | kNonneg | kAtLeastOne | kFromMs,
                   kLeakyBucket),
        makeScript("settle", kParse | kFmt | kAdd | kDiff | kLater, kSettle),
    };
    return all;
}

std::string sha1Hex(std::string_view text) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha1(), nullptr);
    std::string hex(2 * length, '0');
    writeHex(digest, length, hex.data());
    return hex;
}

}  // namespace ratelab::redis
