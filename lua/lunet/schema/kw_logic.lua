-- Keywords that apply other schemas to the same value: allOf, anyOf, oneOf, not, if / then /
-- else, $ref and $dynamicRef. Branches whose failure is not the schema's failure (anyOf, oneOf,
-- not, if) run quiet: counted, without messages. Each gets its own annotation record, kept
-- only when it held, as unevaluatedProperties / unevaluatedItems require.
local report = require "lunet.schema.report"
local value = require "lunet.schema.value"
local uri = require "lunet.schema.uri"
local kw_object = require "lunet.schema.kw_object"
local kw_array = require "lunet.schema.kw_array"

local M = {}

local type = type
local fail, show = report.fail, value.show

-- Nested $refs one validation may follow before it stops: enough for any document JSON can
-- decode (1000 levels), and well inside Lua's stack. A $ref cycle that consumes no input (a
-- schema that is its own $ref) ends here with an error, not a stack overflow.
local MAX_DEPTH = 2000
M.MAX_DEPTH = MAX_DEPTH

-- Schemas one validation may apply through allOf, anyOf, oneOf and $ref, in all: a document's
-- schemas come from a server, and 40 definitions each naming the next twice (4 KB) ask for 2^40
-- applications. Enough for any real document and value (a million items each checked against a
-- few referenced schemas), and found within a second or two past it.
local MAX_STEPS = 20000000
M.MAX_STEPS = MAX_STEPS

local function too_much(where)
  require("lunet.errors").raise("schema", report.printable(string.format("validation applied more than %d schemas through " ..
    "allOf, anyOf, oneOf and $ref (at %s): schemas that fan out (each naming the next more than once)",
    MAX_STEPS, where == "" and "the root" or where)))
end

--- Counts `n` applications against the validation's budget (st.steps, MAX_STEPS when unset).
local function spend(st, n, where)
  local left = (st.steps or MAX_STEPS) - n
  st.steps = left
  if left < 0 then too_much(where) end
end
M.spend = spend

local function merge(ann, la)
  kw_object.merge(ann, la)
  kw_array.merge(ann, la)
end

local function list_arg(ctx, node, info, k)
  local list = node[k]
  if list == nil or not ctx:on(k) then return nil end
  if type(list) ~= "table" or not value.is_array(list) or #list == 0 then
    ctx:fail(ctx:where(info, k), "%s must be a non-empty array of schemas", k)
  end
  local fns = {}
  for i, s in ipairs(list) do fns[i] = ctx:child(info, s, k, i - 1) end
  return fns
end

local function all_of(ctx, node, info, add)
  local fns = list_arg(ctx, node, info, "allOf")
  if not fns then return end
  local n = #fns
  local where = ctx:where(info, "allOf")
  add("any", function(v, st, ann)
    spend(st, n, where)
    local ok = true
    for i = 1, n do
      if not fns[i](v, st, ann) then
        if st.quiet > 0 then return false end
        ok = false
      end
    end
    return ok
  end)
end

local function any_of(fns, where)
  local n = #fns
  return function(v, st, ann)
    spend(st, n, where)
    st.quiet = st.quiet + 1
    local any = false
    for i = 1, n do
      local la = ann and {}
      if fns[i](v, st, la) then
        any = true
        if not ann then break end
        merge(ann, la)
      end
    end
    st.quiet = st.quiet - 1
    if any then return true end
    return fail(st, "anyOf", where, show(v) .. " matches none of the " .. n .. " schemas of anyOf")
  end
end

local function one_of(fns, where)
  local n = #fns
  return function(v, st, ann)
    spend(st, n, where)
    st.quiet = st.quiet + 1
    local first, second, keep
    for i = 1, n do
      local la = ann and {}
      if fns[i](v, st, la) then
        if first then second = i; break end
        first, keep = i, la
      end
    end
    st.quiet = st.quiet - 1
    if first and not second then
      if ann then merge(ann, keep) end
      return true
    end
    if not first then
      return fail(st, "oneOf", where, show(v) .. " matches none of the " .. n .. " schemas of oneOf")
    end
    return fail(st, "oneOf", where, show(v) .. " matches both the " .. report.ordinal(first) .. " and the " ..
      report.ordinal(second) .. " schemas of oneOf; it must match exactly one")
  end
end

local function choices(ctx, node, info, add)
  local openapi = ctx:on("discriminator") and node.discriminator ~= nil and ctx.openapi
  for _, k in ipairs({ "anyOf", "oneOf" }) do
    local fns = list_arg(ctx, node, info, k)
    if fns then
      local plain = (k == "anyOf" and any_of or one_of)(fns, ctx:where(info, k))
      -- OpenAPI: a discriminator picks the one branch to validate against
      add("any", openapi and openapi.discriminator(ctx, node, info, k, fns, plain) or plain)
    end
  end
end

local function not_(ctx, node, info, add)
  if node["not"] == nil or not ctx:on("not") then return end
  local f, where = ctx:child(info, node["not"], "not"), ctx:where(info, "not")
  add("any", function(v, st)
    st.quiet = st.quiet + 1
    local matched = f(v, st, nil)
    st.quiet = st.quiet - 1
    if not matched then return true end
    return fail(st, "not", where, show(v) .. " matches the schema of not")
  end)
end

local function conditional(ctx, node, info, add)
  if node["if"] == nil or not ctx:on("if") then return end
  local cond = ctx:child(info, node["if"], "if")
  local yes = node["then"] ~= nil and ctx:child(info, node["then"], "then")
  local no = node["else"] ~= nil and ctx:child(info, node["else"], "else")
  add("any", function(v, st, ann)
    if not (yes or no or ann) then return true end
    st.quiet = st.quiet + 1
    local la = ann and {}
    local held = cond(v, st, la)
    st.quiet = st.quiet - 1
    if held then
      if ann then merge(ann, la) end
      return not yes or yes(v, st, ann)
    end
    return not no or no(v, st, ann)
  end)
end

local function too_deep(where)
  require("lunet.errors").raise("schema", report.printable(string.format("validation entered the schema at %s " ..
    "more than %d levels deep: a $ref cycle that consumes no input, or an instance nested too deep",
    where == "" and "the root" or where, MAX_DEPTH)))
end

--- f, counted against MAX_DEPTH: for references that may recurse.
function M.guard(f, where)
  return function(v, st, ann)
    local d = st.depth + 1
    if d > MAX_DEPTH then too_deep(where) end
    st.depth = d
    local ok = f(v, st, ann)
    st.depth = d - 1
    return ok
  end
end

--- A check that follows a reference to `target`. A reference to a schema still being compiled
--- (a back edge: every recursion has one) gets compile's guarded indirection, counted against
--- MAX_DEPTH; any other is the target's own check, unless $dynamicRef needs the target's
--- resource entered in the dynamic scope.
function M.call(ctx, target, tinfo)
  local f = ctx:compile(target, tinfo)
  local res, dyn = tinfo.res, ctx.dyn
  if not ctx.reg.has_dynamic or not res then return f end
  return ctx:scoped(f, res)
end

function M.ref_handler(ctx, node, info, add)
  local ref = node["$ref"]
  if ref == nil or not ctx:on("$ref") then return end
  local where = ctx:where(info, "$ref")
  if type(ref) ~= "string" then ctx:fail(where, "$ref must be a string") end
  local target, tinfo = ctx.reg:resolve(ref, info.base, where)
  local f = M.call(ctx, target, tinfo)
  add("any", function(v, st, ann)
    spend(st, 1, where)
    return f(v, st, ann)
  end)
end

--- $dynamicRef: like $ref, unless it names a $dynamicAnchor that its target has; then the
--- outermost resource in the dynamic scope with that anchor gives the schema.
local function dynamic_ref(ctx, node, info, add)
  local ref = node["$dynamicRef"]
  if ref == nil or not ctx:on("$dynamicRef") then return end
  local where = ctx:where(info, "$dynamicRef")
  if type(ref) ~= "string" then ctx:fail(where, "$dynamicRef must be a string") end
  local target, tinfo = ctx.reg:resolve(ref, info.base, where)
  local static = M.call(ctx, target, tinfo)
  local _, name = uri.strip(uri.resolve(info.base, ref))
  if name == "" or name:sub(1, 1) == "/" or type(target) ~= "table" or target["$dynamicAnchor"] ~= name then
    add("any", static)
    return
  end
  ctx.dyn.on = true
  local fns = ctx.dynamic_fns
  add("any", function(v, st, ann)
    local scope = st.scope
    for i = 1, st.nscope do
      local dn = scope[i].dynamic[name]
      if dn then return (fns[dn] or ctx:dynamic_fn(dn))(v, st, ann) end
    end
    return static(v, st, ann)
  end)
end

M.handlers = { all_of, choices, not_, conditional, M.ref_handler, dynamic_ref }
return M
