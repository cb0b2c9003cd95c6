-- Block collections, where indentation is the structure: `- ` sequences and `key: value`
-- mappings (with `? ` explicit keys), nested by indenting, and the nodes inside them.
--
-- Each function starts at its first character and leaves P.pos at the end of what it read, on
-- its last line: a collection looks at the next line to see that it has ended, then goes back
-- to where its last entry ended, so the caller looks again (reader.skip remembers where that
-- look landed). Every entry of one collection starts at one column; a mapping's value may be a
-- sequence at the mapping's own column (`key:` then `- a`).
local R = require "lunet.yaml.reader"
local scalars = require "lunet.yaml.scalars"
local block_scalar = require "lunet.yaml.block_scalar"
local schema = require "lunet.yaml.schema"
local nodes = require "lunet.yaml.nodes"
local flow = require "lunet.yaml.flow"
local find, byte, sub, setmetatable = string.find, string.byte, string.sub, require("lunet.runtime").setmetatable

local M = {}

local NULL, ARRAY = schema.NULL, schema.ARRAY

-- Bytes a plain scalar cannot start with, or only sometimes ("-", "?", ":"): indicators, quotes,
-- brackets, blanks. Any other byte starts a plain scalar, the common case, read without the
-- general path's checks.
local SPECIAL = {}
for c in ("-?:,[]{}#&*!|>'\"%@` \t\n"):gmatch(".") do SPECIAL[byte(c)] = true end

-- Whether the byte at `pos` is a blank, a line break or the end (what follows "- ", "? ", ": ").
local function blank(s, pos)
  local c = byte(s, pos)
  return c == nil or c == 32 or c == 10 or c == 9
end

-- Raises for text on the line where a value ended (P.pos).
local function after_value(P)
  local c = byte(P.s, P.pos)
  if c == 58 then
    R.fail(P, P.pos, "a ':' that is not allowed here (a key cannot span lines; is the indentation right?)")
  elseif c == 35 then
    R.fail(P, P.pos, "a comment needs a space before its '#'")
  end
  R.fail(P, P.pos, "unexpected text after the value")
end
M.after_value = after_value

-- A node that is not a block collection, at P.pos: a flow collection, a quoted or plain scalar,
-- an alias or a block scalar. Returns its value (untagged), text, kind and whether it spans
-- lines (a quoted or plain scalar cannot be a key then).
local function inline(P, indent, anchor)
  local s = P.s
  local c = byte(s, P.pos)
  if c == 91 or c == 123 then
    nodes.opening(P, anchor)
    return flow.collection(P), nil, c == 91 and "seq" or "map", false
  elseif c == 34 then
    local text, multi = scalars.double(P)
    return nil, text, "quoted", multi
  elseif c == 39 then
    local text, multi = scalars.single(P)
    return nil, text, "quoted", multi
  elseif c == 42 then
    local value, text = nodes.alias(P)
    return value, text, "alias", false
  elseif c == 124 or c == 62 then
    return nil, block_scalar.read(P, indent), "block", true
  end
  if SPECIAL[c] then
    local refused = flow.plain_refused(s, P.pos, false)
    if refused then R.fail(P, P.pos, refused) end
  end
  local text, multi = scalars.plain(P, indent, false)
  return nil, text, "plain", multi
end

-- If a ':' and a blank follow the node that ended at P.pos on its line, the position of ':'.
local function colon_after(P)
  local s = P.s
  local c = byte(s, P.pos)
  if c == 10 or c == nil then return nil end
  local _, w = find(s, "^[ \t]*", P.pos)
  if byte(s, w + 1) == 58 and blank(s, w + 2) then return w + 1 end
  return nil
end

local mapping, sequence

-- A mapping's key at P.pos, on a line of its own or after "- ": the key text, its kind and
-- position; P.pos is left on the ':' (nil when an explicit key has no value).
local function key(P, col)
  local s, at = P.s, P.pos
  local c = byte(s, at)
  if c == 63 and blank(s, at + 1) then
    P.pos = at + 1
    local _, text, kind = M.node(P, col, "entry")
    local end_pos, end_ls = P.pos, P.lstart
    local crossed = R.skip_block(P)
    if not crossed and P.pos <= P.n then after_value(P) end
    if R.column(P) == col and byte(s, P.pos) == 58 and blank(s, P.pos + 1) and not R.at_marker(P) then
      return text, kind, at, true
    end
    P.pos, P.lstart = end_pos, end_ls
    return text, kind, at, false
  end
  if c and not SPECIAL[c] then
    local e, q = scalars.plain_segment(s, at, false)
    if byte(s, q) == 58 then
      P.pos = q
      return sub(s, at, e), "plain", at, true
    end
  end
  if c == 58 and blank(s, at + 1) then return "", "empty", at, true end
  if c == 45 and blank(s, at + 1) then R.fail(P, at, "a sequence entry '- ' where a mapping key was expected") end
  local anchor, tag, tag_at = nodes.properties(P, false)
  local value, text, kind, multi = inline(P, col, anchor)
  local colon = colon_after(P)
  if not colon then
    R.fail(P, P.pos, "expected ':' after the mapping key" .. (multi and " (a key cannot span lines)" or ""))
  end
  if multi then R.fail(P, at, "a key cannot span lines") end
  value, text, kind = nodes.finish(P, anchor, tag, tag_at, kind, value, text)
  P.pos = colon
  return text, kind, at, true
end

-- After an entry at column `col`: whether the collection goes on (P.pos at the next entry: for
-- a sequence, a "- "). When it has ended, P.pos goes back to the end of the entry.
local function next_entry(P, col, seq)
  local end_pos, end_ls = P.pos, P.lstart
  local crossed = R.skip_block(P)
  if P.pos <= P.n and not crossed then after_value(P) end
  local c = P.pos - P.lstart
  if P.pos > P.n or c < col or (c == 0 and R.at_marker(P)) then
    P.pos, P.lstart = end_pos, end_ls
    return false
  end
  if c > col then
    R.fail(P, P.pos, string.format("bad indentation: this line is indented more than the entries before it (column %d)", col + 1))
  end
  if seq and not (byte(P.s, P.pos) == 45 and blank(P.s, P.pos + 1)) then
    -- A line at this column that is not an entry: the next key of the mapping this sequence
    -- is the value of (`key:` then `- a` at the key's column), the caller's to read.
    P.pos, P.lstart = end_pos, end_ls
    return false
  end
  return true
end

--- The block mapping whose keys are at column `col`, from P.pos. When its first key was read
--- already (to see that this is a mapping), `first` is its text, with kind and position, and
--- P.pos is on its ':'.
function mapping(P, col, first, first_kind, first_at)
  nodes.enter(P, P.pos)
  local s, t, where, merges = P.s, {}, {}, nil
  local k, kind, at, has_value = first, first_kind, first_at, true
  if not first then k, kind, at, has_value = key(P, col) end
  while true do
    local value = NULL
    if has_value then
      local explicit = byte(s, at) == 63
      P.pos = P.pos + 1
      value = M.node(P, col, explicit and "entry" or "value")
    end
    merges = nodes.put(P, t, where, merges, k, kind, value, at)
    if not next_entry(P, col) then break end
    k, kind, at, has_value = key(P, col)
  end
  nodes.leave(P)
  return nodes.merge(P, t, merges)
end

--- The block sequence whose "- " are at column `col`, from P.pos (the first '-').
function sequence(P, col)
  nodes.enter(P, P.pos)
  local t, n = {}, 0
  repeat
    P.pos = P.pos + 1
    n = n + 1
    t[n] = M.node(P, col, "entry")
  until not next_entry(P, col, true)
  nodes.leave(P)
  return setmetatable(t, ARRAY)
end

-- A block collection that starts at P.pos, at column `col`, with the properties given before
-- it: a sequence ("- "), a mapping with an explicit key ("? ") or with an empty key (": ").
local function collection(P, col, c, anchor, tag, tag_at)
  nodes.opening(P, anchor)
  if c == 45 then return nodes.finish(P, anchor, tag, tag_at, "seq", sequence(P, col)) end
  return nodes.finish(P, anchor, tag, tag_at, "map", mapping(P, col))
end

-- The node at P.pos, which is not a block sequence nor an explicit key: a scalar, a flow
-- collection or an alias, unless a ':' follows it on its line, when it is the first key of a
-- block mapping. `line` holds the properties on this line, before it (the key's, if it is a
-- key), `outer` those on an earlier line (the mapping's then); a scalar takes both.
local function scalar_or_mapping(P, indent, ctx, fresh, line, outer)
  local start, col = P.pos, P.pos - P.lstart
  local value, text, kind, multi = inline(P, indent, line.anchor or outer.anchor)
  local colon = kind ~= "block" and colon_after(P)
  if not colon then
    if outer.anchor and line.anchor then R.fail(P, line.at, "a node with two anchors") end
    if outer.tag and line.tag then R.fail(P, line.tag_at, "a node with two tags") end
    return nodes.finish(P, line.anchor or outer.anchor, line.tag or outer.tag, line.tag_at or outer.tag_at, kind, value, text)
  end
  if multi and not fresh then
    R.fail(P, colon, "a ':' that is not allowed here (a key cannot span lines; is the indentation right?)")
  end
  if not fresh and ctx ~= "entry" then
    R.fail(P, colon, ctx == "doc" and "a block mapping cannot start on the '---' line"
      or "a mapping cannot start on the line of another key (write `a: b: c` as `a:` then `  b: c` on the next line)")
  end
  if multi then R.fail(P, start, "a key cannot span lines") end
  local _, key, key_kind = nodes.finish(P, line.anchor, line.tag, line.tag_at, kind, value, text)
  if key == nil then nodes.complex_key(P, line.at or start) end
  P.pos = colon
  nodes.opening(P, outer.anchor)
  -- The mapping starts where the key's properties do.
  local key_at = line.at or start
  local map = mapping(P, col - (start - key_at), key, key_kind, key_at)
  return nodes.finish(P, outer.anchor, outer.tag, outer.tag_at, "map", map)
end

-- The anchor and tag at P.pos as a table (`at`: where they start), NONE when there are none.
local NONE = {}
local function properties(P)
  local at, c = P.pos, byte(P.s, P.pos)
  if c ~= 38 and c ~= 33 then return NONE end
  local anchor, tag, tag_at = nodes.properties(P, false)
  return { at = at, anchor = anchor, tag = tag, tag_at = tag_at }
end

--- A node in block context after an indicator ("- ", "? ", ": ", "---"), or at a document's
--- first content (ctx "top"). `indent` is the column of the collection holding it (-1 at the
--- top). ctx "entry" (after "- ", "? " or an explicit key's ": ") lets a collection start on the
--- indicator's line (`- a: 1`, `- - a`); after a key's ':' (ctx "value") or "---" ("doc") it
--- must start on a line of its own. Returns value, text (a scalar's) and kind.
function M.node(P, indent, ctx)
  local s = P.s
  local fresh = ctx == "top"
  if not fresh then
    local _, w = find(s, "^[ \t]*", P.pos)
    P.pos = w + 1
  end
  local line, outer, c = NONE, NONE, byte(s, P.pos)
  if c == 38 or c == 33 then
    line = properties(P)
    c = byte(s, P.pos)
  end
  if c == nil or c == 10 or c == 35 then
    local end_pos, end_ls = P.pos, P.lstart
    R.skip_block(P)
    local col = R.column(P)
    c = byte(s, P.pos)
    local dash = c == 45 and blank(s, P.pos + 1)
    if P.pos > P.n or R.at_marker(P) or col < indent or (col == indent and not (dash and ctx == "value")) then
      P.pos, P.lstart = end_pos, end_ls
      return nodes.finish(P, line.anchor, line.tag, line.tag_at, "empty", nil, "")
    end
    fresh, outer, line = true, line, properties(P)
    c = byte(s, P.pos)
  end
  if (c == 45 or c == 63 or (c == 58 and fresh)) and blank(s, P.pos + 1) then
    if c == 58 and not fresh then R.fail(P, P.pos, "a mapping entry without a key (write \"\" for the empty key)") end
    if line.anchor or line.tag or not (fresh or ctx == "entry") then
      R.fail(P, P.pos, c == 45 and "a block sequence cannot start here (start it on a line of its own)"
        or "a block mapping cannot start here (start it on a line of its own)")
    end
    return collection(P, R.column(P), c, outer.anchor, outer.tag, outer.tag_at)
  end
  return scalar_or_mapping(P, indent, ctx, fresh, line, outer)
end

return M
