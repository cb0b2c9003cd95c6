-- Keywords about one value on its own: type (and OpenAPI 3.0's nullable), enum, const, the
-- number bounds, string lengths, pattern and format.
local report = require "lunet.schema.report"
local value = require "lunet.schema.value"
local regex = require "lunet.schema.regex"
local formats = require "lunet.schema.formats"

local M = {}

local type, mtype, floor, fmod, huge = type, math.type, math.floor, math.fmod, math.huge
local ulen = utf8.len
local fail, show, kind, article = report.fail, value.show, value.kind, value.article
local NULL = value.NULL

local TYPES = { null = true, boolean = true, object = true, array = true, number = true, integer = true, string = true }

--- The names of `type` at `where`: a list, checked.
local function type_names(ctx, t, where)
  local names = type(t) == "string" and { t } or (type(t) == "table" and value.is_array(t) and t)
  if not names then ctx:fail(where, "type must be a string or an array of strings") end
  for _, n in ipairs(names) do
    if not TYPES[n] then
      ctx:fail(where, "type %s is not a JSON Schema type (null, boolean, object, array, number, integer, string)", show(n))
    end
  end
  return names
end

local function type_handler(ctx, node, info, add)
  local t = node.type
  if t == nil or not ctx:on("type") then return end
  local where = ctx:where(info, "type")
  local names = type_names(ctx, t, where)
  local allowed = {}
  for _, n in ipairs(names) do allowed[n] = true end
  -- OpenAPI 3.0.3: nullable adds null to what type allows (and only there: enum still rules)
  if ctx.dialect.openapi and node.nullable == true then
    allowed.null = true
    names = { table.unpack(names) }
    names[#names + 1] = "null"
  end
  local want = #names == 1 and article(names[1]) or ("one of " .. table.concat(names, ", "))
  local function wrong(v, st)
    return fail(st, "type", where, show(v) .. " is " .. article(kind(v)) .. ", not " .. want)
  end
  if not allowed.object then add("object", wrong) end
  if not allowed.array then add("array", wrong) end
  if not allowed.string then add("string", wrong) end
  if not allowed.number then
    if allowed.integer then
      add("number", function(v, st)
        if mtype(v) == "integer" or (v == floor(v) and v ~= huge and v ~= -huge) then return true end
        return wrong(v, st)
      end)
    else
      add("number", wrong)
    end
  end
  local bool, null = allowed.boolean, allowed.null
  add("other", function(v, st)
    if (bool and type(v) == "boolean") or (null and v == NULL) then return true end
    return wrong(v, st)
  end)
end

local function list_text(vals)
  local parts = {}
  for i, v in ipairs(vals) do
    if i > 5 then parts[#parts + 1] = "..."; break end
    parts[#parts + 1] = show(v)
  end
  return table.concat(parts, ", ")
end

local function enum_handler(ctx, node, info, add)
  if ctx:on("enum") and node.enum ~= nil then
    local where = ctx:where(info, "enum")
    local vals = node.enum
    if type(vals) ~= "table" or not value.is_array(vals) then ctx:fail(where, "enum must be an array") end
    local scalars, tables = {}, {}
    for _, v in ipairs(vals) do
      if type(v) == "table" then tables[#tables + 1] = v else scalars[v] = true end
    end
    local text = list_text(vals)
    add("any", function(v, st)
      if type(v) ~= "table" then
        if scalars[v] then return true end
      else
        for i = 1, #tables do if value.equal(v, tables[i]) then return true end end
      end
      return fail(st, "enum", where, show(v) .. " is not one of " .. text)
    end)
  end
  if ctx:on("const") and node.const ~= nil then
    local where, c = ctx:where(info, "const"), node.const
    add("any", function(v, st)
      if v == c or value.equal(v, c) then return true end
      return fail(st, "const", where, show(v) .. " is not " .. show(c))
    end)
  end
end

--- Whether number v is a multiple of d: exact for integers; for floats, within rounding of a
--- whole quotient (0.0075 is a multiple of 0.0001), and by fmod when the quotient overflows.
--- A quotient that rounds to 0 is a multiple only for v == 0 (1e-300 is no multiple of 1e308).
local function multiple(v, d)
  if mtype(v) == "integer" and mtype(d) == "integer" then return v % d == 0 end
  local q = v / d
  if q == huge or q == -huge then return fmod(v, d) == 0 end
  local whole = floor(q + 0.5)
  if whole == 0 then return v == 0 end
  return math.abs(q - whole) < 1e-9
end

local function number_arg(ctx, node, info, k)
  local n = node[k]
  if n ~= nil and type(n) ~= "number" then ctx:fail(ctx:where(info, k), "%s must be a number", k) end
  return n
end

--- One bound check: v op bound, or an error saying `what`.
local function bound(add, where, rule, b, strict, upper, what)
  add("number", function(v, st)
    local ok
    if upper then ok = strict and v < b or not strict and v <= b
    else ok = strict and v > b or not strict and v >= b end
    if ok then return true end
    return fail(st, rule, where, show(v) .. what .. show(b))
  end)
end

--- The bounds: fmin, fxmin, fmax, fxmax (inclusive and exclusive, nil when absent), each also
--- added to `add` as a reporting check.
local function bounds(ctx, node, info, add)
  local max = ctx:on("maximum") and number_arg(ctx, node, info, "maximum") or nil
  local min = ctx:on("minimum") and number_arg(ctx, node, info, "minimum") or nil
  if ctx.dialect.draft4 then
    -- draft 4: exclusiveMaximum / exclusiveMinimum are booleans that make the bound strict
    local xmax, xmin = node.exclusiveMaximum == true, node.exclusiveMinimum == true
    if max then
      bound(add, ctx:where(info, xmax and "exclusiveMaximum" or "maximum"), xmax and "exclusiveMaximum" or "maximum",
        max, xmax, true, xmax and " is not less than the exclusive maximum " or " is greater than the maximum ")
    end
    if min then
      bound(add, ctx:where(info, xmin and "exclusiveMinimum" or "minimum"), xmin and "exclusiveMinimum" or "minimum",
        min, xmin, false, xmin and " is not greater than the exclusive minimum " or " is less than the minimum ")
    end
    return not xmin and min or nil, xmin and min or nil, not xmax and max or nil, xmax and max or nil
  end
  if max then bound(add, ctx:where(info, "maximum"), "maximum", max, false, true, " is greater than the maximum ") end
  if min then bound(add, ctx:where(info, "minimum"), "minimum", min, false, false, " is less than the minimum ") end
  local xmax = ctx:on("exclusiveMaximum") and number_arg(ctx, node, info, "exclusiveMaximum") or nil
  if xmax then
    bound(add, ctx:where(info, "exclusiveMaximum"), "exclusiveMaximum", xmax, true, true, " is not less than the exclusive maximum ")
  end
  local xmin = ctx:on("exclusiveMinimum") and number_arg(ctx, node, info, "exclusiveMinimum") or nil
  if xmin then
    bound(add, ctx:where(info, "exclusiveMinimum"), "exclusiveMinimum", xmin, true, false, " is not greater than the exclusive minimum ")
  end
  return min, xmin, max, xmax
end

--- Runs every reporting check of `slow` (after the fused test failed): their errors.
local function report_all(slow, v, st)
  local ok = true
  for i = 1, #slow do
    if not slow[i](v, st) then
      if st.quiet > 0 then return false end
      ok = false
    end
  end
  return ok
end

--- multipleOf and the bounds: one check whose passing path is a few comparisons in a row.
local function number_handler(ctx, node, info, add)
  local slow = {}
  local function add_slow(_, fn) slow[#slow + 1] = fn end
  local d = ctx:on("multipleOf") and number_arg(ctx, node, info, "multipleOf") or nil
  if d then
    local where = ctx:where(info, "multipleOf")
    if d <= 0 then ctx:fail(where, "multipleOf must be greater than 0") end
    add_slow("number", function(v, st)
      if multiple(v, d) then return true end
      return fail(st, "multipleOf", where, show(v) .. " is not a multiple of " .. show(d))
    end)
  end
  local min, xmin, max, xmax = bounds(ctx, node, info, add_slow)
  if #slow <= 1 then
    if slow[1] then add("number", slow[1]) end
    return
  end
  add("number", function(v, st)
    if (min == nil or v >= min) and (xmin == nil or v > xmin) and (max == nil or v <= max)
      and (xmax == nil or v < xmax) and (d == nil or multiple(v, d)) then
      return true
    end
    return report_all(slow, v, st)
  end)
end

--- A count keyword's value (maxLength, minItems, ...): a non-negative integer (2.0 is one).
--- maxItems/minItems, maxProperties/minProperties: a bound on how many a container holds.
--- `kind` is "array" or "object", `count` counts a value's members, `noun` names one.
function M.size_bounds(ctx, node, info, add, kind, max_key, min_key, count, noun)
  local max, min = M.count_arg(ctx, node, info, max_key), M.count_arg(ctx, node, info, min_key)
  local what = "the " .. kind .. " has "
  if max then
    local where = ctx:where(info, max_key)
    add(kind, function(v, st)
      local n = count(v)
      if n <= max then return true end
      return fail(st, max_key, where, what .. report.count(n, noun) .. ", more than the maximum " .. max)
    end)
  end
  if min and min > 0 then
    local where = ctx:where(info, min_key)
    add(kind, function(v, st)
      local n = count(v)
      if n >= min then return true end
      return fail(st, min_key, where, what .. report.count(n, noun) .. ", fewer than the minimum " .. min)
    end)
  end
end

function M.count_arg(ctx, node, info, k)
  local n = node[k]
  if n == nil or not ctx:on(k) then return nil end
  local i = type(n) == "number" and math.tointeger(n)
  if not i or i < 0 then ctx:fail(ctx:where(info, k), "%s must be a non-negative integer", k) end
  return i
end

--- A string's length in code points (bytes when it is not valid UTF-8).
local function length(s)
  return ulen(s) or #s
end
M.length = length

--- minLength, maxLength and pattern: one check, as for numbers.
local function string_handler(ctx, node, info, add)
  local slow = {}
  local max = M.count_arg(ctx, node, info, "maxLength")
  if max then
    local where = ctx:where(info, "maxLength")
    slow[#slow + 1] = function(v, st)
      if #v <= max or length(v) <= max then return true end
      return fail(st, "maxLength", where, show(v) .. " is longer than " .. report.count(max, "character"))
    end
  end
  local min = M.count_arg(ctx, node, info, "minLength")
  if min == 0 then min = nil end
  if min then
    local where = ctx:where(info, "minLength")
    slow[#slow + 1] = function(v, st)
      if length(v) >= min then return true end
      return fail(st, "minLength", where, show(v) .. " is shorter than " .. report.count(min, "character"))
    end
  end
  local re
  if ctx:on("pattern") and node.pattern ~= nil then
    local where, src = ctx:where(info, "pattern"), node.pattern
    re = M.regex(ctx, src, where)
    slow[#slow + 1] = function(v, st)
      if re:test(v, st) then return true end
      return fail(st, "pattern", where, show(v) .. " does not match the pattern " .. show(src))
    end
  end
  if #slow <= 1 then
    if slow[1] then add("string", slow[1]) end
    return
  end
  -- a code point takes 1 to 4 bytes: most lengths are settled by the byte count
  local min4 = min and 4 * min
  add("string", function(v, st)
    local n = #v
    if (max == nil or n <= max or length(v) <= max) and (min == nil or n >= min4 or length(v) >= min)
      and (re == nil or re:test(v, st)) then
      return true
    end
    return report_all(slow, v, st)
  end)
end

--- The compiled regex for `src` (one per source string in a compilation), or a schema error.
function M.regex(ctx, src, where)
  if type(src) ~= "string" then ctx:fail(where, "a pattern must be a string") end
  local re = ctx.regexes[src]
  if re then return re end
  local ok, r = pcall(regex.compile, src)
  if not ok then ctx:fail(where, "%s", r) end
  ctx.regexes[src] = r
  return r
end

local function format_handler(ctx, node, info, add)
  local name = node.format
  if name == nil or not ctx.formats or not ctx:on("format") then return end
  if type(name) ~= "string" then ctx:fail(ctx:where(info, "format"), "format must be a string") end
  local f = formats.get(name)
  if not f then return end   -- unknown formats are annotations
  local where, check = ctx:where(info, "format"), f.check
  add(f.kind, function(v, st)
    if check(v) then return true end
    return fail(st, "format", where, show(v) .. " is not " .. f.text)
  end)
end

M.handlers = { type_handler, enum_handler, number_handler, string_handler, format_handler }
return M
