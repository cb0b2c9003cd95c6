-- Flow collections, `[a, b]` and `{a: 1, b: 2}`, nested and over several lines, JSON's syntax
-- included: a flow mapping's keys may be quoted with the ':' right after, entries may end with
-- a comma, `[a: 1]` is a sequence holding the mapping {a: 1}, and `{a}` gives `a` a null.
-- Inside them indentation does not matter, as in libyaml.
local R = require "lunet.yaml.reader"
local scalars = require "lunet.yaml.scalars"
local schema = require "lunet.yaml.schema"
local nodes = require "lunet.yaml.nodes"
local byte, setmetatable = string.byte, require("lunet.runtime").setmetatable

local M = {}

local FLOW_INDICATOR = scalars.FLOW_INDICATOR
local NULL, ARRAY = schema.NULL, schema.ARRAY

-- Spaces, comments and line breaks inside the collection opened at `open`, which must close.
local function skip(P, open)
  if R.skip(P) and R.at_marker(P) then R.fail(P, P.pos, "a document marker inside a flow collection") end
  if P.pos > P.n then
    R.fail(P, open, byte(P.s, open) == 91 and "a flow sequence '[' that is never closed" or "a flow mapping '{' that is never closed")
  end
end

-- Whether the byte at `pos` ends an indicator ('?', ':', '-') in flow context.
local function separated(s, pos)
  local c = byte(s, pos)
  return c == nil or c == 32 or c == 9 or c == 10 or FLOW_INDICATOR[c] ~= nil
end

--- Why a plain scalar cannot start at `pos` (nil when it can).
function M.plain_refused(s, pos, flow)
  local c = byte(s, pos)
  if c == 45 or c == 63 or c == 58 then
    local d = byte(s, pos + 1)
    if d == nil or d == 32 or d == 9 or d == 10 or (flow and FLOW_INDICATOR[d]) then
      if c == 58 then return "a mapping entry without a key (write \"\" for the empty key)" end
      return string.format("a '%s' that is not a value here (quote it for the text)", string.char(c))
    end
    return nil
  end
  if c == 44 or c == 93 or c == 125 then return string.format("unexpected '%s'", string.char(c)) end
  if c == 35 then return "a comment needs a space before its '#'" end
  if c == 37 or c == 64 or c == 96 then return string.format("'%s' cannot start a plain scalar (quote it)", string.char(c)) end
  if c == 124 or c == 62 then return "a block scalar ('|' or '>') cannot be inside a flow collection" end
  return nil
end

local collection

-- A node in flow context at P.pos: value, text (for scalars) and kind. `open` is the position
-- of the innermost collection's bracket, for the error when it is never closed.
local function node(P, open)
  local s = P.s
  local c = byte(s, P.pos)
  local anchor, tag, tag_at
  if c == 38 or c == 33 then
    anchor, tag, tag_at = nodes.properties(P, true)
    skip(P, open)
    c = byte(s, P.pos)
    if c == 44 or c == 93 or c == 125 or (c == 58 and separated(s, P.pos + 1)) then
      return nodes.finish(P, anchor, tag, tag_at, "empty", nil, "")
    end
  end
  if c == 91 or c == 123 then
    nodes.opening(P, anchor)
    return nodes.finish(P, anchor, tag, tag_at, c == 91 and "seq" or "map", collection(P))
  elseif c == 34 or c == 39 then
    local text = c == 34 and scalars.double(P) or scalars.single(P)
    return nodes.finish(P, anchor, tag, tag_at, "quoted", nil, text)
  elseif c == 42 then
    local value, text = nodes.alias(P)
    return nodes.finish(P, anchor, tag, tag_at, "alias", value, text)
  end
  local refused = M.plain_refused(s, P.pos, true)
  if refused then R.fail(P, P.pos, refused) end
  local text = scalars.plain(P, -1, true)
  return nodes.finish(P, anchor, tag, tag_at, "plain", nil, text)
end

-- After a key in a flow collection: whether a ':' follows that makes it a pair.
local function pair_colon(P, open, kind)
  skip(P, open)
  local s = P.s
  return byte(s, P.pos) == 58 and (kind ~= "plain" or separated(s, P.pos + 1))
end

-- The value after a key: after its ':' (at P.pos when `colon`), null when the entry ends there.
local function pair_value(P, open, colon)
  if not colon then return NULL end
  P.pos = P.pos + 1
  skip(P, open)
  local c = byte(P.s, P.pos)
  if c == 44 or c == 93 or c == 125 then return NULL end
  return (node(P, open))
end

-- A key in a flow collection (after an optional '?'): key text, kind, position.
local function key(P, open)
  local s = P.s
  if byte(s, P.pos) == 63 and separated(s, P.pos + 1) then
    P.pos = P.pos + 1
    skip(P, open)
  end
  local at, c = P.pos, byte(s, P.pos)
  if (c == 58 and separated(s, P.pos + 1)) or c == 44 or c == 93 or c == 125 then return "", "empty", at end
  local _, text, kind = node(P, open)
  return text, kind, at
end

-- A single pair in a flow sequence, `[a: 1]`, from its key: the mapping {a: 1}.
local function single_pair(P, open, k, kind, at)
  local t = {}
  local merges = nodes.put(P, t, {}, nil, k, kind, pair_value(P, open, pair_colon(P, open, kind)), at)
  return nodes.merge(P, t, merges)
end

local function sequence(P, open)
  local s, t, n = P.s, {}, 0
  P.pos = open + 1
  while true do
    skip(P, open)
    local c = byte(s, P.pos)
    if c == 93 then break end
    local value
    if (c == 63 or c == 58) and separated(s, P.pos + 1) then
      value = single_pair(P, open, key(P, open))
    else
      local at = P.pos
      local text, kind
      value, text, kind = node(P, open)
      if pair_colon(P, open, kind) then value = single_pair(P, open, text, kind, at) end
    end
    n = n + 1
    t[n] = value
    skip(P, open)
    c = byte(s, P.pos)
    if c == 93 then break end
    if c ~= 44 then R.fail(P, P.pos, "expected ',' or ']' in the flow sequence") end
    P.pos = P.pos + 1
  end
  P.pos = P.pos + 1
  return setmetatable(t, ARRAY)
end

local function mapping(P, open)
  local s, t, where, merges = P.s, {}, {}, nil
  P.pos = open + 1
  while true do
    skip(P, open)
    if byte(s, P.pos) == 125 then break end
    local k, kind, at = key(P, open)
    local value = pair_value(P, open, pair_colon(P, open, kind))
    merges = nodes.put(P, t, where, merges, k, kind, value, at)
    skip(P, open)
    local c = byte(s, P.pos)
    if c == 125 then break end
    if c ~= 44 then R.fail(P, P.pos, "expected ',' or '}' in the flow mapping") end
    P.pos = P.pos + 1
  end
  P.pos = P.pos + 1
  return nodes.merge(P, t, merges)
end

--- The flow collection at P.pos ('[' or '{'); P.pos is left after its closing bracket.
function collection(P)
  local open = P.pos
  nodes.enter(P, open)
  local v = byte(P.s, open) == 91 and sequence(P, open) or mapping(P, open)
  nodes.leave(P)
  return v
end
M.collection = collection

return M
