-- What a scalar means: YAML 1.2's core schema for plain scalars (null, booleans, integers,
-- floats, else a string) and the core tags (!!str, !!int, ...), giving the values json.decode
-- gives for the same data: json.null, integers as Lua integers, json.array for sequences.
-- Tags are resolved from their handles here too (%TAG directives), and what is not the core
-- schema's is refused by name: a value of an application's own type (!Ref, !!set, ...) has no
-- JSON form.
local R = require "lunet.yaml.reader"
local json = require "lunet.json"
local find, byte, sub, gsub, tonumber, math_type = string.find, string.byte, string.sub, string.gsub, tonumber, math.type

local M = {}

M.NULL = json.null
M.ARRAY = require("lunet.runtime").getmetatable(json.array())

local NULL, INF, NAN = json.null, math.huge, 0.0 / 0.0
local WORDS = {
  [""] = NULL, ["~"] = NULL, null = NULL, Null = NULL, NULL = NULL,
  ["true"] = true, True = true, TRUE = true, ["false"] = false, False = false, FALSE = false,
  [".inf"] = INF, [".Inf"] = INF, [".INF"] = INF, ["+.inf"] = INF, ["+.Inf"] = INF, ["+.INF"] = INF,
  ["-.inf"] = -INF, ["-.Inf"] = -INF, ["-.INF"] = -INF, [".nan"] = NAN, [".NaN"] = NAN, [".NAN"] = NAN,
}

-- Digits in `base` as a number: an integer while it fits in 64 bits, else a float (as
-- json.decode reads an integer too long for 64 bits).
local function digits_value(digits, base)
  local v, float = 0, false
  for i = 1, #digits do
    local d = tonumber(sub(digits, i, i), base)
    if not float and v > (math.maxinteger - d) // base then v, float = v + 0.0, true end
    v = v * base + d
  end
  return v
end

-- The number `text` is in the core schema, or nil: [-+]digits (integer), 0o777, 0xFF, and
-- floats [-+](.digits | digits[.digits])[e[-+]digits].
local function number(text)
  local c = byte(text, 1)
  if c == 48 then
    local x = byte(text, 2)
    if x == 120 and find(text, "^0x%x+$") then return digits_value(sub(text, 3), 16) end
    if x == 111 and find(text, "^0o[0-7]+$") then return digits_value(sub(text, 3), 8) end
  end
  local i = (c == 43 or c == 45) and 2 or 1
  local _, e = find(text, "^%d+", i)
  if e == #text then
    local v = tonumber(text)
    return v == 0 and 0 or v   -- -0 is the integer 0, as in json.decode
  end
  if e then
    if byte(text, e + 1) == 46 then _, e = find(text, "^%d*", e + 2) end
  elseif byte(text, i) == 46 then
    _, e = find(text, "^%d+", i + 1)
    if not e then return nil end
  else
    return nil
  end
  if e < #text and not find(text, "^[eE][-+]?%d+$", e + 1) then return nil end
  return tonumber(text)   -- a float: Lua reads a '.' or an exponent as one
end

--- The value of a plain scalar: null, a boolean, a number or the text itself.
function M.plain(text)
  local v = WORDS[text]
  if v ~= nil then return v end
  local c = byte(text, 1)
  if (c >= 48 and c <= 57) or c == 45 or c == 43 or c == 46 then
    v = number(text)
    if v ~= nil then return v end
  end
  return text
end

local CORE = "tag:yaml.org,2002:"
local KNOWN = { str = true, int = true, float = true, bool = true, null = true, map = true, seq = true, binary = true }

--- The tag of a tag property (as written, at `at`): a core tag's short name ("str", "map", ...)
--- or "!" (the non-specific tag: a string, or the collection as it is). Others are refused.
function M.resolve_tag(P, written, at)
  local tag
  if sub(written, 1, 2) == "!<" then
    tag = sub(written, 3, -2)
  elseif written == "!" then
    return "!"
  else
    local handle, suffix = written:match("^(![%w%-]*!)(.*)$")
    if not handle then handle, suffix = "!", sub(written, 2) end
    local prefix = P.tag_handles[handle]
    if not prefix then R.fail(P, at, "the tag handle " .. R.shown(handle) .. " is not declared by a %TAG directive") end
    tag = prefix .. gsub(suffix, "%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
  end
  local name = sub(tag, 1, #CORE) == CORE and sub(tag, #CORE + 1)
  if name and KNOWN[name] then return name end
  if name then R.fail(P, at, "the tag " .. R.shown(written) .. " is not supported (lunet.yaml reads the core schema: !!str, !!int, !!float, !!bool, !!null, !!map, !!seq, !!binary)") end
  R.fail(P, at, "unknown tag " .. R.shown(written) .. ": lunet.yaml reads only the core schema's tags, an application's own tags have no JSON value")
end

local function tagged_scalar(P, tag, text, at)
  if tag == "str" or tag == "!" then return text end
  if tag == "binary" then
    local b64 = gsub(text, "[ \t\n]", "")
    if not find(b64, "^[%w+/]*=?=?$") or #b64 % 4 ~= 0 then R.fail(P, at, "!!binary needs base64 text") end
    return b64
  end
  local v = M.plain(text)
  if tag == "null" and v == NULL then return v end
  if tag == "bool" and type(v) == "boolean" then return v end
  if tag == "int" and math_type(v) == "integer" then return v end
  if tag == "float" and type(v) == "number" then return math_type(v) == "integer" and v + 0.0 or v end
  if tag == "int" and math_type(v) == "float" and find(text, "^[-+0]?[%dxo]") and not find(text, "[.eEn]") then return v end   -- beyond 64 bits
  if tag == "map" or tag == "seq" then R.fail(P, at, "!!" .. tag .. " on a scalar") end
  local shown = string.format("%q", R.shown(text)):gsub("\\\n", "\\n")
  R.fail(P, at, string.format("!!%s on %s, which is not a%s %s", tag, shown, tag == "int" and "n" or "", tag))
end

--- The value of a node of `kind` ("plain", "quoted", "block", "empty", "alias", "map", "seq")
--- with `tag` (a name from resolve_tag, or nil): `value` for collections and aliases, else from
--- `text`.
function M.apply(P, tag, kind, value, text, at)
  if kind == "map" or kind == "seq" then
    if tag and tag ~= "!" and tag ~= kind then R.fail(P, at, "!!" .. tag .. " on a " .. (kind == "map" and "mapping" or "sequence")) end
    return value
  end
  if kind == "alias" then return value end
  if kind == "empty" then
    if tag == "map" or tag == "seq" then
      R.fail(P, at, "!!" .. tag .. " on an empty value (write " .. (tag == "map" and "{}" or "[]") .. ")")
    end
    if not tag then return NULL end
  end
  if not tag then
    if kind == "plain" then return M.plain(text) end
    return text
  end
  return tagged_scalar(P, tag, text, at)
end

return M
