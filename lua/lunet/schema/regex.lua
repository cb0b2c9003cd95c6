-- ECMA-262 patterns for JSON Schema's `pattern` and `patternProperties`: compiled once into a
-- Thompson NFA, then run as a DFA built lazily, state by state, as strings need them. No
-- backtracking: a match costs one table lookup per character once its states exist, and at
-- most (NFA states) work per character the first time, so `^(a+)+$` on "aaa...ab" takes as long
-- as any other pattern. Only whether the pattern matches somewhere is answered (JSON Schema's
-- question), which is why lazy quantifiers need nothing of their own.
--
--   local re = regex.compile("^[a-z]+$")   -- raises, naming the pattern, for what it cannot do
--   re:test("abc")                          --> true
local parse = require "lunet.schema.regex_parse"
local regex_lua = require "lunet.schema.regex_lua"

local M = { quote = parse.quote }

local byte, find, codes, ulen = string.byte, string.find, utf8.codes, utf8.len

-- The NFA: state i is op[i] with out1[i] (and out2[i] for a split); a "set" state consumes one
-- code point in set[i]. Built backwards: build(node, next) returns the state that starts node.
local SET, SPLIT, MATCH, BOL, EOL, WORDB, NWORDB, EPS = 1, 2, 3, 4, 5, 6, 7, 8
local MAX_STATES = 20000   -- what {n,m} may expand to
local MAX_DFA = 3000       -- cached DFA states per pattern before the cache starts over
-- NFA states one validation (or one test without one) may visit building DFA states: a
-- pattern such as [ab]*a[ab]{2000} makes a new DFA state of ~2000 NFA states at every
-- character, and that work is refused past this bound (an error, never an answer).
local MAX_WORK = 4000000
M.MAX_WORK = MAX_WORK

local Builder = {}
Builder.__index = Builder

function Builder:state(op, a, b, set)
  local n = self.n + 1
  if n > MAX_STATES then
    error(string.format("pattern %s is too large (over %d states once its repetitions are expanded)",
      M.quote(self.src), MAX_STATES), 0)
  end
  self.n = n
  self.op[n], self.out1[n], self.out2[n], self.set[n] = op, a, b, set
  return n
end

function Builder:build(node, nxt)
  local t = node.t
  if t == "set" then return self:state(SET, nxt, nil, node.set) end
  if t == "empty" then return nxt end
  if t == "bol" then return self:state(BOL, nxt) end
  if t == "eol" then return self:state(EOL, nxt) end
  if t == "wordb" then return self:state(node.neg and NWORDB or WORDB, nxt) end
  if t == "cat" then
    for i = #node, 1, -1 do nxt = self:build(node[i], nxt) end
    return nxt
  end
  if t == "alt" then
    local s = self:build(node[#node], nxt)
    for i = #node - 1, 1, -1 do s = self:state(SPLIT, self:build(node[i], nxt), s) end
    return s
  end
  -- rep: min copies, then (max - min) nested optional copies, or a loop when unbounded
  local body, s = node[1], nxt
  if node.max == nil then
    local loop = self:state(SPLIT, nil, nxt)
    self.out1[loop] = self:build(body, loop)
    s = loop
  else
    for _ = 1, node.max - node.min do s = self:state(SPLIT, self:build(body, s), nxt) end
  end
  for _ = 1, node.min do s = self:build(body, s) end
  return s
end

--- Whether the tree can only match at the start of the string (every branch begins with ^).
local function anchored(node)
  local t = node.t
  if t == "bol" then return true end
  if t == "cat" then return anchored(node[1]) end
  if t == "alt" then
    for i = 1, #node do if not anchored(node[i]) then return false end end
    return true
  end
  return false
end

local function in_set(set, c)
  for i = 1, #set, 2 do
    if c < set[i] then return false end
    if c <= set[i + 1] then return true end
  end
  return false
end

local WORD = parse.WORD
local function is_word(c) return c ~= nil and c < 128 and in_set(WORD, c) end

local Regex = {}
Regex.__index = Regex

-- The state with no NFA state left (an anchored pattern that failed): every string from here fails.
local DEAD = setmetatable({}, { __index = function() return DEAD end })

--- The states reachable from `kernel` without consuming, under the assertions' context
--- (at the start, at the end, previous and next character word characters): the list of
--- SET states, and whether MATCH is among them. Marks by generation: no table per call.
function Regex:closure(kernel, at_start, at_end, prev_word, next_word)
  local op, out1, out2 = self.op, self.out1, self.out2
  local mark, stack, sets = self.mark, self.stack, {}
  local gen = self.gen + 1
  self.gen = gen
  local top, matched, visited = 0, false, 0
  for i = #kernel, 1, -1 do top = top + 1; stack[top] = kernel[i] end
  while top > 0 do
    local s = stack[top]
    top = top - 1
    if mark[s] ~= gen then
      mark[s] = gen
      visited = visited + 1
      local o = op[s]
      if o == SET then sets[#sets + 1] = s
      elseif o == MATCH then matched = true
      elseif o == SPLIT then
        top = top + 1; stack[top] = out2[s]
        top = top + 1; stack[top] = out1[s]
      elseif o == EPS or (o == BOL and at_start) or (o == EOL and at_end)
        or (o == WORDB and prev_word ~= next_word) or (o == NWORDB and prev_word == next_word) then
        top = top + 1; stack[top] = out1[s]
      end
    end
  end
  local meter = self.meter
  local left = meter.regex_left - visited - #kernel
  meter.regex_left = left
  if left < 0 then self:too_costly() end
  return sets, matched
end

--- Raises kind "schema": the pattern would need more than MAX_WORK to answer.
function Regex:too_costly()
  require("lunet.errors").raise("schema", string.format("pattern %s needs too much work on this value " ..
    "(over %d NFA states visited in one validation): a pattern whose repetitions make a new state at " ..
    "every character", M.quote(self.src), MAX_WORK))
end

--- The DFA state for a kernel (sorted NFA states) and its flags, made once.
function Regex:dstate(kernel, at_start, prev_word)
  table.sort(kernel)
  local key = (at_start and "s" or "-") .. (prev_word and "w" or "-") .. table.concat(kernel, ",")
  local d = self.cache[key]
  if d then return d end
  if #kernel == 0 then return DEAD end
  if self.count >= MAX_DFA then self.cache, self.count = {}, 0 end
  d = { kernel = kernel, at_start = at_start, prev_word = prev_word }
  self.cache[key] = d
  self.count = self.count + 1
  return d
end

--- The state after reading code point c in d: a DFA state, or true when a match ended before c.
function Regex:step(d, c)
  local nw = is_word(c)
  local sets, matched = self:closure(d.kernel, d.at_start, false, d.prev_word, nw)
  if matched then d[c] = true; return true end
  local set, out1, kernel, seen = self.set, self.out1, {}, {}
  for i = 1, #sets do
    local s = sets[i]
    if in_set(set[s], c) then
      local o = out1[s]
      if not seen[o] then seen[o] = true; kernel[#kernel + 1] = o end
    end
  end
  if not self.anchored and not seen[self.start] then kernel[#kernel + 1] = self.start end
  local nd = self:dstate(kernel, false, nw)
  d[c] = nd
  return nd
end

--- Whether a match ends at the end of the string, from state d.
function Regex:final(d)
  local f = d.final
  if f == nil then
    local _, matched = self:closure(d.kernel, d.at_start, true, d.prev_word, false)
    f = matched
    d.final = f
  end
  return f
end

-- The work meter of a test made without a validation's state.
local SOLO = {}

--- Whether the pattern matches somewhere in s (a string; invalid UTF-8 is read byte by byte).
--- `meter` (a validation's state, optional) holds regex_left, the work left to all patterns.
function Regex:test(s, meter)
  if self.any_lua then return find(s, self.lua) ~= nil end
  -- ASCII (most keys and values): bytes are code points, and a Lua pattern may do it all
  local len = ulen(s)
  local ascii = len == #s
  if ascii and self.lua then return find(s, self.lua) ~= nil end
  if not meter then meter = SOLO; SOLO.regex_left = MAX_WORK end
  if not meter.regex_left then meter.regex_left = MAX_WORK end
  self.meter = meter
  local d = self.initial
  if ascii or not len then
    for i = 1, #s, 4 do
      -- four bytes a call: string.byte's cost is the call, not the bytes
      local c1, c2, c3, c4 = byte(s, i, i + 3)
      local nd = d[c1] or self:step(d, c1)
      if nd == true then return true elseif nd == DEAD then return false end
      if c2 then
        d = nd
        nd = d[c2] or self:step(d, c2)
        if nd == true then return true elseif nd == DEAD then return false end
        if c3 then
          d = nd
          nd = d[c3] or self:step(d, c3)
          if nd == true then return true elseif nd == DEAD then return false end
          if c4 then
            d = nd
            nd = d[c4] or self:step(d, c4)
            if nd == true then return true elseif nd == DEAD then return false end
          end
        end
      end
      d = nd
    end
  else
    for _, c in codes(s) do
      local nd = d[c] or self:step(d, c)
      if nd == true then return true elseif nd == DEAD then return false end
      d = nd
    end
  end
  return self:final(d)
end

--- The compiled pattern `src`; raises an error naming it for syntax lunet does not support.
function M.compile(src)
  local tree = parse.parse(src)
  local b = setmetatable({ src = src, n = 0, op = {}, out1 = {}, out2 = {}, set = {} }, Builder)
  local match = b:state(MATCH)
  local start = b:build(tree, match)
  -- A start that is itself a consuming or matching state may be reused by a loop; an EPS
  -- state in front keeps "the start" one state that is only entered from outside.
  start = b:state(EPS, start)
  local re = setmetatable({
    src = src, op = b.op, out1 = b.out1, out2 = b.out2, set = b.set, start = start,
    anchored = anchored(tree), mark = {}, stack = {}, gen = 0, cache = {}, count = 0,
  }, Regex)
  re.lua, re.any_lua = regex_lua.translate(tree)
  re.initial = re:dstate({ start }, true, false)
  return re
end

return M
