-- The `hostname` format: RFC 1123 labels (letters, digits, hyphens; 1 to 63 characters, not
-- starting or ending with a hyphen; 253 in all), and for an A-label ("xn--..."), its Punycode
-- (RFC 3492) decoded and checked against what IDNA2008 says without its derived tables:
-- RFC 5892's exceptions (the DISALLOWED ones, and the contextual rules for MIDDLE DOT, GREEK
-- KERAIA, HEBREW GERESH / GERSHAYIM, KATAKANA MIDDLE DOT, Arabic-Indic digits and ZERO WIDTH
-- JOINER), and no combining mark first (General_Category, from schema/unicode.lua). Code points
-- only IDNA2008's derived property table rules out are not caught.
local M = {}

local byte, find = string.byte, string.find

local BASE, TMIN, TMAX, SKEW, DAMP = 36, 1, 26, 38, 700

local function adapt(delta, points, first)
  delta = first and delta // DAMP or delta // 2
  delta = delta + delta // points
  local k = 0
  while delta > ((BASE - TMIN) * TMAX) // 2 do
    delta = delta // (BASE - TMIN)
    k = k + BASE
  end
  return k + ((BASE - TMIN + 1) * delta) // (delta + SKEW)
end

local function digit(c)
  if c >= 97 and c <= 122 then return c - 97 end
  if c >= 65 and c <= 90 then return c - 65 end
  if c >= 48 and c <= 57 then return c - 22 end
  return nil
end

--- The code points of Punycode `s` (an A-label without its "xn--"), or nil when it is not one.
function M.punycode(s)
  local out = {}
  local dash = s:match("^.*()%-")
  local pos = 1
  if dash then
    for i = 1, dash - 1 do out[#out + 1] = byte(s, i) end
    pos = dash + 1
  end
  local n, i, bias = 128, 0, 72
  while pos <= #s do
    local old, w, k = i, 1, BASE
    while true do
      if pos > #s then return nil end
      local d = digit(byte(s, pos))
      pos = pos + 1
      if not d then return nil end
      i = i + d * w
      if i > 0x10FFFF * 64 then return nil end
      local t = k <= bias and TMIN or (k >= bias + TMAX and TMAX or k - bias)
      if d < t then break end
      w = w * (BASE - t)
      k = k + BASE
    end
    bias = adapt(i - old, #out + 1, old == 0)
    n = n + i // (#out + 1)
    i = i % (#out + 1)
    if n > 0x10FFFF or (n >= 0xD800 and n <= 0xDFFF) then return nil end
    table.insert(out, i + 1, n)
    i = i + 1
  end
  return out
end

local function within(c, ranges)
  for j = 1, #ranges, 2 do if c >= ranges[j] and c <= ranges[j + 1] then return true end end
  return false
end

local GREEK = { 0x0370, 0x0373, 0x0376, 0x03FF, 0x1F00, 0x1FFF }
local HEBREW = { 0x0591, 0x05F4, 0xFB1D, 0xFB4F }
local KANA_HAN = { 0x3040, 0x309F, 0x30A0, 0x30FA, 0x30FC, 0x30FF, 0x3400, 0x4DBF, 0x4E00, 0x9FFF,
  0xF900, 0xFAFF, 0x20000, 0x3134F }
local DISALLOWED = { 0x0640, 0x0640, 0x07FA, 0x07FA, 0x302E, 0x302F, 0x3031, 0x3035, 0x303B, 0x303B }
-- Code points of Canonical_Combining_Class 9 (virama) in the scripts that use ZWJ after one.
local VIRAMA = { 0x094D, 0x094D, 0x09CD, 0x09CD, 0x0A4D, 0x0A4D, 0x0ACD, 0x0ACD, 0x0B4D, 0x0B4D,
  0x0BCD, 0x0BCD, 0x0C4D, 0x0C4D, 0x0CCD, 0x0CCD, 0x0D4D, 0x0D4D, 0x0DCA, 0x0DCA, 0x0E3A, 0x0E3A,
  0x1039, 0x103A, 0x1714, 0x1714, 0x1734, 0x1734, 0x17D2, 0x17D2, 0x1B44, 0x1B44, 0xA806, 0xA806 }

--- RFC 5892's exceptions and contextual rules on the code points of a U-label.
local function context_ok(cps)
  local arabic, extended = false, false
  for j, c in ipairs(cps) do
    local prev, nxt = cps[j - 1], cps[j + 1]
    if within(c, DISALLOWED) then return false end
    if c == 0x00B7 and not (prev == 0x6C and nxt == 0x6C) then return false end
    if c == 0x0375 and not (nxt and within(nxt, GREEK)) then return false end
    if (c == 0x05F3 or c == 0x05F4) and not (prev and within(prev, HEBREW)) then return false end
    if c == 0x200D and not (prev and within(prev, VIRAMA)) then return false end
    if c >= 0x0660 and c <= 0x0669 then arabic = true end
    if c >= 0x06F0 and c <= 0x06F9 then extended = true end
    if c == 0x30FB then
      local any = false
      for _, o in ipairs(cps) do if within(o, KANA_HAN) then any = true end end
      if not any then return false end
    end
  end
  return not (arabic and extended)
end

local function a_label(label)
  local cps = M.punycode(label:sub(5))
  if not cps or #cps == 0 then return false end
  local ascii = true
  for _, c in ipairs(cps) do if c > 127 then ascii = false end end
  if ascii then return false end   -- an A-label always stands for non-ASCII
  if cps[3] == 45 and cps[4] == 45 then return false end
  -- RFC 5891 4.2.3.2: a label must not begin with a combining mark
  if require("lunet.schema.unicode").category(cps[1]):sub(1, 1) == "M" then return false end
  return context_ok(cps)
end

local function label_ok(label)
  local n = #label
  if n == 0 or n > 63 or find(label, "[^%w%-]") then return false end
  if byte(label) == 45 or byte(label, n) == 45 then return false end
  -- "--" in third and fourth place: an A-label when it starts "xn"; RFC 1123 allows others
  if byte(label, 3) == 45 and byte(label, 4) == 45 and label:sub(1, 2):lower() == "xn" then
    return a_label(label)
  end
  return true
end

--- Whether s is a host name.
function M.check(s)
  if #s == 0 or #s > 253 then return false end
  for label in (s .. "."):gmatch("([^.]*)%.") do
    if not label_ok(label) then return false end
  end
  return true
end

return M
