-- The end, in Unix ms, of the calendar window holding Unix ms t (algorithms/calendar.h): the
-- next multiple of w ms after t (unit 'e'), or the first instant of the next UTC month ('m') or
-- year ('y'). Civil dates by Howard Hinnant's civil_from_days and days_from_civil; every
-- quotient's dividend stays far below 2^53, so math.floor of it is exact.
local function calendarEnd(t, unit, w)
  if unit == 'e' then
    local r = math.fmod(t, w)
    if r < 0 then r = r + w end
    return t - r + w
  end
  local floor = math.floor
  local z = floor(t / 86400000) + 719468
  local era = floor(z / 146097)
  local doe = z - era * 146097
  local yoe = floor((doe - floor(doe / 1460) + floor(doe / 36524) - floor(doe / 146096)) / 365)
  local y = yoe + era * 400
  local mp = floor((5 * (doe - (365 * yoe + floor(yoe / 4) - floor(yoe / 100))) + 2) / 153)
  local m = mp + 3
  if m > 12 then m = m - 12 end
  if m <= 2 then y = y + 1 end
  -- the first day of the next month or year
  if unit == 'm' then m = m + 1 else m = 13 end
  if m > 12 then y, m = y + 1, 1 end
  if m <= 2 then y = y - 1 end
  era = floor(y / 400)
  yoe = y - era * 400
  if m > 2 then mp = m - 3 else mp = m + 9 end
  doe = yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + floor((153 * mp + 2) / 5)
  return (era * 146097 + doe - 719468) * 86400000
end
