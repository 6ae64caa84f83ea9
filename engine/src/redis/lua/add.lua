-- Pair plus a duration d (|d| < 2^54, exactly representable).
local function add(s, n, d)
  local r = math.fmod(d, 1000000000)
  local q = (d - r) / 1000000000
  n = n + r
  if n >= 1000000000 then n, q = n - 1000000000, q + 1
  elseif n < 0 then n, q = n + 1000000000, q - 1 end
  return s + q, n
end
