-- A Lua pattern equivalent to a regex tree, for ASCII strings, when one exists and Lua's
-- matcher cannot backtrack more than linearly on it: then string.find (C) answers in place of
-- schema/regex.lua's DFA loop (Lua), several times faster on typical `pattern`s such as
-- ^[A-Z]{3}-[0-9]{4}$. Returns nil for anything else, and the DFA stays in charge.
--
-- What qualifies: a pattern anchored at its start (^), then a sequence of single-character
-- items (literals, classes, \d, .) each taken once, n times ({n}), with * + ?, or {n,m} with m
-- at most n + 3, and an optional $. Lua's greedy items backtrack only into what they matched; that is linear when
-- no character an item may give back can be taken by whatever may come next (the next item,
-- and those after it while the ones between may match nothing). The tree's sets are cut to
-- ASCII, which is all the string holds when this pattern is used.
local M = {}

--- The ASCII part of set, and whether that is all of it.
local function ascii(set)
  local out = {}
  for i = 1, #set, 2 do
    if set[i] > 127 then break end
    out[#out + 1], out[#out + 2] = set[i], math.min(set[i + 1], 127)
  end
  return out, #set == 0 or set[#set] <= 127
end

local function disjoint(a, b)
  for i = 1, #a, 2 do
    for j = 1, #b, 2 do
      if a[i] <= b[j + 1] and b[j] <= a[i + 1] then return false end
    end
  end
  return true
end

local function char(c)
  local s = string.char(c)
  if s:match("%w") then return s end
  return "%" .. s
end

-- In a Lua class these are special (an escaped character cannot end a range, so they are
-- written apart): % - ] ^
local SPECIAL = { [37] = true, [45] = true, [93] = true, [94] = true }

--- A Lua pattern item matching one character of `set` (ASCII ranges).
local function class(set)
  if #set == 2 and set[1] == set[2] then return char(set[1]) end
  local parts = {}
  for i = 1, #set, 2 do
    local lo, hi = set[i], set[i + 1]
    while lo <= hi and SPECIAL[lo] do parts[#parts + 1] = char(lo); lo = lo + 1 end
    while hi >= lo and SPECIAL[hi] do parts[#parts + 1] = char(hi); hi = hi - 1 end
    if lo == hi then parts[#parts + 1] = char(lo)
    elseif lo < hi then parts[#parts + 1] = string.char(lo) .. "-" .. string.char(hi) end
  end
  return "[" .. table.concat(parts) .. "]"
end

--- The items of the tree after ^: { set = ascii ranges, min = n, max = m or nil }, and
--- whether it ends with $; nil when it has any other shape.
local function items(tree)
  local list = tree.t == "cat" and tree or { tree }
  if list[1] == nil or list[1].t ~= "bol" then return nil end
  local out, eol, pure = {}, false, true
  for i = 2, #list do
    local node, min, max = list[i], 1, 1
    if eol then return nil end
    if node.t == "rep" then node, min, max = node[1], node.min, node.max end
    if node.t == "eol" and min == 1 and max == 1 then
      eol = true
    elseif node.t == "set" then
      -- x{n,m}: n copies and m - n optional ones, whose give-backs are 2^(m - n) at most
      if max and max - min > 3 then return nil end
      local set, all = ascii(node.set)
      pure = pure and all
      out[#out + 1] = { set = set, min = min, max = max }
    else
      return nil
    end
  end
  return out, eol, pure
end

--- Whether backtracking on these items stays linear (see the header).
local function linear(list)
  for i, it in ipairs(list) do
    if it.max ~= it.min then
      for j = i + 1, #list do
        if not disjoint(it.set, list[j].set) then return false end
        if list[j].min > 0 then break end
      end
    end
  end
  return true
end

--- The Lua pattern for regex tree `tree` (or nil), and whether it holds for any string, not
--- only ASCII ones: when every set of the pattern is ASCII, a match cannot take a non-ASCII
--- character, byte by byte or code point by code point alike.
function M.translate(tree)
  local list, eol, pure = items(tree)
  if not list or not linear(list) then return nil end
  local parts = { "^" }
  for _, it in ipairs(list) do
    if #it.set == 0 then return nil end
    local c = class(it.set)
    if it.max == nil then
      for _ = 1, it.min do parts[#parts + 1] = c end
      parts[#parts + 1] = c .. "*"
    else
      for _ = 1, it.min do parts[#parts + 1] = c end
      for _ = it.min + 1, it.max do parts[#parts + 1] = c .. "?" end
    end
  end
  if eol then parts[#parts + 1] = "$" end
  return table.concat(parts), pure
end

return M
