-- A pair as a reply field: an integer when exact (|s| < 9007198), else decimal text.
local function out(s, n)
  if s < 9007198 and s > -9007198 then return s * 1000000000 + n end
  return fmt(s, n)
end
