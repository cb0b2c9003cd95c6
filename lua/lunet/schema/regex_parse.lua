-- Reads an ECMA-262 regular expression (JSON Schema's `pattern` dialect) into a tree, for
-- schema/regex.lua to compile. Patterns are read as code points (Unicode semantics: "🐲" is one
-- character, as the JSON Schema test suite expects). What JSON Schema patterns use is supported:
-- literals, `.`, classes with ranges and negation, \d \D \w \W \s \S, \b \B, ^ and $, groups
-- (capturing, named, non-capturing), alternation, the quantifiers * + ? {n} {n,} {n,m}, lazy
-- or not, and \p{...} / \P{...} for General_Category values. What would need backtracking or
-- more of Unicode's tables (backreferences, lookaround, scripts and binary properties in \p)
-- is refused with an error naming the pattern, never matched wrongly.
--
-- The tree: { t = "set", set = ranges } | { t = "cat", ... } | { t = "alt", ... } |
-- { t = "rep", node, min = n, max = m or nil } | { t = "bol" } | { t = "eol" } |
-- { t = "wordb", neg = bool } | { t = "empty" }. A set is a sorted flat list of disjoint
-- inclusive code point ranges { lo1, hi1, lo2, hi2, ... }.
local M = {}

local MAX_CP = 0x10FFFF

--- Sorts and merges a list of ranges { lo, hi, ... } into a set.
local function normalize(list)
  local pairs_ = {}
  for i = 1, #list, 2 do pairs_[#pairs_ + 1] = { list[i], list[i + 1] } end
  table.sort(pairs_, function(a, b) return a[1] < b[1] end)
  local out = {}
  for _, p in ipairs(pairs_) do
    local n = #out
    if n > 0 and p[1] <= out[n] + 1 then
      if p[2] > out[n] then out[n] = p[2] end
    else
      out[n + 1], out[n + 2] = p[1], p[2]
    end
  end
  return out
end

local function complement(set)
  local out, from = {}, 0
  for i = 1, #set, 2 do
    if set[i] > from then out[#out + 1], out[#out + 2] = from, set[i] - 1 end
    from = set[i + 1] + 1
  end
  if from <= MAX_CP then out[#out + 1], out[#out + 2] = from, MAX_CP end
  return out
end
M.complement = complement

-- ECMA-262's classes: \d and \w are ASCII only; \s is WhiteSpace and LineTerminator.
local DIGIT = { 48, 57 }
local WORD = normalize({ 48, 57, 65, 90, 95, 95, 97, 122 })
local SPACE = normalize({ 9, 13, 32, 32, 0xA0, 0xA0, 0x1680, 0x1680, 0x2000, 0x200A, 0x2028, 0x2029,
  0x202F, 0x202F, 0x205F, 0x205F, 0x3000, 0x3000, 0xFEFF, 0xFEFF })
local DOT = complement(normalize({ 10, 10, 13, 13, 0x2028, 0x2029 }))
local CLASS_ESCAPES = {
  d = DIGIT, D = complement(DIGIT), w = WORD, W = complement(WORD), s = SPACE, S = complement(SPACE),
}
M.WORD = WORD

local CONTROL = { t = 9, n = 10, v = 11, f = 12, r = 13 }
-- Characters that `\` may quote outside a class (and `-` inside one).
local SYNTAX = {}
for c in ("^$\\.*+?()[]{}|/-"):gmatch(".") do SYNTAX[c:byte()] = true end

local Parser = {}
Parser.__index = Parser

--- Pattern `src` quoted for a message: its first 60 bytes, then "..." when it is longer.
function M.quote(src)
  if #src > 60 then return string.format("%q...", src:sub(1, 60)) end
  return string.format("%q", src)
end

function Parser:fail(why)
  error(string.format("pattern %s: %s (at character %d)", M.quote(self.src), why, self.i), 0)
end

function Parser:peek(k) return self.cp[self.i + (k or 0)] end
function Parser:eat(c)
  if self.cp[self.i] == c then self.i = self.i + 1; return true end
  return false
end
function Parser:ch(c) return self.cp[self.i] == string.byte(c) end

--- Reads `n` hex digits (or, with n == nil, one or more up to `}`); the value or nil.
function Parser:hex(n)
  local v, count = 0, 0
  while n == nil or count < n do
    local c = self.cp[self.i]
    local d = c and (c >= 48 and c <= 57 and c - 48 or c >= 65 and c <= 70 and c - 55 or c >= 97 and c <= 102 and c - 87)
    if not d then break end
    v, count, self.i = v * 16 + d, count + 1, self.i + 1
    if v > MAX_CP then self:fail("\\u{...} beyond U+10FFFF") end
  end
  if count == 0 or (n and count < n) then return nil end
  return v
end

--- \uXXXX, with a following \uXXXX low surrogate joined to its high one (as ECMA-262's u flag).
function Parser:unicode_escape()
  if self:eat(123) then   -- {
    local v = self:hex(nil)
    if not v or not self:eat(125) then self:fail("bad \\u{...} escape") end
    return v
  end
  local v = self:hex(4)
  if not v then self:fail("\\u needs four hex digits") end
  if v >= 0xD800 and v <= 0xDBFF and self:peek() == 92 and self:peek(1) == 117 then
    local save = self.i
    self.i = self.i + 2
    local lo = self:hex(4)
    if lo and lo >= 0xDC00 and lo <= 0xDFFF then
      return 0x10000 + (v - 0xD800) * 0x400 + (lo - 0xDC00)
    end
    self.i = save
  end
  return v
end

--- \p{Name} / \P{Name} (after the p): the set of a General_Category value, or an error.
function Parser:property(negate)
  if not self:eat(123) then self:fail("\\p must be followed by {name}") end
  local from = self.i
  while self.cp[self.i] and self.cp[self.i] ~= 125 do self.i = self.i + 1 end
  if not self:eat(125) then self:fail("unterminated \\p{...}") end
  local chars = {}
  for j = from, self.i - 2 do chars[#chars + 1] = utf8.char(self.cp[j]) end
  local name = table.concat(chars)
  local set = require("lunet.schema.unicode").property(name)
  if not set then
    self:fail("\\p{" .. name .. "}: only General_Category values (L, Letter, Nd, digit, ...) are supported")
  end
  return negate and complement(set) or set
end

--- After a `\`: a code point, or a set (class escapes), or nil and a tree node (\b, \B).
--- `in_class` changes \b (backspace there) and \B (an error there).
function Parser:escape(in_class)
  local c = self.cp[self.i]
  if not c then self:fail("a pattern cannot end with \\") end
  self.i = self.i + 1
  local s = utf8.char(c)
  if CLASS_ESCAPES[s] then return nil, CLASS_ESCAPES[s] end
  if CONTROL[s] then return CONTROL[s] end
  if s == "b" then
    if in_class then return 8 end
    return nil, nil, { t = "wordb", neg = false }
  end
  if s == "B" and not in_class then return nil, nil, { t = "wordb", neg = true } end
  if s == "c" then
    local l = self.cp[self.i]
    if l and ((l >= 65 and l <= 90) or (l >= 97 and l <= 122)) then
      self.i = self.i + 1
      return l % 32
    end
    self:fail("\\c must be followed by a letter")
  end
  if s == "0" then
    local d = self.cp[self.i]
    if d and d >= 48 and d <= 57 then self:fail("octal escapes are not supported") end
    return 0
  end
  if c >= 49 and c <= 57 then self:fail("backreferences (\\" .. s .. ") are not supported") end
  if s == "x" then
    local v = self:hex(2)
    if not v then self:fail("\\x needs two hex digits") end
    return v
  end
  if s == "u" then return self:unicode_escape() end
  if s == "p" or s == "P" then return nil, self:property(s == "P") end
  if s == "k" then self:fail("named backreferences (\\k<...>) are not supported") end
  if SYNTAX[c] or c > 127 or not s:match("[%w_]") then return c end
  self:fail("\\" .. s .. " is not an escape ECMA-262 knows")
end

--- One class atom: a code point, or a set from a class escape.
function Parser:class_atom()
  local c = self.cp[self.i]
  if not c then self:fail("unterminated character class") end
  if c == 92 then
    self.i = self.i + 1
    local cp, set = self:escape(true)
    return cp, set
  end
  self.i = self.i + 1
  return c
end

function Parser:class()
  local negate = self:eat(94)   -- ^
  local list = {}
  while not self:ch("]") do
    local lo, lo_set = self:class_atom()
    if lo_set then
      for i = 1, #lo_set do list[#list + 1] = lo_set[i] end
    elseif self:ch("-") and self:peek(1) and self:peek(1) ~= 93 then
      self.i = self.i + 1
      local hi, hi_set = self:class_atom()
      if hi_set then   -- [a-\d]: the - is a literal (ECMA-262 Annex B)
        list[#list + 1], list[#list + 2], list[#list + 3], list[#list + 4] = lo, lo, 45, 45
        for i = 1, #hi_set do list[#list + 1] = hi_set[i] end
      else
        if hi < lo then self:fail("range out of order in character class") end
        list[#list + 1], list[#list + 2] = lo, hi
      end
    else
      list[#list + 1], list[#list + 2] = lo, lo
    end
  end
  self.i = self.i + 1
  local set = normalize(list)
  return { t = "set", set = negate and complement(set) or set }
end

--- `{n}`, `{n,}` or `{n,m}` at the current position: min, max (nil: no bound), or nil when
--- the `{` does not start one (it is then a literal, as ECMA-262 Annex B reads it).
function Parser:braces()
  local save = self.i
  self.i = self.i + 1
  local function int()
    local v, any = 0, false
    while true do
      local c = self.cp[self.i]
      if not c or c < 48 or c > 57 then break end
      v, any, self.i = v * 10 + c - 48, true, self.i + 1
      if v > 100000 then self:fail("repetition count too large") end
    end
    return any and v or nil
  end
  local lo = int()
  local hi = lo
  if lo and self:eat(44) then hi = int() or false end   -- ,
  if lo and self:eat(125) then return lo, hi or nil end
  self.i = save
  return nil
end

function Parser:group()
  if self:eat(63) then   -- ?
    if self:eat(58) then   -- (?:
    elseif self:ch("<") and self:peek(1) ~= 61 and self:peek(1) ~= 33 then
      self.i = self.i + 1
      while self.cp[self.i] and self.cp[self.i] ~= 62 do self.i = self.i + 1 end
      if not self:eat(62) then self:fail("unterminated group name") end
    elseif self:ch("=") or self:ch("!") or self:ch("<") then
      self:fail("lookahead and lookbehind are not supported")
    else
      self:fail("(? must be followed by :, = , !, or <name>")
    end
  end
  local node = self:disjunction()
  if not self:eat(41) then self:fail("missing )") end
  return node
end

--- One atom: a tree node, or nil at the end of an alternative.
function Parser:atom()
  local c = self.cp[self.i]
  if c == nil or c == 124 or c == 41 then return nil end   -- end, |, )
  self.i = self.i + 1
  if c == 94 then return { t = "bol" }, true end
  if c == 36 then return { t = "eol" }, true end
  if c == 46 then return { t = "set", set = DOT } end
  if c == 40 then return self:group() end
  if c == 91 then return self:class() end
  if c == 42 or c == 43 or c == 63 then self.i = self.i - 1; self:fail("nothing to repeat") end
  if c == 123 then
    self.i = self.i - 1
    if self:braces() then self:fail("nothing to repeat") end
    self.i = self.i + 1
  end
  if c == 92 then
    local cp, set, node = self:escape(false)
    if node then return node, true end
    if set then return { t = "set", set = set } end
    c = cp
  end
  return { t = "set", set = { c, c } }
end

--- The quantifier after an atom, if any: min, max (nil: unbounded), or nil.
function Parser:quantifier()
  local c = self.cp[self.i]
  local lo, hi
  if c == 42 then lo, hi = 0, nil
  elseif c == 43 then lo, hi = 1, nil
  elseif c == 63 then lo, hi = 0, 1
  elseif c == 123 then
    lo, hi = self:braces()
    if not lo then return nil end
    if hi and hi < lo then self:fail("numbers out of order in {} quantifier") end
    self.i = self.i - 1
  else
    return nil
  end
  self.i = self.i + 1
  self:eat(63)   -- lazy: the same strings match, and only whether one does matters here
  return lo, hi or false
end

function Parser:alternative()
  local items = {}
  while true do
    local node, assertion = self:atom()
    if not node then break end
    local lo, hi = self:quantifier()
    if lo then
      if assertion then self:fail("nothing to repeat") end
      node = { t = "rep", node, min = lo, max = hi or nil }
    end
    items[#items + 1] = node
  end
  if #items == 0 then return { t = "empty" } end
  if #items == 1 then return items[1] end
  items.t = "cat"
  return items
end

function Parser:disjunction()
  local alts = { self:alternative() }
  while self:eat(124) do alts[#alts + 1] = self:alternative() end
  if #alts == 1 then return alts[1] end
  alts.t = "alt"
  return alts
end

--- The tree of pattern `src`; raises "pattern "...": why (at character n)" when it cannot.
function M.parse(src)
  if type(src) ~= "string" then error("a pattern must be a string, got " .. type(src), 0) end
  local cp = {}
  local ok = utf8.len(src)
  if not ok then error(string.format("pattern %s is not valid UTF-8", M.quote(src)), 0) end
  for _, c in utf8.codes(src) do cp[#cp + 1] = c end
  local p = setmetatable({ src = src, cp = cp, i = 1 }, Parser)
  local tree = p:disjunction()
  if p.i <= #cp then p:fail("unmatched )") end
  return tree
end

return M
