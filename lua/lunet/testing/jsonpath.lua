-- A JSONPath subset for test assertions, over decoded JSON (Lua tables from json.decode).
--
--   $                 the root
--   .key  ['key']     a member ("key" in double quotes too; \' and \\ escape in quotes)
--   [n]               an array item, 0-based as in JSONPath ([-1] is the last one)
--   [*]  .*           every item of an array, every member value of an object
--   ..key  ..[n] ..*  recursive descent: the step applied at every level below
--   [?(@.a.b OP v)]   items (or member values) whose @-path compares so with v: OP is ==, !=,
--                     <, <=, >, >=; v is 'string', "string", a number, true, false or null
--   [?(@.key)]        items where the path exists
--
-- find(doc, path) returns the matched values and their paths in normalized form
-- ($['items'][0]['id']), or raises an error naming the position of a syntax error.
local json = require "lunet.json"
local M = {}

local function syntax_error(path, pos, what)
  error(string.format("invalid JSONPath %q at position %d: %s", path, pos, what), 0)
end

-- Reads a quoted string starting at pos (on the quote); returns it and the position after it.
local function read_quoted(path, pos)
  local q = string.sub(path, pos, pos)
  local out, i = {}, pos + 1
  while i <= #path do
    local c = string.sub(path, i, i)
    if c == "\\" then
      local nxt = string.sub(path, i + 1, i + 1)
      if nxt == "" then break end
      out[#out + 1] = nxt
      i = i + 2
    elseif c == q then
      return table.concat(out), i + 1
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  syntax_error(path, pos, "unterminated string")
end

-- A literal in a filter: returns the value (json.null for null) and the position after it.
local function read_literal(path, pos)
  local c = string.sub(path, pos, pos)
  if c == "'" or c == '"' then return read_quoted(path, pos) end
  local num = string.match(path, "^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
  if num and num ~= "" and num ~= "-" then
    local v = tonumber(num)
    if v == nil then syntax_error(path, pos, "bad number '" .. num .. "'") end
    return v, pos + #num
  end
  for word, value in pairs({ ["true"] = true, ["false"] = false, null = json.null }) do
    if string.sub(path, pos, pos + #word - 1) == word then return value, pos + #word end
  end
  syntax_error(path, pos, "a string, number, true, false or null expected")
end

-- The relative path after @ in a filter: a list of keys (strings) and indexes (integers).
local function read_relative(path, pos)
  local keys = {}
  while true do
    local c = string.sub(path, pos, pos)
    if c == "." then
      local name = string.match(path, "^[^%.%[%]%s=!<>%)]+", pos + 1)
      if not name then syntax_error(path, pos + 1, "a member name expected after '.'") end
      keys[#keys + 1] = name
      pos = pos + 1 + #name
    elseif c == "[" then
      local q = string.sub(path, pos + 1, pos + 1)
      if q == "'" or q == '"' then
        local key, after = read_quoted(path, pos + 1)
        if string.sub(path, after, after) ~= "]" then syntax_error(path, after, "']' expected") end
        keys[#keys + 1] = key
        pos = after + 1
      else
        local n = string.match(path, "^-?%d+", pos + 1)
        if not n or string.sub(path, pos + 1 + #n, pos + 1 + #n) ~= "]" then
          syntax_error(path, pos + 1, "an index or a quoted name expected")
        end
        keys[#keys + 1] = math.tointeger(tonumber(n))
        pos = pos + 2 + #n
      end
    else
      return keys, pos
    end
  end
end

local OPS = { ["=="] = true, ["!="] = true, ["<="] = true, [">="] = true, ["<"] = true, [">"] = true }

-- Parses `path` into steps: { kind = "key"|"index"|"wild"|"filter", ..., deep = bool }.
function M.parse(path)
  if type(path) ~= "string" then error("a JSONPath string expected, got " .. type(path), 0) end
  if string.sub(path, 1, 1) ~= "$" then syntax_error(path, 1, "a path starts with '$'") end
  local steps, pos = {}, 2
  while pos <= #path do
    local c = string.sub(path, pos, pos)
    local deep = false
    if string.sub(path, pos, pos + 1) == ".." then
      deep = true
      pos = pos + 2
      c = string.sub(path, pos, pos)
      if c ~= "[" then c = "." ; pos = pos - 1 end
    end
    if c == "." then
      if string.sub(path, pos + 1, pos + 1) == "*" then
        steps[#steps + 1] = { kind = "wild", deep = deep }
        pos = pos + 2
      else
        local name = string.match(path, "^[^%.%[%]]+", pos + 1)
        if not name then syntax_error(path, pos + 1, "a member name expected after '.'") end
        steps[#steps + 1] = { kind = "key", key = name, deep = deep }
        pos = pos + 1 + #name
      end
    elseif c == "[" then
      local inner = string.sub(path, pos + 1, pos + 1)
      if inner == "'" or inner == '"' then
        local key, after = read_quoted(path, pos + 1)
        if string.sub(path, after, after) ~= "]" then syntax_error(path, after, "']' expected") end
        steps[#steps + 1] = { kind = "key", key = key, deep = deep }
        pos = after + 1
      elseif inner == "*" then
        if string.sub(path, pos + 2, pos + 2) ~= "]" then syntax_error(path, pos + 2, "']' expected") end
        steps[#steps + 1] = { kind = "wild", deep = deep }
        pos = pos + 3
      elseif inner == "?" then
        if string.sub(path, pos + 2, pos + 3) ~= "(@" then syntax_error(path, pos + 2, "a filter reads [?(@...)]") end
        local keys, p = read_relative(path, pos + 4)
        p = string.match(path, "^%s*()", p)
        local step = { kind = "filter", keys = keys, deep = deep }
        local op = string.match(path, "^[=!<>]=?", p)
        if op then
          if not OPS[op] then syntax_error(path, p, "unknown operator '" .. op .. "'") end
          step.op = op
          p = string.match(path, "^%s*()", p + #op)
          step.value, p = read_literal(path, p)
          p = string.match(path, "^%s*()", p)
        end
        if string.sub(path, p, p + 1) ~= ")]" then syntax_error(path, p, "')]' expected") end
        steps[#steps + 1] = step
        pos = p + 2
      else
        local n = string.match(path, "^%s*(-?%d+)%s*%]", pos + 1)
        if not n then syntax_error(path, pos + 1, "an index, '*', a quoted name or a filter expected") end
        steps[#steps + 1] = { kind = "index", index = math.tointeger(tonumber(n)), deep = deep }
        pos = string.find(path, "]", pos, true) + 1
      end
    else
      syntax_error(path, pos, "'.' or '[' expected")
    end
  end
  return steps
end

local function is_array(v)
  if json.is_array(v) then return true end
  return rawget(v, 1) ~= nil
end

-- The children of a container: { value, key-in-path } in order (arrays by index, objects by
-- sorted member name).
local function children(v)
  local out = {}
  if type(v) ~= "table" then return out end
  if is_array(v) then
    for i = 1, #v do out[#out + 1] = { v[i], i - 1 } end
  else
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do out[#out + 1] = { v[k], k } end
  end
  return out
end

local function segment(k)
  if type(k) == "number" then return "[" .. k .. "]" end
  return "['" .. string.gsub(tostring(k), "(['\\])", "\\%1") .. "']"
end

local function compare(a, op, b)
  if op == "==" then return a == b end
  if op == "!=" then return a ~= b end
  if type(a) ~= type(b) or (type(a) ~= "number" and type(a) ~= "string") then return false end
  if op == "<" then return a < b elseif op == "<=" then return a <= b
  elseif op == ">" then return a > b else return a >= b end
end

local function relative(v, keys)
  for _, k in ipairs(keys) do
    if type(v) ~= "table" then return nil end
    if math.type(k) == "integer" then
      v = rawget(v, k >= 0 and k + 1 or #v + k + 1)
    else
      v = rawget(v, k)
    end
  end
  return v
end

-- Applies one step (not deep) to node; adds { value, path } matches to out.
local function apply(step, value, path, out)
  if type(value) ~= "table" then return end
  if step.kind == "key" then
    local v = rawget(value, step.key)
    if v ~= nil then out[#out + 1] = { v, path .. segment(step.key) } end
  elseif step.kind == "index" then
    if not is_array(value) then return end
    local i = step.index >= 0 and step.index + 1 or #value + step.index + 1
    local v = rawget(value, i)
    if v ~= nil then out[#out + 1] = { v, path .. segment(i - 1) } end
  elseif step.kind == "wild" then
    for _, c in ipairs(children(value)) do out[#out + 1] = { c[1], path .. segment(c[2]) } end
  else
    for _, c in ipairs(children(value)) do
      local v = relative(c[1], step.keys)
      local keep
      if step.op then keep = v ~= nil and compare(v, step.op, step.value)
      else keep = v ~= nil end
      if keep then out[#out + 1] = { c[1], path .. segment(c[2]) } end
    end
  end
end

local function descend(value, path, out)
  out[#out + 1] = { value, path }
  for _, c in ipairs(children(value)) do
    if type(c[1]) == "table" then descend(c[1], path .. segment(c[2]), out) end
  end
end

--- Evaluates `path` on `doc`. Returns the list of matched values, the list of their
--- normalized paths, and, when nothing matched, where the path stopped matching: the
--- prefix of the path that still matched and the values there.
function M.find(doc, path)
  local steps = type(path) == "table" and path or M.parse(path)
  local nodes = { { doc, "$" } }
  local last_nodes, matched_steps = nodes, 0
  for i, step in ipairs(steps) do
    local targets = nodes
    if step.deep then
      targets = {}
      for _, n in ipairs(nodes) do descend(n[1], n[2], targets) end
    end
    local out = {}
    for _, n in ipairs(targets) do apply(step, n[1], n[2], out) end
    nodes = out
    if #nodes == 0 then break end
    last_nodes, matched_steps = nodes, i
  end
  local values, paths = {}, {}
  for i, n in ipairs(nodes) do values[i] = n[1]; paths[i] = n[2] end
  local stopped
  if #values == 0 then
    stopped = { steps = matched_steps, paths = {}, values = {} }
    for i, n in ipairs(last_nodes) do stopped.values[i] = n[1]; stopped.paths[i] = n[2] end
  end
  return values, paths, stopped
end

return M
