-- What block and flow nodes share: properties (an anchor `&a`, a tag `!!str`), aliases `*a`,
-- the nesting bound, and building a mapping (string keys, duplicates refused, merge keys `<<`).
--
-- An alias gives a copy of its anchor's value, so the decoded document is a tree as
-- json.decode's are (changing one place does not change another). Copies count against
-- max_aliases, node by node: ten aliases of ten aliases of ... (a "billion laughs") stop at
-- the bound at once, instead of building 10^9 nodes or handing over a small graph that any walk
-- of it (json.encode) would expand.
local R = require "lunet.yaml.reader"
local schema = require "lunet.yaml.schema"
local runtime = require "lunet.runtime"
local find, byte, sub = string.find, string.byte, string.sub
local setmetatable, getmetatable, next = runtime.setmetatable, runtime.getmetatable, next

local M = {}

local FLOW_INDICATOR = { [44] = true, [91] = true, [93] = true, [123] = true, [125] = true }
local IN_PROGRESS = {}   -- an anchor whose node is still being read

--- The anchor and tag at P.pos, each at most once, in either order, each followed by a blank
--- (or a flow indicator, in flow context): anchor name, tag (schema.resolve_tag's name), the
--- tag's position. P.pos is left after them and the blanks that follow.
function M.properties(P, flow)
  local s, anchor, tag, tag_at = P.s, nil, nil, nil
  while true do
    local at = P.pos
    local c = byte(s, at)
    local _, e
    if c == 38 then
      if anchor then R.fail(P, at, "a node with two anchors") end
      _, e = find(s, "^[^ \t\n,%[%]{}]+", at + 1)
      if not e then R.fail(P, at, "an anchor '&' needs a name") end
      anchor = sub(s, at + 1, e)
    elseif c == 33 then
      if tag then R.fail(P, at, "a node with two tags") end
      if byte(s, at + 1) == 60 then
        _, e = find(s, "^![<][^ \t\n>]*>", at)
        if not e then R.fail(P, at, "a verbatim tag '!<...>' that is not closed") end
      else
        _, e = find(s, "^![^ \t\n,%[%]{}]*", at)
      end
      tag, tag_at = schema.resolve_tag(P, sub(s, at, e), at), at
    else
      return anchor, tag, tag_at
    end
    local d = byte(s, e + 1)
    if d ~= nil and d ~= 32 and d ~= 9 and d ~= 10 and not (flow and FLOW_INDICATOR[d]) then
      R.fail(P, e + 1, "an anchor or a tag must be followed by a space")
    end
    _, e = find(s, "^[ \t]*", e + 1)
    P.pos = e + 1
  end
end

--- Marks `anchor` as being read, before a collection is: an alias to it inside is an error.
function M.opening(P, anchor)
  if anchor then P.anchors[anchor] = IN_PROGRESS end
end

--- The node's value once read: its tag applied, its anchor defined. Returns value, text (for a
--- scalar: what a key made of it is) and kind ("tagged" when a tag was given).
function M.finish(P, anchor, tag, tag_at, kind, value, text)
  if not anchor and not tag and kind == "plain" then return schema.plain(text), text, kind end
  if kind == "alias" and (anchor or tag) then R.fail(P, P.alias_at, "an alias cannot have an anchor or a tag") end
  value = schema.apply(P, tag, kind, value, text, tag_at)
  if anchor then P.anchors[anchor] = { value = value, text = text } end
  return value, text, (tag and kind ~= "empty") and "tagged" or kind
end

local function copy(P, v, at)
  local count = P.alias_nodes + 1
  P.alias_nodes = count
  if count > P.max_aliases then
    R.fail(P, at, string.format("aliases expand to more than %d nodes (max_aliases): aliases of aliases can make a small document enormous (a \"billion laughs\")", P.max_aliases))
  end
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in next, v do t[k] = copy(P, x, at) end
  return setmetatable(t, getmetatable(v))
end

--- The alias at P.pos ('*'): a copy of its anchor's value and the anchor's text.
function M.alias(P)
  local s, at = P.s, P.pos
  local _, e = find(s, "^[^ \t\n,%[%]{}]+", at + 1)
  if not e then R.fail(P, at, "an alias '*' needs a name") end
  local name = sub(s, at + 1, e)
  P.pos, P.alias_at = e + 1, at
  local a = P.anchors[name]
  if a == nil then R.fail(P, at, "the alias *" .. R.shown(name) .. " names no anchor before it") end
  if a == IN_PROGRESS then R.fail(P, at, "the alias *" .. R.shown(name) .. " is inside the node it names (a recursive structure has no JSON value)") end
  return copy(P, a.value, at), a.text
end

--- One more level of mappings and sequences at `at`, within max_depth.
function M.enter(P, at)
  local depth = P.depth + 1
  if depth > P.max_depth then
    R.fail(P, at, string.format("nesting too deep (more than %d levels of mappings and sequences)", P.max_depth))
  end
  P.depth = depth
end

function M.leave(P)
  P.depth = P.depth - 1
end

--- Raises for a key that is a mapping or a sequence (`[a, b]: c`, `? - a`).
function M.complex_key(P, at)
  R.fail(P, at, "a mapping or a sequence as a key is not supported (JSON keys are strings)")
end

--- Sets key -> value in the mapping `t`. `where` remembers each key's position, to name the
--- first when a key comes twice. A merge key `<<` (plain, untagged) is kept in `merges` instead.
--- Returns merges.
function M.put(P, t, where, merges, key, kind, value, at)
  if key == nil then M.complex_key(P, at) end
  -- YAML allows `: value` and `? ` with no key; libyaml does not, and a key that is missing is
  -- more often a slip than meant: "" has to be written.
  if kind == "empty" then R.fail(P, at, "a mapping entry without a key (write \"\" for the empty key)") end
  if kind == "plain" and key == "<<" then
    if merges then R.fail(P, at, "a second merge key '<<' in one mapping (give one '<<' a list of mappings)") end
    return { value = value, at = at }
  end
  if where[key] then
    local shown = string.format("%q", R.shown(key)):gsub("\\\n", "\\n")
    R.fail(P, at, string.format("duplicate key %s (first on line %d)", shown, R.line_of(P, where[key])))
  end
  where[key], t[key] = at, value
  return merges
end

local function is_mapping(v)
  return type(v) == "table" and getmetatable(v) ~= schema.ARRAY
end

--- The merge key's mappings, which give `t` the keys it does not have: of a list, the first
--- that has a key gives it (YAML 1.1's merge key, which OpenAPI and Kubernetes files use).
function M.merge(P, t, merges)
  if not merges then return t end
  local v, sources = merges.value, nil
  if is_mapping(v) then
    sources = { v }
  elseif type(v) == "table" then
    sources = v
  else
    R.fail(P, merges.at, "a merge key '<<' needs a mapping or a list of mappings")
  end
  for _, m in ipairs(sources) do
    if not is_mapping(m) then R.fail(P, merges.at, "a merge key '<<' needs a mapping or a list of mappings") end
    for k, x in next, m do
      if t[k] == nil then t[k] = x end
    end
  end
  return t
end

return M
