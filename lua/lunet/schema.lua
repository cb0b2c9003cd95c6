-- JSON Schema validation: draft 2020-12 (OpenAPI 3.1's), draft 4 (OpenAPI 3.0's and Swagger
-- 2.0's base) and "openapi-3.0" (draft 4 with nullable, discriminator, readOnly / writeOnly
-- and OpenAPI's formats).
--
--   local schema = require "lunet.schema"
--   local v = schema.compile(s, opts)     -- once; raises kind "schema" for a schema it cannot use
--   local ok, errors = v:validate(value)  -- ok: boolean; errors: nil when ok, else a list of
--                                         -- { path, schema_path, rule, message }
--   schema.validate(s, value, opts)       -- both at once
--
-- opts (all optional):
--   dialect    "2020-12", "draft4", "openapi-3.0" or "openapi-3.1" (2020-12 with discriminator); default: what the schema's $schema names
--              (a metaschema with $vocabulary is loaded through `load`), else "2020-12"
--   base_uri   the URI its $id and $refs resolve against. When `load` returns a document for
--              it, "base_uri#/pointer" names places in that document (so a schema taken from an
--              OpenAPI document, or { ["$ref"] = base_uri .. "#/components/schemas/Pet" },
--              reaches the document's other schemas); otherwise the schema is that document.
--   load       function(uri) -> decoded document, or nil and a message: the documents that
--              $refs name outside the schema (uri without its fragment). Without it such a
--              $ref is a compile error; lunet never fetches on its own.
--   formats    true: `format` is checked (the formats schema/formats.lua knows); false: an
--              annotation. Default false, but true for "openapi-3.0" and for a metaschema with
--              the format-assertion vocabulary.
--   direction  "request" or "response": enforce readOnly / writeOnly (see schema/openapi.lua)
--
-- An error's path is a JSON pointer into the value ("/items/3/price"; array items counted
-- from 0, "" for the value itself); schema_path one into the schema of the keyword that failed
-- ("/properties/items/items/properties/price/minimum"), written "uri#/pointer" when the
-- keyword is in a document `load` returned; rule is that keyword ("minimum", or "false" for a
-- false schema, "discriminator", "readOnly", ...). Values are read as schema/value.lua says:
-- a Lua table with keys 1..n is an array, an unmarked empty table an object, 1.0 an integer.
--
-- Limits (schemas may come from servers): at most 1000 errors are listed, the list's `more`
-- counting those past them; a schema nested over 1000 levels, a $ref chain over 2000 levels
-- deep in one validation, a pattern over 20,000 NFA states, and patterns that together need
-- over 4,000,000 NFA state visits in one validation (a DFA state per character, as
-- [ab]*a[ab]{2000} makes) raise kind "schema": an error, never an answer. Messages write
-- control bytes of names from the schema as \ddd and quote long patterns cut at 60 bytes.
local errors = require "lunet.errors"
local dialects = require "lunet.schema.dialects"
local registry = require "lunet.schema.registry"
local compiler = require "lunet.schema.compiler"
local report = require "lunet.schema.report"
local uri = require "lunet.schema.uri"

local M = {}

local OPTIONS = { dialect = "string", base_uri = "string", load = "function", formats = "boolean", direction = "string" }

local function check_opts(fname, opts)
  if opts == nil then return {} end
  if type(opts) ~= "table" then errors.argument(fname == "validate" and 3 or 2, fname, "options must be a table") end
  for k, v in pairs(opts) do
    local want = OPTIONS[k]
    if not want then errors.raise("argument", "unknown option '" .. tostring(k) .. "' (schema." .. fname .. ")") end
    if type(v) ~= want then errors.raise("argument", "option '" .. k .. "' must be a " .. want .. ", got " .. type(v)) end
  end
  if opts.dialect and not dialects.DIALECTS[opts.dialect] then
    errors.raise("argument", "unknown dialect '" .. opts.dialect .. "' (use \"2020-12\", \"draft4\", \"openapi-3.0\" or \"openapi-3.1\")")
  end
  if opts.direction and opts.direction ~= "request" and opts.direction ~= "response" then
    errors.raise("argument", "option 'direction' must be \"request\" or \"response\", got '" .. opts.direction .. "'")
  end
  return opts
end

--- The dialect and vocabularies a $schema value names: a known URI, or a metaschema
--- (loaded through opts.load) whose $vocabulary lists what is in force.
local function declared(decl, opts)
  local name = dialects.by_schema_uri(decl)
  if name then return name end
  local where = "$schema " .. string.format("%q", decl)
  if not opts.load then
    report.schema_error(where .. " names no dialect lunet.schema knows (2020-12, draft-04): pass " ..
      "opts.dialect, or opts.load to fetch the metaschema")
  end
  local meta, err = opts.load((uri.strip(decl)))
  if type(meta) ~= "table" then report.schema_error(where .. ": loading the metaschema failed: " .. tostring(err or "no document")) end
  local vocab = meta["$vocabulary"]
  if type(meta["$schema"]) ~= "string" or dialects.by_schema_uri(meta["$schema"]) ~= "2020-12" or type(vocab) ~= "table" then
    report.schema_error(where .. ": the metaschema is not a 2020-12 metaschema with a $vocabulary")
  end
  for v, required in pairs(vocab) do
    if required == true and not dialects.VOCABULARIES[v] then
      report.schema_error(where .. ": the metaschema requires the vocabulary " .. v .. ", which lunet.schema does not know")
    end
  end
  return "2020-12", vocab
end

local Validator = {}
Validator.__index = Validator

local function compile(s, opts)
  local name, vocab = opts.dialect, nil
  if not name and type(s) == "table" and type(s["$schema"]) == "string" then name, vocab = declared(s["$schema"], opts) end
  name = name or "2020-12"
  local d = dialects.DIALECTS[name]
  local keywords = vocab and dialects.keywords_2020(vocab) or d.keywords
  local formats = opts.formats
  if formats == nil then
    formats = d.formats or (vocab ~= nil and vocab["https://json-schema.org/draft/2020-12/vocab/format-assertion"] ~= nil)
  end
  local reg = registry.new(d, opts.load)
  local base = opts.base_uri and uri.normalize(opts.base_uri) or ""
  reg:add_root(s, base)
  if d.anchors then reg:preload() end   -- draft 2020-12: know up front whether $dynamicRef is used
  local ctx = compiler.new(reg, d, keywords, formats, opts.direction)
  local info = reg.info[s] or { where = "", pointer = "", base = base, res = reg.resources[base] }
  local root = ctx:compile(s, info)
  ctx:compile_dynamic()
  return setmetatable({ root = root, dyn = ctx.dyn, res = info.res, dialect = name }, Validator)
end

--- The validator of schema `s` (a decoded JSON Schema: a table, or a boolean in 2020-12).
function M.compile(s, opts)
  opts = check_opts("compile", opts)
  if type(s) ~= "table" and type(s) ~= "boolean" then
    errors.argument(1, "compile", "a schema must be a table or a boolean, got " .. type(s))
  end
  return compile(s, opts)
end

local function new_state()
  return { errors = {}, nerr = 0, quiet = 0, depth = 0, scope = {}, nscope = 0 }
end

--- true, or false and the list of errors. One state per validator is reused: a value that
--- passes allocates nothing here.
function Validator:validate(v)
  local st = self.st
  if st == nil or st.busy then
    st = new_state()
    if self.st == nil then self.st = st end
  end
  st.busy, st.nerr, st.quiet, st.depth, st.nscope = true, 0, 0, 0, 0
  st.regex_left, st.dropped, st.steps = nil, 0, nil
  if self.dyn.on and self.res then st.scope[1], st.nscope = self.res, 1 end
  local ok, held = pcall(self.root, v, st, nil)
  st.busy = false
  if not ok then
    for i = 1, st.nerr do st.errors[i] = nil end
    error(held, 0)
  end
  if held then return true end
  return false, report.finish(st)
end

--- compile(s, opts):validate(value).
function M.validate(s, value, opts)
  return M.compile(s, opts):validate(value)
end

return M
