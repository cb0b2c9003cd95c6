--- HTTPie's nested JSON for data items: `a[b]=1`, `a[list][]=x`, `a[0]=y`, `[]:=1` (a top-level
--- array), `a\[b\]=1` (brackets in a key). Items are applied in order onto one tree; the body
--- is written with Python's separators (", " and ": "), keys in the order first given, so that
--- it is HTTPie's byte for byte. Pure.
local json = require "lunet.json"

local M = {}

-- The largest array index an item may name. An index pads the array with nulls up to it
-- (HTTPie's rule), so one argument like `a[999999999999]=1` would build a body of terabytes:
-- past this (a body of ~500 KB of nulls) it is a usage error.
M.MAX_INDEX = 100000

-- A path: "name[seg][seg]..." or "[seg]..." (the top level is an array then). A segment is
-- empty (append), digits (an index from 0) or anything else (a key). Backslash escapes `[`,
-- `]` and itself. Returns the list of steps { kind = "key"|"index"|"append", value }, or nil
-- and what is wrong with it.
function M.parse_path(key)
  local steps, i, n = {}, 1, #key
  -- Reads up to an unescaped `stop` character (or the end): the text, unescaped, and where
  -- it stopped.
  local function read_until(stop)
    local parts = {}
    while i <= n do
      local c = key:sub(i, i)
      if c == "\\" and i < n and key:sub(i + 1, i + 1):find("[%[%]\\]") then
        parts[#parts + 1] = key:sub(i + 1, i + 1)
        i = i + 2
      elseif stop:find(c, 1, true) then
        break
      else
        parts[#parts + 1] = c
        i = i + 1
      end
    end
    return table.concat(parts)
  end
  local name = read_until("[]")
  if name ~= "" or i > n then steps[1] = { kind = "key", value = name } end
  while i <= n do
    if key:sub(i, i) ~= "[" then
      return nil, string.format("a '[' was expected at character %d of the name (a literal bracket is written \\[ or \\])", i)
    end
    i = i + 1
    local seg = read_until("]")
    if key:sub(i, i) ~= "]" then return nil, "a '[' is not closed" end
    i = i + 1
    if seg == "" then
      steps[#steps + 1] = { kind = "append" }
    elseif seg:find("^%-%d+$") then
      return nil, "negative indexes are not supported"
    elseif seg:find("^%d+$") then
      local index = tonumber(seg)
      if index > M.MAX_INDEX then
        return nil, string.format("index %s would pad the array with nulls up to it; the largest index an item may name is %d", seg, M.MAX_INDEX)
      end
      steps[#steps + 1] = { kind = "index", value = index }
    else
      steps[#steps + 1] = { kind = "key", value = seg }
    end
  end
  return steps
end

-- Nodes: { object = true, keys = { k... }, map = { k = node } }, { array = true, n, items },
-- or a leaf { text = "encoded JSON" } (raw `:=` values stay as typed until nested into).
local function new_container(step)
  if step.kind == "key" then return { object = true, keys = {}, map = {} } end
  return { array = true, n = 0, items = {} }
end

local function type_name(node)
  if node == nil then return "null" end
  if node.object then return "an object" end
  if node.array then return "an array" end
  local c = node.text:match("^%s*(.)")
  return c == '"' and "a string" or c == "[" and "an array" or c == "{" and "an object" or "a value (" .. node.text .. ")"
end

-- A raw `:=` array becomes an array node when an item appends to it or indexes it.
local function opened(node)
  if node and node.text and node.text:match("^%s*%[") then
    local list = json.decode(node.text)
    local items = {}
    for i = 1, #list do items[i] = { text = json.encode(list[i]) } end
    return { array = true, n = #list, items = items }
  end
  return node
end

local function label(steps, upto)
  local parts = {}
  for j = 1, upto do
    local s = steps[j]
    if s.kind == "key" then parts[#parts + 1] = j == 1 and s.value or "[" .. s.value .. "]"
    elseif s.kind == "index" then parts[#parts + 1] = "[" .. s.value .. "]"
    else parts[#parts + 1] = "[]" end
  end
  local text = table.concat(parts)
  return text == "" and "the top level" or text
end

--- Applies one item: `steps` (parse_path) set to `leaf_text` (encoded JSON) in `root` (a
--- one-element box { node }). nil and a message on a type clash.
function M.set(box, steps, leaf_text, item)
  if box[1] == nil then box[1] = new_container(steps[1]) end
  local parent_get, parent_set = function() return box[1] end, function(v) box[1] = v end
  for j = 1, #steps do
    local step = steps[j]
    local node = opened(parent_get())
    if node ~= parent_get() then parent_set(node) end
    local wants = step.kind == "key" and "object" or "array"
    if node and node.text and node.text:match("^%s*{") then
      return nil, string.format("'%s': %s was given whole as raw JSON (:=); put %s in it there", item, label(steps, j - 1),
        step.kind == "key" and ("'" .. step.value .. "'") or "the item")
    end
    if not (node and node[wants]) then
      return nil, string.format("'%s': %s is %s, so it cannot take %s", item, label(steps, j - 1), type_name(node),
        step.kind == "key" and ("the key '" .. step.value .. "'") or step.kind == "append" and "an appended item" or ("index " .. step.value))
    end
    local get, set
    if step.kind == "key" then
      local k = step.value
      if node.map[k] == nil and not node.keys[k] then node.keys[#node.keys + 1] = k; node.keys[k] = true end
      get, set = function() return node.map[k] end, function(v) node.map[k] = v end
    else
      local index = step.kind == "append" and node.n + 1 or step.value + 1
      if index > node.n then node.n = index end
      get, set = function() return node.items[index] end, function(v) node.items[index] = v end
    end
    if j == #steps then
      set({ text = leaf_text })
    elseif get() == nil then
      set(new_container(steps[j + 1]))
    end
    parent_get, parent_set = get, set
  end
  return true
end

--- The tree as JSON text with Python's separators.
function M.encode(node)
  if node == nil then return "null" end
  if node.text then return node.text end
  local parts = {}
  if node.object then
    for i, k in ipairs(node.keys) do parts[i] = json.encode(k) .. ": " .. M.encode(node.map[k]) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  for i = 1, node.n do parts[i] = M.encode(node.items[i]) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

--- The body for data fields { {name, encoded JSON value}, ... }, or nil and a message.
function M.body(fields)
  local box = {}
  for _, f in ipairs(fields) do
    local steps, err = M.parse_path(f[1])
    if not steps then return nil, string.format("'%s': %s", f.item or f[1], err) end
    local ok, clash = M.set(box, steps, f[2], f.item or f[1])
    if not ok then return nil, clash end
  end
  return M.encode(box[1])
end

return M
