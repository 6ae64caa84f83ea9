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
