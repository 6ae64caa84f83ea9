local function later(as, an, bs, bn) return as > bs or (as == bs and an > bn) end
