-- The JSON data model as lunet.schema sees Lua values (the rule json.encode follows too):
--   null     json.null
--   boolean  true, false
--   number   an integer or a finite float; "integer" also takes a float with no fraction
--            (1.0 is an integer, as JSON Schema says since draft 6)
--   string   a string
--   array    a table marked by json.array or json.decode, or any table whose keys are exactly
--            1..n (n > 0) and that has no metatable
--   object   any other table: an unmarked empty table ({}) is an empty object
-- Anything else (functions, NaN, infinities, userdata but json.null) is no JSON value: every
-- `type` rejects it. Also: JSON equality for enum, const and uniqueItems, and short texts of
-- values for error messages.
local json = require "lunet.json"

local M = {}

local type, next, rawlen, mtype = type, next, rawlen, math.type
-- The C getmetatable: lunet's global one is a Lua wrapper, twice the cost on this hot path.
local getmetatable = require("lunet.runtime").getmetatable
local NULL = json.null
local ARRAY_MT = getmetatable(json.array())
M.NULL, M.ARRAY_MT, M.getmetatable = NULL, ARRAY_MT, getmetatable

--- Whether table t is an array (see the rule above).
local function is_array(t)
  local mt = getmetatable(t)
  if mt == ARRAY_MT then return true end
  if mt ~= nil then return false end
  local n = rawlen(t)
  if n == 0 then return false end
  local count = 0
  for _ in next, t do count = count + 1 end
  return count == n
end
M.is_array = is_array

--- The JSON type of v: "null", "boolean", "integer", "number", "string", "array", "object",
--- or nil when v is no JSON value. Floats without a fraction are "integer".
local function kind(v)
  local t = type(v)
  if t == "string" then return "string" end
  if t == "number" then
    if mtype(v) == "integer" then return "integer" end
    if v ~= v or v == math.huge or v == -math.huge then return nil end
    return v == math.floor(v) and "integer" or "number"
  end
  if t == "table" then return is_array(v) and "array" or "object" end
  if t == "boolean" then return "boolean" end
  if v == NULL then return "null" end
  return nil
end
M.kind = kind

--- JSON equality: numbers by value (1 == 1.0), arrays by items, objects by members.
local function equal(a, b)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  local aa, ba = is_array(a), is_array(b)
  if aa ~= ba then return false end
  if aa then
    local n = rawlen(a)
    if n ~= rawlen(b) then return false end
    for i = 1, n do if not equal(a[i], b[i]) then return false end end
    return true
  end
  for k, v in next, a do
    local w = b[k]
    if w == nil or not equal(v, w) then return false end
  end
  for k in next, b do if a[k] == nil then return false end end
  return true
end
M.equal = equal

--- A key under which equal scalars collide (for uniqueItems and enum sets): integral floats
--- become integers, and types are kept apart ("1" vs 1). nil for tables.
function M.scalar_key(v)
  local t = type(v)
  if t == "number" then
    local i = math.tointeger(v)
    return i or v
  end
  if t == "string" then return "s" .. v end
  if t == "table" then return nil end
  return v
end

--- A string that two values share exactly when they are equal (for uniqueItems on long
--- arrays of arrays and objects): keys sorted, integral numbers written as integers.
local function canonical(v, out)
  local t = type(v)
  if t == "table" then
    if is_array(v) then
      out[#out + 1] = "["
      for i = 1, rawlen(v) do canonical(v[i], out); out[#out + 1] = "," end
      out[#out + 1] = "]"
    else
      local keys = {}
      for k in next, v do keys[#keys + 1] = tostring(k) end
      table.sort(keys)
      out[#out + 1] = "{"
      for _, k in ipairs(keys) do
        out[#out + 1] = string.format("%q:", k)
        local x = v[k]
        if x == nil then x = v[tonumber(k)] end
        canonical(x, out)
        out[#out + 1] = ","
      end
      out[#out + 1] = "}"
    end
  elseif t == "number" then
    local i = math.tointeger(v)
    out[#out + 1] = i and string.format("%d", i) or string.format("%.17g", v)
  elseif t == "string" then
    out[#out + 1] = string.format("%q", v)
  else
    out[#out + 1] = tostring(v)
  end
  return out
end

function M.canonical(v) return table.concat(canonical(v, {})) end

--- A short text of v for messages: JSON, cut at 60 bytes.
function M.show(v)
  local t = type(v)
  local s
  if t == "string" then
    s = string.format("%q", v):gsub("\\\n", "\\n")
  elseif t == "number" or t == "boolean" then
    s = tostring(v)
  elseif v == NULL then
    s = "null"
  elseif t == "table" then
    local ok, text = pcall(json.encode, v)
    s = ok and text or (is_array(v) and "an array" or "an object")
  else
    s = "a Lua " .. t
  end
  if #s > 60 then s = s:sub(1, 57) .. "..." end
  return s
end

--- "a string", "an object", ... for messages.
function M.article(k)
  if k == nil then return "no JSON value" end
  if k == "integer" or k == "object" or k == "array" then return "an " .. k end
  if k == "null" then return "null" end
  return "a " .. k
end

return M
