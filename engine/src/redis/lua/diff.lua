local function diff(as, an, bs, bn)
  if an < bn then return as - bs - 1, an - bn + 1000000000 end
  return as - bs, an - bn
end
