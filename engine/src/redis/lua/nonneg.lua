local function nonneg(s, n)
  if s < 0 then return 0 end
  return out(s, n)
end
