-- Unicode's General_Category, read from schema/unicode_gc.lua the first time it is needed:
-- the code point sets of \p{L}, \p{Letter}, \p{gc=Nd}, \p{digit} ... in patterns (ECMA-262
-- takes General_Category values by their short and long names and aliases), and the category
-- of one code point, for host names' IDNA rules.
local M = {}

-- Each General_Category value's names (PropertyValueAliases.txt); groups list their members.
local NAMES = {
  C = { "Other" }, Cc = { "Control", "cntrl" }, Cf = { "Format" }, Cn = { "Unassigned" },
  Co = { "Private_Use" }, Cs = { "Surrogate" }, L = { "Letter" }, LC = { "Cased_Letter" },
  Ll = { "Lowercase_Letter" }, Lm = { "Modifier_Letter" }, Lo = { "Other_Letter" },
  Lt = { "Titlecase_Letter" }, Lu = { "Uppercase_Letter" }, M = { "Mark", "Combining_Mark" },
  Mc = { "Spacing_Mark" }, Me = { "Enclosing_Mark" }, Mn = { "Nonspacing_Mark" }, N = { "Number" },
  Nd = { "Decimal_Number", "digit" }, Nl = { "Letter_Number" }, No = { "Other_Number" },
  P = { "Punctuation", "punct" }, Pc = { "Connector_Punctuation" }, Pd = { "Dash_Punctuation" },
  Pe = { "Close_Punctuation" }, Pf = { "Final_Punctuation" }, Pi = { "Initial_Punctuation" },
  Po = { "Other_Punctuation" }, Ps = { "Open_Punctuation" }, S = { "Symbol" },
  Sc = { "Currency_Symbol" }, Sk = { "Modifier_Symbol" }, Sm = { "Math_Symbol" },
  So = { "Other_Symbol" }, Z = { "Separator" }, Zl = { "Line_Separator" },
  Zp = { "Paragraph_Separator" }, Zs = { "Space_Separator" },
}
local GROUPS = { LC = { Ll = true, Lt = true, Lu = true } }

local ALIAS = {}
for short, longs in pairs(NAMES) do
  ALIAS[short] = short
  for _, l in ipairs(longs) do ALIAS[l] = short end
end

local starts, cats   -- run i covers starts[i] .. starts[i + 1] - 1, category cats[i]

local function load()
  if starts then return end
  local data = require "lunet.schema.unicode_gc"
  starts, cats = {}, {}
  local at = 0
  for len, tag in data.runs:gsub("%s", ""):gmatch("([0-9a-v]+)([A-Zw-z])") do
    starts[#starts + 1], cats[#cats + 1] = at, data.CATEGORIES[tag]
    at = at + tonumber(len, 32)
  end
  starts[#starts + 1] = at
end

--- The two-letter category of code point c.
function M.category(c)
  load()
  local lo, hi = 1, #cats
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    if starts[mid] <= c then lo = mid else hi = mid - 1 end
  end
  return cats[lo]
end

local cache = {}

--- The set (sorted ranges { lo, hi, ... }) of the property `name` takes in \p{name}, or nil
--- when it is not a General_Category value (nor Any, ASCII, Assigned).
function M.property(name)
  name = name:gsub("^General_Category=", ""):gsub("^gc=", "")
  if cache[name] then return cache[name] end
  local set
  if name == "Any" then set = { 0, 0x10FFFF }
  elseif name == "ASCII" then set = { 0, 127 }
  else
    local short = name == "Assigned" and "Cn" or ALIAS[name]
    if not short then return nil end
    load()
    local group = GROUPS[short]
    local function member(cat)
      if name == "Assigned" then return cat ~= "Cn" end
      if group then return group[cat] end
      return cat == short or (#short == 1 and cat:sub(1, 1) == short)
    end
    set = {}
    for i = 1, #cats do
      if member(cats[i]) then
        local n = #set
        if n > 0 and set[n] == starts[i] - 1 then set[n] = starts[i + 1] - 1
        else set[n + 1], set[n + 2] = starts[i], starts[i + 1] - 1 end
      end
    end
  end
  cache[name] = set
  return set
end

return M
