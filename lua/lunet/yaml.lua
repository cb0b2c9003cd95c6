-- YAML 1.2 documents as the Lua values json.decode gives for the same data (docs/yaml.md):
-- mappings are tables with string keys, sequences are json.array tables, null is json.null,
-- integers stay integers. Written in Lua over string.find patterns; its parts are under
-- lua/lunet/yaml/ (reader: the text and errors; scalars, block_scalar: scalar text; schema:
-- what scalars mean, tags; nodes: anchors, aliases, mappings; block, flow: the collections).
--
--   local doc = yaml.decode(text [, { max_depth = 1000, max_aliases = 10000 }])
--   local docs = yaml.decode_all(text [, opts])   -- every document of a `---` stream
--   local text = yaml.encode(value)               -- one document; yaml.encode_all(list): a stream
--   yaml.map("b", 1, "a", 2)                      -- a mapping whose keys keep their order
local errors = require "lunet.errors"
local R = require "lunet.yaml.reader"
local block = require "lunet.yaml.block"
local schema = require "lunet.yaml.schema"
local byte, match, setmetatable = string.byte, string.match, require("lunet.runtime").setmetatable

local M = {}

local CORE = "tag:yaml.org,2002:"
local OPTIONS = { max_depth = 1000, max_aliases = 10000 }

local function options(fname, opts)
  if type(opts) ~= "table" then
    if opts ~= nil then errors.argument(2, fname, "table expected, got " .. type(opts)) end
    opts = {}
  end
  local out = {}
  for k, v in pairs(opts) do
    if OPTIONS[k] == nil then
      errors.argument(2, fname, string.format("unknown option '%s' (known: 'max_aliases', 'max_depth')", tostring(k)))
    end
    local least = k == "max_depth" and 1 or 0
    if math.type(v) ~= "integer" or v < least then
      errors.argument(2, fname, string.format("option '%s' must be %s integer, got %s", k,
        least == 1 and "a positive" or "a non-negative", type(v) == "number" and tostring(v) or ("a " .. type(v))))
    end
    out[k] = v
  end
  for k, v in pairs(OPTIONS) do
    if out[k] == nil then out[k] = v end
  end
  return out
end

-- One directive line at P.pos ('%' at a line's start). %YAML 1.x is read as YAML 1.2; %TAG
-- declares a handle for this document; other directives are reserved and ignored, as YAML says.
local function directive(P, seen)
  local s, at = P.s, P.pos
  local name = match(s, "^%%(%S*)", at)
  if name == "YAML" then
    local major, minor, after = match(s, "^%%YAML[ \t]+(%d+)%.(%d+)()", at)
    if not major then R.fail(P, at, "a %YAML directive needs a version such as 1.2") end
    if seen.YAML then R.fail(P, at, "a second %YAML directive for one document") end
    if major ~= "1" then R.fail(P, at, string.format("YAML %s.%s is not supported (lunet reads YAML 1.2, and 1.1 as 1.2)", major, minor)) end
    seen.YAML, P.pos = true, after
  elseif name == "TAG" then
    local handle, prefix, after = match(s, "^%%TAG[ \t]+(%S+)[ \t]+(%S+)()", at)
    if not handle or not match(handle, "^![%w%-]*!$") and handle ~= "!" then
      R.fail(P, at, "a %TAG directive needs a handle (!, !! or !name!) and a prefix")
    end
    if seen[handle] then R.fail(P, at, "a second %TAG directive for the handle " .. handle) end
    seen[handle], P.tag_handles[handle], P.pos = true, prefix, after
  else
    P.pos = (string.find(s, "\n", at, true) or P.n + 1)
  end
  R.end_of_line(P, "the directive")
end

-- The next document of the stream from P.pos (its prefix read): its value, or nothing at the end.
-- `directives_ok`: at the stream's start, or after "..." (else a '%' line is content).
local function document(P, directives_ok)
  local s = P.s
  P.anchors, P.tag_handles = {}, { ["!"] = "!", ["!!"] = CORE }
  local seen = nil
  while directives_ok and P.pos <= P.n and byte(s, P.pos) == 37 and R.column(P) == 0 do
    seen = seen or {}
    directive(P, seen)
    R.skip_block(P)
  end
  local marker, which = R.at_marker(P)
  if marker and which == "---" then
    P.pos = P.pos + 3
    return (block.node(P, -1, "doc"))
  end
  if seen then R.fail(P, P.pos, "directives must be followed by '---'") end
  return (block.node(P, -1, "top"))
end

-- After a document: "...", or the next "---", or the end. Returns whether directives may follow.
local function document_end(P)
  local crossed = R.skip_block(P)
  if P.pos > P.n then return true end
  if not crossed then block.after_value(P) end
  local marker, which = R.at_marker(P)
  if marker and which == "..." then
    P.pos = P.pos + 3
    R.end_of_line(P, "'...'")
    return true
  end
  if marker then return false end
  R.fail(P, P.pos, "unexpected text after the document's top value (is the indentation right?)")
end

-- Every document of the text; with `one`, an error at the start of a second.
local function documents(P, one)
  local docs, n, directives_ok = {}, 0, true
  while true do
    R.skip_block(P)
    if P.pos > P.n then break end
    local marker, which = R.at_marker(P)
    if marker and which == "..." then
      P.pos = P.pos + 3
      R.end_of_line(P, "'...'")
      directives_ok = true
    else
      if one and n == 1 then R.fail(P, P.pos, "a second document in the stream (yaml.decode_all reads every document)") end
      n = n + 1
      docs[n] = document(P, directives_ok)
      directives_ok = document_end(P)
    end
  end
  return docs, n
end

-- The parser recurses once per level of nesting. max_depth (1000 by default) keeps that far
-- within Lua's stack; a limit raised past what the stack holds (some 35,000 levels of flow
-- collections) ends in Lua's "stack overflow", reported as what it is.
local function stream(text, opts, one)
  local P = R.new(text, opts)
  local ok, docs, n = pcall(documents, P, one)
  if ok then return docs, n end
  if type(docs) == "string" and docs:find("stack overflow", 1, true) then
    R.fail(P, P.pos, string.format("nesting too deep for Lua's stack (%d levels of mappings and sequences)", P.depth))
  end
  error(docs, 0)
end

--- The value of the YAML document `text` (json.null for an empty one).
function M.decode(text, opts)
  if type(text) ~= "string" then errors.argument(1, "decode", "string expected, got " .. type(text)) end
  local docs, n = stream(text, options("decode", opts), true)
  if n == 0 then return schema.NULL end
  return docs[1]
end

--- The values of every document in the YAML stream `text`, as a json.array (empty when there
--- are none).
function M.decode_all(text, opts)
  if type(text) ~= "string" then errors.argument(1, "decode_all", "string expected, got " .. type(text)) end
  local docs = stream(text, options("decode_all", opts), false)
  return setmetatable(docs, schema.ARRAY)
end

-- The emitter's failure as an `argument` error of `fname`: a value nested past what Lua's stack
-- holds (the emitter recurses once a level) is named as that, not as Lua's "stack overflow".
local function refuse(fname, problem)
  problem = tostring(problem)
  if problem:find("stack overflow", 1, true) then problem = "YAML: the value is nested too deeply to write (Lua's stack ran out)" end
  errors.raise("argument", problem .. " (" .. fname .. ")")
end

--- `value` (json's data model: tables with string keys, sequences or json.array, strings,
--- numbers, booleans, json.null) as one YAML document (lunet/yaml/emit.lua). A table whose keys
--- must keep their order is made with yaml.map(key, value, ...); other mappings are sorted.
function M.encode(value)
  local ok, text = pcall(require("lunet.yaml.emit").stream, { value })
  if not ok then refuse("yaml.encode", text) end
  return text
end

--- Every value of the list `docs` as a document of one YAML stream.
function M.encode_all(docs)
  if type(docs) ~= "table" then errors.argument(1, "encode_all", "table expected, got " .. type(docs)) end
  local ok, text = pcall(require("lunet.yaml.emit").stream, docs)
  if not ok then refuse("yaml.encode_all", text) end
  return text
end

--- An ordered mapping for encode: map("key", value, "key", value, ...); a nil value leaves its key out.
function M.map(...) return require("lunet.yaml.emit").map(...) end

return M
