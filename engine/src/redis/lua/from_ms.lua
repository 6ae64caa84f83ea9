-- ms (exact) to the pair of ms * 1e6 ns.
local function fromMs(ms)
  local r = math.fmod(ms, 1000)
  if r < 0 then r = r + 1000 end
  return (ms - r) / 1000, r * 1000000
end
