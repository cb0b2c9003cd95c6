-- Keywords about arrays: items (a schema, or draft 4's array of them), prefixItems,
-- additionalItems, contains with minContains / maxContains, min/maxItems, uniqueItems and
-- unevaluatedItems.
local report = require "lunet.schema.report"
local value = require "lunet.schema.value"
local basic = require "lunet.schema.kw_basic"

local M = {}

local type, rawlen, huge = type, rawlen, math.huge
local fail, nest, show = report.fail, report.nest, value.show

--- Records that items 1..n were evaluated.
local function upto(ann, n)
  if (ann.i or 0) < n then ann.i = n end
end

local function schema_list(ctx, info, list, k)
  if type(list) ~= "table" or not value.is_array(list) then ctx:fail(ctx:where(info, k), "%s must be an array of schemas", k) end
  local fns = {}
  for i, s in ipairs(list) do fns[i] = ctx:child(info, s, k, i - 1) end
  return fns
end

--- Items first..#v against f, or, when f is nil, an error for the first of them past `first - 1`.
local function rest_items(add, first, f, where, rule)
  if f == nil then
    add("array", function(v, st)
      local n = rawlen(v)
      if n < first then return true end
      return fail(st, rule, where, "the array has " .. report.count(n, "item") .. ", at most " .. (first - 1) .. " are allowed")
    end)
    return
  end
  add("array", function(v, st, ann)
    local n, ok, m = rawlen(v), true, st.nerr
    for i = first, n do
      if not f(v[i], st, nil) then
        if st.quiet > 0 then return false end
        nest(st, m, i)
        m, ok = st.nerr, false
      end
    end
    if ann then ann.i = huge end
    return ok
  end)
end

--- The first items against a list of schemas (draft 4's items array, prefixItems).
local function tuple(add, fns)
  local count = #fns
  add("array", function(v, st, ann)
    local n, ok, m = rawlen(v), true, st.nerr
    if n > count then n = count end
    for i = 1, n do
      if not fns[i](v[i], st, nil) then
        if st.quiet > 0 then return false end
        nest(st, m, i)
        m, ok = st.nerr, false
      end
    end
    if ann then upto(ann, n) end
    return ok
  end)
end

--- The schema of a keyword holding one (items, additionalItems): compiled, nil for false
--- (every item refused), or true (nothing to check).
local function single(ctx, info, s, k)
  if s == true then return true end
  if s == false then return nil end
  return ctx:child(info, s, k)
end

local function items(ctx, node, info, add)
  local it = node.items
  if not ctx:on("items") then it = nil end
  if ctx.dialect.draft4 then
    if type(it) == "table" and value.is_array(it) then
      local fns = schema_list(ctx, info, it, "items")
      tuple(add, fns)
      local ai = node.additionalItems
      if ai ~= nil and ai ~= true then
        rest_items(add, #fns + 1, single(ctx, info, ai, "additionalItems"), ctx:where(info, "additionalItems"), "additionalItems")
      end
    elseif it ~= nil then
      rest_items(add, 1, ctx:child(info, it, "items"))
    end
    return
  end
  local prefix = ctx:on("prefixItems") and node.prefixItems
  local count = 0
  if prefix ~= nil and prefix ~= false then
    local fns = schema_list(ctx, info, prefix, "prefixItems")
    count = #fns
    tuple(add, fns)
  end
  if it ~= nil then
    local f = single(ctx, info, it, "items")
    if f == true then
      add("array", function(_, _, ann) if ann then ann.i = huge end return true end)
    else
      rest_items(add, count + 1, f, ctx:where(info, "items"), "items")
    end
  end
end

--- contains, with minContains (default 1) and maxContains.
local function contains(ctx, node, info, add)
  if ctx.dialect.draft4 or node.contains == nil or not ctx:on("contains") then return end
  local f = ctx:child(info, node.contains, "contains")
  local min = basic.count_arg(ctx, node, info, "minContains") or 1
  local max = basic.count_arg(ctx, node, info, "maxContains")
  local where = ctx:where(info, "contains")
  add("array", function(v, st, ann)
    local found, n = 0, rawlen(v)
    local matched = ann and (ann.c or {})
    st.quiet = st.quiet + 1
    for i = 1, n do
      if f(v[i], st, nil) then
        found = found + 1
        if matched then matched[i] = true
        elseif found >= min and not max then break end
      end
    end
    st.quiet = st.quiet - 1
    if found < min then
      return fail(st, min > 1 and "minContains" or "contains", where, found == 0 and "no item matches contains" or
        (report.count(found, "item") .. " match contains, fewer than " .. min))
    end
    if max and found > max then
      return fail(st, "maxContains", where, report.count(found, "item") .. " match contains, more than " .. max)
    end
    if matched then ann.c = matched end
    return true
  end)
end

local function item_counts(ctx, node, info, add)
  basic.size_bounds(ctx, node, info, add, "array", "maxItems", "minItems", rawlen, "item")
end

--- The 1-based indexes of two equal items of array v, or nil. Short arrays (most) are
--- compared pairwise, which allocates nothing; longer ones go through sets, arrays and
--- objects by their canonical text.
local function duplicate(v)
  local n = rawlen(v)
  if n <= 16 then
    for i = 2, n do
      local x = v[i]
      for j = 1, i - 1 do
        if value.equal(x, v[j]) then return j, i end
      end
    end
    return nil
  end
  local seen, tables = {}, {}
  for i = 1, n do
    local x = v[i]
    if type(x) == "table" then
      local key = value.canonical(x)
      local j = tables[key]
      if j then return j, i end
      tables[key] = i
    else
      local j = seen[x]
      if j then return j, i end
      seen[x] = i
    end
  end
  return nil
end

local function unique(ctx, node, info, add)
  if node.uniqueItems ~= true or not ctx:on("uniqueItems") then return end
  local where = ctx:where(info, "uniqueItems")
  add("array", function(v, st)
    local a, b = duplicate(v)
    if not a then return true end
    return fail(st, "uniqueItems", where, "items " .. (a - 1) .. " and " .. (b - 1) .. " are equal (" .. show(v[a]) .. ")")
  end)
end

--- unevaluatedItems: a check(v, st, la) run after the schema's other keywords, or nil.
function M.unevaluated(ctx, node, info)
  local u = node.unevaluatedItems
  if u == nil or not ctx:on("unevaluatedItems") then return nil end
  local where = ctx:where(info, "unevaluatedItems")
  local f = u ~= false and ctx:child(info, u, "unevaluatedItems")
  return function(v, st, la)
    local from = la.i or 0
    if from == huge then return true end
    local c = la.c
    local ok, m = true, st.nerr
    for i = from + 1, rawlen(v) do
      if not (c and c[i]) then
        if not f then
          if st.quiet > 0 then return false end
          ok = fail(st, "unevaluatedItems", where, "item " .. (i - 1) .. " is not allowed (unevaluated)")
          nest(st, m, i)
          m = st.nerr
        elseif not f(v[i], st, nil) then
          if st.quiet > 0 then return false end
          nest(st, m, i)
          m, ok = st.nerr, false
        end
      end
    end
    if ok then la.i = huge end
    return ok
  end
end

--- Passes the evaluated items of la on to ann.
function M.merge(ann, la)
  if la.i then upto(ann, la.i) end
  if la.c then
    local c = ann.c or {}
    for i in next, la.c do c[i] = true end
    ann.c = c
  end
end

M.handlers = { items, contains, item_counts, unique }
return M
