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
