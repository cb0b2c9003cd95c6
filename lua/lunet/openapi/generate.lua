--- Values a schema allows, and values it forbids, for `lunet api --check` (pure, seeded: the
--- same seed gives the same values). Allowed values lean on the edges that break servers:
--- bounds, empty and longest strings, enums' members, optional parts present and absent.
--- Forbidden ones are an allowed value with one thing broken: a required property gone, a
--- wrong type, a bound crossed, a value outside an enum, a property the schema does not allow.
local json = require "lunet.json"

local M = {}

--- A seeded generator (xorshift64*): :int(lo, hi), :chance(p), :pick(list).
function M.random(seed)
  local state = (seed or 1) * 2654435761 + 1
  local r = {}
  function r:next()
    state = state ~ (state << 13); state = state ~ (state >> 7); state = state ~ (state << 17)
    return state
  end
  function r:int(lo, hi)
    if hi <= lo then return lo end
    return lo + (self:next() >> 1) % (hi - lo + 1)
  end
  function r:chance(p) return self:int(0, 9999) < p * 10000 end
  function r:pick(list) return list[self:int(1, #list)] end
  return r
end

local FORMATS = {
  ["date-time"] = { "2026-01-02T03:04:05Z", "1970-01-01T00:00:00Z", "2026-12-31T23:59:59.999+01:00" },
  date = { "2026-01-02", "2000-02-29" }, time = { "03:04:05Z" },
  uuid = { "123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000" },
  email = { "a@example.com", "x.y+z@example.org" }, uri = { "http://example.com/a", "https://example.org/?q=1" },
  hostname = { "example.com" }, ipv4 = { "127.0.0.1" }, ipv6 = { "::1" }, byte = { "bHVuZXQ=" },
}

-- Schemas one generated value may resolve through $ref and allOf: a server's 40 definitions
-- each naming the next twice would ask for 2^40.
M.MAX_RESOLVES = 100000

-- The schema with its $ref followed and allOf's object parts merged (properties, required).
local function resolve(ctx, s)
  if type(s) ~= "table" then return {} end
  ctx.resolves = (ctx.resolves or 0) + 1
  if ctx.resolves > M.MAX_RESOLVES then
    error(string.format("cannot make a value: the schema's $ref and allOf fan out past %d schemas", M.MAX_RESOLVES), 0)
  end
  if s["$ref"] then s = ctx.set:deref(s, ctx.uri, ctx.uri) end
  if s.allOf then
    local merged = { type = s.type, properties = {}, required = {} }
    for k, v in pairs(s) do if k ~= "allOf" and merged[k] == nil then merged[k] = v end end
    for _, part in ipairs(s.allOf) do
      local p = resolve(ctx, part)
      for k, v in pairs(p.properties or {}) do merged.properties[k] = v end
      for _, r in ipairs(p.required or {}) do merged.required[#merged.required + 1] = r end
      merged.type = merged.type or p.type
      if p.additionalProperties == false then merged.additionalProperties = false end
    end
    return merged
  end
  return s
end
M.resolve = resolve

local function type_of(s)
  local t = s.type
  if type(t) == "table" then
    local choices = {}
    for _, x in ipairs(t) do if x ~= "null" then choices[#choices + 1] = x end end
    t = choices[1]
  end
  if t then return t end
  if s.properties or s.required then return "object" end
  if s.items or s.prefixItems then return "array" end
  return nil
end

local function number(ctx, s, integer)
  local lo = s.minimum or (type(s.exclusiveMinimum) == "number" and s.exclusiveMinimum) or -1000
  local hi = s.maximum or (type(s.exclusiveMaximum) == "number" and s.exclusiveMaximum) or 1000
  local step = integer and 1 or 0.5
  if s.exclusiveMinimum == true or type(s.exclusiveMinimum) == "number" then lo = lo + step end
  if s.exclusiveMaximum == true or type(s.exclusiveMaximum) == "number" then hi = hi - step end
  if integer then lo, hi = math.ceil(lo), math.floor(hi) end
  local r = ctx.rand
  local v = r:pick({ lo, hi, math.max(lo, math.min(hi, 0)), lo + (hi - lo) // 2, integer and r:int(math.floor(lo), math.floor(hi)) or lo + (hi - lo) * r:int(0, 1000) / 1000 })
  if s.multipleOf and s.multipleOf > 0 then v = math.ceil(v / s.multipleOf) * s.multipleOf end
  if integer then return math.tointeger(v) or math.floor(v) end
  return v + 0.0
end

-- Generated values have bounds of their own: a schema comes from a server, and its
-- `maxLength: 4000000000` or `minItems: 1e9` must not make --check build gigabytes.
M.MAX_STRING = 64 * 1024   -- characters of one generated string
M.MAX_ITEMS = 1000         -- items of one generated array

-- A schema's count keyword (minLength, maxItems, ...) as a whole number, or nil when absent;
-- anything else (a string, a fraction, a negative number) is an error naming it.
local function count(s, key)
  local v = s[key]
  if v == nil then return nil end
  local n = math.type(v) == "float" and v == math.floor(v) and v < 2 ^ 53 and math.tointeger(v) or v
  if math.type(n) ~= "integer" or n < 0 then
    error(string.format("cannot make a value: %s is %s, not a whole number of at least 0", key, tostring(v)), 0)
  end
  return n
end

local function text(ctx, s)
  if s.format and FORMATS[s.format] then return ctx.rand:pick(FORMATS[s.format]) end
  local min = count(s, "minLength") or 0
  if min > M.MAX_STRING then
    error(string.format("cannot make a value: minLength %d is more than --check makes (%d characters)", min, M.MAX_STRING), 0)
  end
  local lo, hi = min, math.min(count(s, "maxLength") or math.max(min, 12), M.MAX_STRING)
  if hi < lo then hi = lo end
  local n = ctx.rand:pick({ lo, hi, lo + (hi - lo) // 2 })
  local chars = {}
  for i = 1, n do chars[i] = string.char(ctx.rand:int(97, 122)) end
  return table.concat(chars)
end

--- A value schema `s` allows (found in document ctx.uri; ctx.rand, ctx.set).
function M.valid(ctx, s, depth)
  if not depth then ctx.resolves = 0 end   -- each value its own budget
  depth = depth or 0
  if depth > 32 then error("cannot make a value: the schema requires itself more than 32 levels deep", 0) end
  s = resolve(ctx, s)
  local r = ctx.rand
  if s.const ~= nil then return s.const end
  if s.enum then return r:pick(s.enum) end
  if s.oneOf or s.anyOf then return M.valid(ctx, r:pick(s.oneOf or s.anyOf), depth + 1) end
  local t = type_of(s)
  if (s.nullable or (type(s.type) == "table" and s.type[#s.type] == "null" and #s.type > 1)) and r:chance(0.1) then return json.null end
  if t == "integer" then return number(ctx, s, true) end
  if t == "number" then return number(ctx, s, false) end
  if t == "boolean" then return r:chance(0.5) end
  if t == "null" then return json.null end
  if t == "array" then
    local out = json.array()
    local lo = count(s, "minItems") or 0
    if lo > M.MAX_ITEMS then
      error(string.format("cannot make a value: minItems %d is more than --check makes (%d items)", lo, M.MAX_ITEMS), 0)
    end
    local hi = math.min(count(s, "maxItems") or (lo + 3), lo + 3)
    if depth > 4 then hi = lo end
    for _ = 1, r:int(lo, hi) do out[#out + 1] = M.valid(ctx, s.items or {}, depth + 1) end
    return out
  end
  if t == "object" then
    local out, required = {}, {}
    for _, name in ipairs(s.required or {}) do required[name] = true end
    local names = {}
    for name in pairs(s.properties or {}) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      if required[name] or (depth < 4 and r:chance(0.5)) then out[name] = M.valid(ctx, s.properties[name], depth + 1) end
    end
    return out
  end
  if t == "string" or t == nil then return text(ctx, s) end
  return json.null
end

--- A value schema `s` forbids, made from an allowed one, and what was broken; nil when
--- nothing can be broken (a schema that allows anything).
function M.invalid(ctx, s)
  ctx.resolves = 0
  s = resolve(ctx, s)
  local r = ctx.rand
  local t = type_of(s)
  local ways = {}
  if t == "object" then
    if s.required and #s.required > 0 then ways[#ways + 1] = "drop a required property" end
    if s.additionalProperties == false then ways[#ways + 1] = "add a property the schema does not allow" end
    if s.properties and next(s.properties) then ways[#ways + 1] = "break a property" end
  end
  if t then ways[#ways + 1] = "the wrong type" end
  if s.enum then ways[#ways + 1] = "a value outside the enum" end
  if s.maximum then ways[#ways + 1] = "above the maximum" end
  if s.minimum then ways[#ways + 1] = "below the minimum" end
  local max_length = s.maxLength ~= nil and count(s, "maxLength") or nil
  if max_length and max_length < M.MAX_STRING then ways[#ways + 1] = "longer than maxLength" end
  if #ways == 0 then return nil end
  local way = r:pick(ways)
  if way == "the wrong type" then return (t == "string") and 12345 or "not a " .. t, way end
  if way == "a value outside the enum" then return "not-in-the-enum-" .. r:int(1, 999), way end
  if way == "above the maximum" then return s.maximum + ((t == "integer") and 1 or 0.5), way end
  if way == "below the minimum" then return s.minimum - ((t == "integer") and 1 or 0.5), way end
  if way == "longer than maxLength" then return string.rep("x", max_length + 1), way end
  local v = M.valid(ctx, s)
  if way == "drop a required property" then
    local name = r:pick(s.required)
    v[name] = nil
    return v, way .. " (" .. name .. ")"
  end
  if way == "add a property the schema does not allow" then v["unexpected_" .. r:int(1, 999)] = 1 return v, way end
  local names = {}
  for name in pairs(s.properties) do names[#names + 1] = name end
  table.sort(names)
  local name = r:pick(names)
  local bad, how = M.invalid(ctx, s.properties[name])
  if bad == nil then return nil end
  v[name] = bad
  return v, "property " .. name .. ": " .. how
end

return M
