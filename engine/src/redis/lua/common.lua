-- a / b truncated toward zero (C++ semantics), exact for |a|, |b| < 2^53.
local function idiv(a, b) return (a - math.fmod(a, b)) / b end
-- ceil(a / b) for a >= 0, b > 0.
local function cdiv(a, b)
  local r = math.fmod(a, b)
  if r > 0 then return (a - r) / b + 1 end
  return (a - r) / b
end
