-- OpenAPI's additions to JSON Schema that change validation (nullable is in kw_basic's type):
--   discriminator   with oneOf / anyOf: the object's discriminator property names the one
--                   branch to check, through `mapping` or the name of the branch's $ref
--                   ("#/components/schemas/Dog" is "Dog"); a value naming none is an error
--                   naming the property.
--   readOnly / writeOnly   with opts.direction: a readOnly property must not be sent in a
--                   request, a writeOnly one must not come in a response; and `required`
--                   holds for a readOnly property in responses only, a writeOnly one in
--                   requests only. Without a direction both are annotations.
local report = require "lunet.schema.report"
local value = require "lunet.schema.value"
local uri = require "lunet.schema.uri"

local M = {}

local type = type
local fail, nest, show = report.fail, report.nest, value.show

--- readOnly, writeOnly of a property's schema, following its $refs.
local function access(ctx, sub, info)
  local seen, ro, wo = {}, false, false
  while type(sub) == "table" and not seen[sub] do
    seen[sub] = true
    ro, wo = ro or sub.readOnly == true, wo or sub.writeOnly == true
    local ref = sub["$ref"]
    if type(ref) ~= "string" then break end
    local si = ctx.reg.info[sub] or info
    sub = ctx.reg:resolve(ref, si.base, si.where .. "/$ref")
  end
  return ro, wo
end

--- The property names of `node` that its direction rules out (hidden) and exempts from
--- `required` (the same names: a property that must not be sent need not be).
local function hidden(ctx, node, info)
  local out = {}
  local props = node.properties
  if not ctx.direction or type(props) ~= "table" then return out end
  for k, sub in pairs(props) do
    local ro, wo = access(ctx, sub, ctx.reg.info[sub] or info)
    if (ctx.direction == "request" and ro) or (ctx.direction == "response" and wo) then out[k] = true end
  end
  return out
end
M.exempt = hidden

local function direction_handler(ctx, node, info, add)
  local names = {}
  for k in pairs(hidden(ctx, node, info)) do names[#names + 1] = k end
  if #names == 0 then return end
  table.sort(names)
  local rule = ctx.direction == "request" and "readOnly" or "writeOnly"
  local text = ctx.direction == "request" and " is read-only: it must not be sent in a request"
    or " is write-only: it must not come in a response"
  local where = ctx:where(info, "properties")
  add("object", function(v, st)
    local ok = true
    for i = 1, #names do
      if v[names[i]] ~= nil then
        if st.quiet > 0 then return false end
        local m = st.nerr
        ok = fail(st, rule, uri.child(where, names[i]) .. "/" .. rule, "the property " .. show(names[i]) .. text)
        nest(st, m, names[i])
      end
    end
    return ok
  end)
end

--- The reference a mapping value stands for: itself, or "#/components/schemas/NAME" for a name.
local function mapping_ref(target)
  if target:find("[/#]") then return target end
  return "#/components/schemas/" .. target
end

--- value -> check, from the branches' $refs and the mapping.
local function branches(ctx, node, info, k, fns, d, where)
  local by_uri, map = {}, {}
  for i, b in ipairs(node[k]) do
    local ref = type(b) == "table" and b["$ref"]
    if type(ref) == "string" then
      local base = (ctx.reg.info[b] or info).base
      by_uri[uri.resolve(base, ref)] = fns[i]
      local name = ref:match("([^/#]+)$")
      if name then map[name] = fns[i] end
    end
  end
  local mapping = d.mapping
  if mapping ~= nil and type(mapping) ~= "table" then ctx:fail(where, "discriminator.mapping must be an object") end
  for val, target in pairs(mapping or {}) do
    local mwhere = uri.child(where .. "/mapping", val)
    if type(target) ~= "string" then ctx:fail(mwhere, "a discriminator mapping must be a string") end
    local ref = mapping_ref(target)
    local f = by_uri[uri.resolve(info.base, ref)]
    if not f then
      local t, tinfo = ctx.reg:resolve(ref, info.base, mwhere)
      f = ctx:compile(t, tinfo)
    end
    map[val] = f
  end
  return map
end

--- The check of `node`'s discriminator over its `k` (oneOf or anyOf) branches `fns`: the
--- branch the property names; `plain` (the keyword as without a discriminator) for a value
--- that is no object.
function M.discriminator(ctx, node, info, k, fns, plain)
  local d, where = node.discriminator, ctx:where(info, "discriminator")
  if type(d) == "string" then d = { propertyName = d } end   -- Swagger 2.0 names the property alone
  if type(d) ~= "table" or type(d.propertyName) ~= "string" then
    ctx:fail(where, "discriminator must be an object with a string propertyName")
  end
  local prop = d.propertyName
  local map = branches(ctx, node, info, k, fns, d, where)
  local names = {}
  for name in pairs(map) do names[#names + 1] = name end
  table.sort(names)
  local known = #names > 0 and table.concat(names, ", ") or "(none)"
  return function(v, st, ann)
    if type(v) ~= "table" or value.is_array(v) then return plain(v, st, ann) end
    local pv = v[prop]
    if pv == nil then
      return fail(st, "discriminator", where, "the discriminator property " .. show(prop) .. " is missing")
    end
    local f = type(pv) == "string" and map[pv]
    if f then return f(v, st, ann) end
    local m = st.nerr
    fail(st, "discriminator", where, "the discriminator property " .. show(prop) .. " is " .. show(pv) ..
      ", which names none of the schemas: " .. known)
    nest(st, m, prop)
    return false
  end
end

M.handlers = { direction_handler }
return M
