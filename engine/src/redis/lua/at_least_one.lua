-- max(1, t) for a pair t.
local function atLeastOne(s, n)
  if s < 0 or (s == 0 and n == 0) then return 1 end
  return out(s, n)
end
