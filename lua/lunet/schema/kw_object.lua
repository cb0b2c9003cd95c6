-- Keywords about objects: properties, patternProperties, additionalProperties, required,
-- dependencies (draft 4), dependentRequired, dependentSchemas, propertyNames,
-- min/maxProperties and unevaluatedProperties; and readOnly / writeOnly when a direction is set.
local report = require "lunet.schema.report"
local value = require "lunet.schema.value"
local basic = require "lunet.schema.kw_basic"

local M = {}

local type, next, tostring = type, next, tostring
local fail, nest, show = report.fail, report.nest, value.show

local function object_arg(ctx, node, info, k)
  local t = node[k]
  if t == nil or not ctx:on(k) then return nil end
  if type(t) ~= "table" or (next(t) ~= nil and value.is_array(t)) then
    ctx:fail(ctx:where(info, k), "%s must be an object", k)
  end
  return t
end

--- Records property k as evaluated in annotation record ann.
local function mark(ann, k)
  local p = ann.p
  if not p then p = {}; ann.p = p end
  p[k] = true
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

--- The declared properties: names (sorted), their checks, and name -> check.
local function declared(ctx, node, info)
  local props = object_arg(ctx, node, info, "properties")
  local names, fns, by_name = sorted_keys(props or {}), {}, {}
  for i, k in ipairs(names) do
    fns[i] = ctx:child(info, props[k], "properties", k)
    by_name[k] = fns[i]
  end
  return names, fns, by_name
end

--- Whether members() checks the declared properties too, in its one pass over the members.
local function fused(ctx, node)
  local pats = ctx:on("patternProperties") and node.patternProperties
  return ctx:on("additionalProperties") and node.additionalProperties ~= nil and node.additionalProperties ~= true
    and (type(pats) ~= "table" or next(pats) == nil)
end

local function properties(ctx, node, info, add)
  if fused(ctx, node) then return end
  local names, fns = declared(ctx, node, info)
  local n = #names
  if n == 0 then return end
  add("object", function(v, st, ann)
    local ok, m = true, st.nerr
    for i = 1, n do
      local k = names[i]
      local pv = v[k]
      if pv ~= nil then
        if not fns[i](pv, st, nil) then
          if st.quiet > 0 then return false end
          nest(st, m, k)
          m, ok = st.nerr, false
        end
        if ann then mark(ann, k) end
      end
    end
    return ok
  end)
end

--- The check additionalProperties gives one property: its schema's, or an error when false.
local function additional_check(ctx, node, info)
  local addl = node.additionalProperties
  if addl == nil or not ctx:on("additionalProperties") then return nil end
  if addl == false then
    local where = ctx:where(info, "additionalProperties")
    return function(_, st, k)
      return fail(st, "additionalProperties", where, "the property " .. show(k) .. " is not allowed")
    end
  end
  if addl == true then return true end
  local f = ctx:child(info, addl, "additionalProperties")
  return function(pv, st) return f(pv, st, nil) end
end

--- patternProperties and additionalProperties: one pass over the object's members.
local function members(ctx, node, info, add)
  local pats = object_arg(ctx, node, info, "patternProperties")
  local addl = additional_check(ctx, node, info)
  if (not pats or next(pats) == nil) and addl == nil then return end
  local props = ctx:on("properties") and type(node.properties) == "table" and node.properties or {}
  local res, pfns = {}, {}
  for i, src in ipairs(pats and sorted_keys(pats) or {}) do
    local where = ctx:where(info, "patternProperties", src)
    res[i], pfns[i] = basic.regex(ctx, src, where), ctx:child(info, pats[src], "patternProperties", src)
  end
  local npat = #res
  if addl == true and npat == 0 then
    add("object", function(_, _, ann) if ann then ann.allp = true end return true end)
    return
  end
  local other = addl ~= true and addl or nil
  if fused(ctx, node) then
    -- the common case (properties and additionalProperties): one pass over the members, each
    -- checked against its declared schema or additionalProperties
    local _, _, by_name = declared(ctx, node, info)
    add("object", function(v, st, ann)
      local ok, m = true, st.nerr
      for k, pv in next, v do
        local f = by_name[k]
        if f then f = f(pv, st, nil) else f = other(pv, st, type(k) == "string" and k or tostring(k)) end
        if not f then
          if st.quiet > 0 then return false end
          nest(st, m, k)
          m, ok = st.nerr, false
        end
      end
      if ann then ann.allp = true end
      return ok
    end)
    return
  end
  add("object", function(v, st, ann)
    local ok, m = true, st.nerr
    for k, pv in next, v do
      local key = type(k) == "string" and k or tostring(k)
      local matched = props[k] ~= nil
      for j = 1, npat do
        if res[j]:test(key, st) then
          matched = true
          if ann then mark(ann, k) end
          if not pfns[j](pv, st, nil) then
            if st.quiet > 0 then return false end
            nest(st, m, k)
            m, ok = st.nerr, false
          end
        end
      end
      if not matched and other and not other(pv, st, key) then
        if st.quiet > 0 then return false end
        nest(st, m, k)
        m, ok = st.nerr, false
      end
    end
    if ann and addl ~= nil then ann.allp = true end
    return ok
  end)
end

--- A list of property names at `where` (required, dependentRequired): checked.
local function names_arg(ctx, list, where)
  if type(list) ~= "table" or (next(list) ~= nil and not value.is_array(list)) then
    ctx:fail(where, "must be an array of property names")
  end
  for _, k in ipairs(list) do
    if type(k) ~= "string" then ctx:fail(where, "must be an array of property names, not %s", show(k)) end
  end
  return list
end

--- The required names, less those the direction exempts (OpenAPI: a required readOnly
--- property is required in responses only, a writeOnly one in requests only).
local function required(ctx, node, info, add)
  if node.required == nil or not ctx:on("required") then return end
  -- draft 3's boolean `required`, still met in old draft 4 and Swagger documents: ignored
  if ctx.dialect.draft4 and type(node.required) == "boolean" then return end
  local where = ctx:where(info, "required")
  local list = names_arg(ctx, node.required, where)
  local skip = ctx.direction and ctx.openapi.exempt(ctx, node, info) or {}
  local names = {}
  for _, k in ipairs(list) do if not skip[k] then names[#names + 1] = k end end
  local n = #names
  if n == 0 then return end
  add("object", function(v, st)
    local ok = true
    for i = 1, n do
      if v[names[i]] == nil then
        if st.quiet > 0 then return false end
        ok = fail(st, "required", where, "the property " .. show(names[i]) .. " is required")
      end
    end
    return ok
  end)
end

--- dependentRequired's (or draft 4 dependencies') names for one property.
local function depends_on(add, where, name, list, rule)
  add("object", function(v, st)
    if v[name] == nil then return true end
    local ok = true
    for i = 1, #list do
      if v[list[i]] == nil then
        if st.quiet > 0 then return false end
        ok = fail(st, rule, where, "the property " .. show(list[i]) .. " is required when " .. show(name) .. " is present")
      end
    end
    return ok
  end)
end

local function depends_schema(add, name, f)
  add("object", function(v, st, ann)
    if v[name] == nil then return true end
    return f(v, st, ann)
  end)
end

local function dependencies(ctx, node, info, add)
  for _, k in ipairs({ "dependencies", "dependentRequired", "dependentSchemas" }) do
    local deps = object_arg(ctx, node, info, k)
    for _, name in ipairs(deps and sorted_keys(deps) or {}) do
      local d, where = deps[name], ctx:where(info, k, name)
      -- draft 4's dependencies: an array of names, or a schema ({} is an empty schema)
      if k == "dependentRequired" or (k == "dependencies" and type(d) == "table" and value.is_array(d)) then
        depends_on(add, where, name, names_arg(ctx, d, where), k)
      else
        depends_schema(add, name, ctx:child(info, d, k, name))
      end
    end
  end
end

local function property_names(ctx, node, info, add)
  if node.propertyNames == nil or not ctx:on("propertyNames") then return end
  local f = ctx:child(info, node.propertyNames, "propertyNames")
  local where = ctx:where(info, "propertyNames")
  add("object", function(v, st)
    local ok = true
    for k in next, v do
      st.quiet = st.quiet + 1
      local good = f(type(k) == "string" and k or tostring(k), st, nil)
      st.quiet = st.quiet - 1
      if not good then
        if st.quiet > 0 then return false end
        ok = fail(st, "propertyNames", where, "the property name " .. show(k) .. " does not match propertyNames")
      end
    end
    return ok
  end)
end

local function count_members(v)
  local n = 0
  for _ in next, v do n = n + 1 end
  return n
end

local function property_counts(ctx, node, info, add)
  basic.size_bounds(ctx, node, info, add, "object", "maxProperties", "minProperties", count_members, "property")
end

--- unevaluatedProperties: a check(v, st, la) run after the schema's other keywords wrote
--- annotation record la, or nil.
function M.unevaluated(ctx, node, info)
  local u = node.unevaluatedProperties
  if u == nil or not ctx:on("unevaluatedProperties") then return nil end
  local where = ctx:where(info, "unevaluatedProperties")
  local f = u ~= false and ctx:child(info, u, "unevaluatedProperties")
  return function(v, st, la)
    if la.allp then return true end
    local p = la.p or {}
    local ok, m = true, st.nerr
    for k, pv in next, v do
      if not p[k] then
        if not f then
          if st.quiet > 0 then return false end
          ok = fail(st, "unevaluatedProperties", where, "the property " .. show(k) .. " is not allowed (unevaluated)")
          nest(st, m, k)
          m = st.nerr
        elseif not f(pv, st, nil) then
          if st.quiet > 0 then return false end
          nest(st, m, k)
          m, ok = st.nerr, false
        end
      end
    end
    if ok then la.allp = true end
    return ok
  end
end

--- Passes the evaluated properties of la on to ann.
function M.merge(ann, la)
  if la.allp then ann.allp = true end
  if la.p then for k in next, la.p do mark(ann, k) end end
end

M.handlers = { properties, members, required, dependencies, property_names, property_counts }
return M
