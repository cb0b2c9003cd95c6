-- Turns a schema into one Lua function, check(v, st, ann) -> boolean, once: each keyword
-- becomes a closure over its already-checked arguments, and a schema's closures are grouped by
-- the JSON type they apply to, so validating a string never looks at `properties`. Each
-- schema object is compiled once (memoised by table); a $ref to a schema still being compiled
-- (recursion) goes through its cell, filled in when it is done.
--
-- `ann` is the annotation record unevaluatedProperties / unevaluatedItems read: nil unless a
-- schema that has one of them is being evaluated, so other schemas pay one nil test for it.
-- Fields: p (set of evaluated property names), allp (all of them), i (items evaluated from
-- the start), c (set of item indexes contains matched).
local report = require "lunet.schema.report"
local value = require "lunet.schema.value"
local uri = require "lunet.schema.uri"
local kw_object = require "lunet.schema.kw_object"
local kw_array = require "lunet.schema.kw_array"
local kw_logic = require "lunet.schema.kw_logic"
-- OpenAPI's keywords reach the others through the compiler (ctx.openapi, ctx:compile): the
-- keyword modules never require each other in a cycle (scripts/check-layers).
local openapi = require "lunet.schema.openapi"

local M = {}
local Ctx = {}
Ctx.__index = Ctx

local type = type
local ARRAY_MT, is_array, getmetatable = value.ARRAY_MT, value.is_array, value.getmetatable
local fail = report.fail

local function always(_) return true end
M.always = always

-- Keyword handlers in the order they run; each is handler(ctx, node, info, add) and calls
-- add(kind, check) for kind "any", "object", "array", "string", "number" or "other"
-- (booleans and null). unevaluatedProperties / unevaluatedItems come after them all.
local HANDLERS = {}
for _, name in ipairs({ "kw_basic", "kw_object", "kw_array", "kw_logic", "openapi" }) do
  for _, h in ipairs(require("lunet.schema." .. name).handlers) do HANDLERS[#HANDLERS + 1] = h end
end

--- A compiler over registry `reg` for dialect `d` (dialects.DIALECTS entry), with `keywords`
--- (the set in force), `formats` (assert formats) and `direction` ("request", "response" or nil).
function M.new(reg, d, keywords, formats, direction)
  return setmetatable({
    reg = reg, dialect = d, keywords = keywords, formats = formats, direction = direction, openapi = openapi,
    cells = {}, dyn = { on = false }, regexes = {}, dynamic_fns = {},
  }, Ctx)
end

--- The check of schema `node` (registry info `info`): what a $ref to it compiles to.
function Ctx:compile(node, info) return kw_logic.call(self, node, info) end

--- The reference check of a $dynamicAnchor's schema (made on demand, kept), counted against
--- the depth limit: where a $dynamicRef lands is only known while validating, so any may recurse.
function Ctx:dynamic_fn(node)
  local f = self.dynamic_fns[node]
  if not f then
    local info = self.reg.info[node]
    f = kw_logic.guard(kw_logic.call(self, node, info), info.where)
    self.dynamic_fns[node] = f
  end
  return f
end

--- Compiles the schema of every $dynamicAnchor of every resource, once the rest is compiled:
--- a $dynamicRef may land on any of them, and their errors belong to compile time too.
function Ctx:compile_dynamic()
  if not self.dyn.on then return end
  local done = {}
  repeat
    local todo = {}
    for name, res in pairs(self.reg.resources) do
      if not done[name] then todo[#todo + 1] = res; done[name] = true end
    end
    for _, res in ipairs(todo) do
      for _, node in pairs(res.dynamic) do self:dynamic_fn(node) end
    end
  until #todo == 0
end

--- Raises a schema error: what is wrong, at schema location `where`.
function Ctx:fail(where, fmt, ...)
  report.schema_error(string.format(fmt, ...) .. " (at " .. (where == "" and "the schema's root" or where) .. ")")
end

--- The schema location of keyword path `...` (keys, or 0-based indexes) under `info`.
function Ctx:where(info, ...)
  local w = info.where
  for i = 1, select("#", ...) do w = uri.child(w, (select(i, ...))) end
  return w
end

--- Whether keyword k is in force for this dialect (and its vocabularies).
function Ctx:on(k) return self.keywords[k] == true end

--- The compiled subschema `node` found at keyword path `...` under `info`.
function Ctx:child(info, node, ...)
  if type(node) == "table" then
    local ci = self.reg.info[node]
    if not ci then
      -- not recorded by the walk (a hand-built schema sharing a table): record it here
      local pointer = info.pointer
      for i = 1, select("#", ...) do pointer = uri.child(pointer, (select(i, ...))) end
      self.reg:walk(node, info.base, info.res, info.doc, pointer)
      ci = self.reg.info[node]
    end
    return self:compile(node, ci)
  end
  return self:compile(node, { where = self:where(info, ...), base = info.base, res = info.res })
end

local function false_schema(where)
  return function(_, st)
    return fail(st, "false", where, "no value is allowed here (the schema is false)")
  end
end

--- Chains checks: all run (so all errors are reported) unless quiet, where the first failure ends.
local function chain(list)
  local n = #list
  if n == 0 then return nil end
  if n == 1 then return list[1] end
  if n == 2 then
    local a, b = list[1], list[2]
    return function(v, st, ann)
      if a(v, st, ann) then return b(v, st, ann) end
      if st.quiet > 0 then return false end
      b(v, st, ann)
      return false
    end
  end
  return function(v, st, ann)
    local ok = true
    for i = 1, n do
      if not list[i](v, st, ann) then
        if st.quiet > 0 then return false end
        ok = false
      end
    end
    return ok
  end
end

--- Runs `inner` with a fresh annotation record for unevaluated check `last`, then passes the
--- record on to the caller's when the whole schema held.
local function with_annotations(inner, last, merge)
  return function(v, st, ann)
    local la = {}
    local ok = inner == nil or inner(v, st, la)
    if not ok and st.quiet > 0 then return false end
    ok = last(v, st, la) and ok
    if ok and ann then merge(ann, la) end
    return ok
  end
end

--- One function from the per-kind checks: dispatch on the value's type.
local function dispatch(O, A, S, N, X)
  if not (O or A or S or N or X) then return always end
  local same_table = O == A
  return function(v, st, ann)
    local t = type(v)
    local f
    if t == "table" then
      if same_table then f = O
      else
        -- decoded arrays carry ARRAY_MT; a hand-built one has v[1] (objects never have)
        local mt = getmetatable(v)
        if mt == ARRAY_MT or (mt == nil and v[1] ~= nil and is_array(v)) then f = A else f = O end
      end
    elseif t == "string" then f = S
    elseif t == "number" then f = N
    else f = X end
    if f == nil then return true end
    return f(v, st, ann)
  end
end

--- The per-kind chains of `node`'s keywords.
function Ctx:kinds(node, info)
  local lists = { object = {}, array = {}, string = {}, number = {}, other = {} }
  local function add(kind, fn)
    if kind == "any" then
      for _, l in pairs(lists) do l[#l + 1] = fn end
    else
      local l = lists[kind] or error("no kind " .. tostring(kind))
      l[#l + 1] = fn
    end
  end
  -- draft 4 and OpenAPI 3.0: "$ref" replaces the schema it is in; its siblings are ignored
  local only_ref = not self.dialect.ref_siblings and node["$ref"] ~= nil
  if only_ref then
    kw_logic.ref_handler(self, node, info, add)
  else
    for _, h in ipairs(HANDLERS) do h(self, node, info, add) end
  end
  local O, A = chain(lists.object), chain(lists.array)
  if not only_ref then
    local uo = kw_object.unevaluated(self, node, info)
    if uo then O = with_annotations(O, uo, kw_object.merge) end
    local ua = kw_array.unevaluated(self, node, info)
    if ua then A = with_annotations(A, ua, kw_array.merge) end
  end
  return O, A, chain(lists.string), chain(lists.number), chain(lists.other)
end

--- Enters the schema's resource in the dynamic scope while it runs (for $dynamicRef), when
--- the compilation has a $dynamicRef at all (known before compiling: registry.preload).
function Ctx:scoped(f, res)
  local dyn = self.dyn
  return function(v, st, ann)
    if not dyn.on then return f(v, st, ann) end
    local n = st.nscope + 1
    st.scope[n] = res
    st.nscope = n
    local ok = f(v, st, ann)
    st.nscope = n - 1
    return ok
  end
end

--- The check function of schema `node` (a table or boolean) with its `info`.
function Ctx:compile(node, info)
  if node == true then
    if not self.dialect.boolean_schemas then
      self:fail(info.where, "a schema must be an object in %s, not a boolean", self.dialect.name)
    end
    return always
  end
  if node == false then
    if not self.dialect.boolean_schemas then
      self:fail(info.where, "a schema must be an object in %s, not a boolean", self.dialect.name)
    end
    return false_schema(info.where)
  end
  if type(node) ~= "table" or is_array(node) then
    self:fail(info.where, "a schema must be an object%s, not %s",
      self.dialect.boolean_schemas and " or a boolean" or "", value.article(value.kind(node)))
  end
  local cell = self.cells[node]
  if cell then
    if cell.f then return cell.f end
    -- recursion (a $ref back to a schema being compiled, or a hand-built table that contains
    -- itself): through the cell, counted against the depth limit
    return kw_logic.guard(function(v, st, ann) return cell.f(v, st, ann) end, info.where)
  end
  cell = {}
  self.cells[node] = cell
  local f = dispatch(self:kinds(node, info))
  if self.reg.has_dynamic and info.res and info.res.node == node then f = self:scoped(f, info.res) end
  cell.f = f
  return f
end

return M
