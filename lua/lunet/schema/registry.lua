-- Where every schema of a compilation is, and what names it: documents (the schema given to
-- compile, and those opts.load returns for other URIs), resources (a document, or a subschema
-- with $id / id, and their anchors) and, for each subschema, its base URI, its resource and its
-- location (a JSON pointer, written "uri#/pointer" outside the first document) for messages.
-- $ref and $dynamicRef resolve here, at compile time: a reference that names nothing is an
-- error naming the reference and where it is.
local uri = require "lunet.schema.uri"
local value = require "lunet.schema.value"
local report = require "lunet.schema.report"

local M = {}
local Registry = {}
Registry.__index = Registry

--- A new registry for `dialect` (an entry of dialects.DIALECTS); load(uri) -> document or nil, err.
function M.new(dialect, load)
  return setmetatable({
    dialect = dialect, load = load, resources = {}, info = {},
  }, Registry)
end

function Registry:fail(fmt, ...)
  report.schema_error(string.format(fmt, ...))
end

--- A resource named `name`; an existing one with another node is an error (two $ids alike).
function Registry:resource(name, node, where)
  local res = self.resources[name]
  if res then
    if res.node ~= node then self:fail("two schemas have the $id %q (the second at %s)", name, where) end
    return res
  end
  res = { uri = name, node = node, anchors = {}, dynamic = {} }
  self.resources[name] = res
  return res
end

--- The identifier keyword of `node`: the base URI it sets, and a draft 4 fragment name, if any.
function Registry:own_id(node, base, where)
  local d = self.dialect
  local id = d.id and node[d.id]
  if type(id) ~= "string" then return nil end
  if not d.ref_siblings and node["$ref"] ~= nil then return nil end   -- draft 4: $ref hides its siblings
  local full = uri.resolve(base, id)
  local bare, fragment = uri.strip(full)
  if d.anchors and fragment ~= "" then
    self:fail("$id %q at %s has a fragment (use $anchor for a plain name)", id, where)
  end
  return bare, fragment ~= "" and fragment or nil
end

-- Subschemas nested in one another, at most: JSON and YAML documents lunet decodes are at most
-- 1000 levels deep, so only a schema built in Lua goes past, and it fails here rather than
-- overflowing the stack after building a location string per level (quadratic).
local MAX_NESTING = 1000

--- Records `node` (a schema) and every subschema under it: base URIs, resources, anchors.
--- `depth` (0 when absent) counts the schemas above node in this walk.
function Registry:walk(node, base, res, doc, pointer, depth)
  if type(node) ~= "table" or self.info[node] then return end
  depth = (depth or 0) + 1
  local where = doc.prefix .. pointer
  if depth > MAX_NESTING then
    self:fail("the schema is nested more than %d levels deep (at %s...)", MAX_NESTING, where:sub(1, 80))
  end
  local new_base, name = self:own_id(node, base, where)
  if new_base and new_base ~= base then
    base = new_base
    res = self:resource(base, node, where)
  end
  if name then res.anchors[name] = node end   -- draft 4's id "#foo"
  if self.dialect.anchors then
    local a, da = node["$anchor"], node["$dynamicAnchor"]
    if type(a) == "string" then res.anchors[a] = node end
    if type(da) == "string" then res.anchors[da] = node; res.dynamic[da] = node end
  end
  self.info[node] = { base = base, res = res, doc = doc, pointer = pointer, where = where }
  local places = self.dialect.places
  for k, v in pairs(node) do
    if type(k) == "string" and type(v) == "table" then
      local p = uri.child(pointer, k)
      local many = places.array[k] or (places.one_or_many[k] and value.is_array(v))
      if many then
        for i, s in ipairs(v) do self:walk(s, base, res, doc, uri.child(p, i - 1), depth) end
      elseif places.single[k] or places.one_or_many[k] then
        self:walk(v, base, res, doc, p, depth)
      elseif places.map[k] or places.mixed_map[k] then
        for name_, s in pairs(v) do
          -- (walk skips a list of names: an array is no schema)
          if type(name_) == "string" and not (type(s) == "table" and value.is_array(s)) then self:walk(s, base, res, doc, uri.child(p, name_), depth) end
        end
      end
    end
  end
end

--- Adds a document: `node` retrieved as `name` (its URI without fragment; "" for none).
--- `first` marks the schema given to compile, whose locations are plain JSON pointers.
function Registry:add(node, name, first)
  local doc = { uri = name, prefix = first and "" or (name .. "#"), node = node }
  local res = self:resource(name, node, doc.prefix)
  if type(node) ~= "table" then return doc end
  self:walk(node, name, res, doc, "")
  return doc
end

--- Adds the schema given to compile, `s`, with base URI `base`. When opts.load has a document
--- for `base`, that document is what `base` names ("base#/components/schemas/Pet" points into
--- it), and `s` is a schema within it or a $ref into it; otherwise `s` is the document at `base`.
function Registry:add_root(s, base)
  if self.load and base ~= "" then
    local ok, doc = pcall(self.load, base)
    if ok and (type(doc) == "table" or type(doc) == "boolean") and doc ~= s then
      self:add(doc, base, false)
      if type(s) == "table" and not self.info[s] then
        self:walk(s, base, self.resources[base], { uri = base, prefix = "", node = s }, "")
      end
      return
    end
  end
  self:add(s, base, true)
end

--- The resource of absolute URI `name`, loading its document through opts.load if need be.
function Registry:find_resource(name, ref, where)
  local res = self.resources[name]
  if res then return res end
  if not self.load then
    self:fail("cannot resolve $ref %q at %s: no schema has the URI %q (pass opts.load to fetch documents)",
      ref, where, name)
  end
  local ok, doc, err = pcall(self.load, name)
  if not ok then err, doc = doc, nil end
  if doc == nil then
    self:fail("cannot resolve $ref %q at %s: loading %q failed: %s", ref, where, name, tostring(err or "no document"))
  end
  if type(doc) ~= "table" and type(doc) ~= "boolean" then
    self:fail("opts.load(%q) returned a %s, not a decoded schema", name, type(doc))
  end
  self:add(doc, name, false)
  return self.resources[name]
end

--- Follows JSON pointer `tokens` from `start` (a node with info): the node, or nil and why.
function Registry:follow(start, tokens)
  local node, info = start, self.info[start]
  local base = info and info.base
  local pointer = info and info.pointer or ""
  for _, tok in ipairs(tokens) do
    if type(node) ~= "table" then return nil, "the pointer passes through a non-object" end
    local nxt
    if value.is_array(node) then
      local i = tok:match("^%d+$") and not tok:match("^0%d") and tonumber(tok)
      nxt = i and node[i + 1]
    else
      nxt = node[tok]
    end
    if nxt == nil then return nil, "nothing at token " .. string.format("%q", tok) end
    node, pointer = nxt, uri.child(pointer, tok)
    local known = type(node) == "table" and self.info[node]
    if known then base = known.base end
  end
  return node, nil, base, pointer
end

--- The schema `ref` names, resolved against `base`, for a reference at `where` (its schema
--- location, for the message when it names nothing). Returns the node (a table or boolean)
--- and its info (base URI, resource, location).
function Registry:resolve(ref, base, where)
  local full = uri.resolve(base, ref)
  local name, fragment = uri.strip(full)
  local res = self:find_resource(name, ref, where)
  local tokens = uri.pointer_tokens(fragment)
  if not tokens then
    local node = res.anchors[fragment]
    if node == nil then self:fail("cannot resolve $ref %q at %s: %q has no anchor %q", ref, where, name, fragment) end
    return node, self.info[node]
  end
  local node, why, nbase, pointer = self:follow(res.node, tokens)
  if node == nil then self:fail("cannot resolve $ref %q at %s: %s", ref, where, why) end
  if self.info[node] then return node, self.info[node] end
  -- A schema where no keyword says there is one (under an unknown keyword, in an OpenAPI
  -- document's components): recorded now, with the base of the last schema above it.
  local doc = self.info[res.node] and self.info[res.node].doc or { prefix = name .. "#" }
  if type(node) == "table" then
    self:walk(node, nbase or name, res, doc, pointer)
    return node, self.info[node]
  end
  return node, { base = nbase or name, res = res, doc = doc, pointer = pointer, where = doc.prefix .. pointer }
end

--- Resolves every $ref of every schema recorded, loading the documents they name, until no
--- new schema turns up; notes whether any has a $dynamicRef (which needs the dynamic scope
--- kept while validating). References that fail are left for the compiler to report, where it
--- meets them (draft 4 ignores $ref's siblings: a broken reference there is no error).
function Registry:preload()
  local seen = {}
  repeat
    local todo = {}
    for node in pairs(self.info) do
      if not seen[node] then seen[node] = true; todo[#todo + 1] = node end
    end
    for _, node in ipairs(todo) do
      if node["$dynamicRef"] ~= nil then self.has_dynamic = true end
      for _, k in ipairs({ "$ref", "$dynamicRef" }) do
        if type(node[k]) == "string" then pcall(self.resolve, self, node[k], self.info[node].base, "") end
      end
    end
  until #todo == 0
end

return M
