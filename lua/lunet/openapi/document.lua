--- An OpenAPI document and the documents its `$ref`s reach: read from a file or a URL, JSON or
--- YAML, and looked into by JSON pointer. Every problem is an error of kind `openapi` that names
--- its place (`where`: the document's address and a JSON pointer), raised when the document is
--- loaded, never later when an operation is called.
local json = require "lunet.json"
local errors = require "lunet.errors"

local M = {}

--- Raises kind `openapi` naming `where` (a document's address, a JSON pointer in it).
function M.fail(where, fmt, ...)
  errors.raise("openapi", (where and (where .. ": ") or "") .. string.format(fmt, ...), { where = where })
end

local function is_url(s) return s:match("^https?://") ~= nil end

-- The text of `source` (a path or an http(s) URL) and its absolute address.
local function read(source, fetch)
  if is_url(source) then
    local ok, r = pcall(fetch, source)
    if not ok then M.fail(source, "cannot fetch it: %s", errors.describe(r)) end
    if r.status ~= 200 then M.fail(source, "fetching it answered %d", r.status) end
    return r.body, source
  end
  local f, err = io.open(source, "rb")
  if not f then M.fail(source, "cannot read it: %s", err) end
  local text = f:read("a")
  f:close()
  local path = source
  if path:sub(1, 1) ~= "/" then
    local pwd = os.getenv("PWD")
    if pwd then path = pwd .. "/" .. path end
  end
  return text, "file://" .. path
end

-- JSON when the text starts as JSON does, else YAML (a superset, but its errors are YAML's).
local function parse(text, where)
  local first = text:match("^%s*(.)")
  local ok, value
  if first == "{" or first == "[" then ok, value = pcall(json.decode, text)
  else ok, value = pcall(function() return require("lunet.yaml").decode(text) end) end
  if not ok then M.fail(where, "not JSON or YAML: %s", errors.describe(value)) end
  if type(value) ~= "table" or json.is_array(value) then M.fail(where, "the document is not an object") end
  return value
end

--- `relative` (a $ref's address part) against `base` (an absolute address): RFC 3986's
--- reference resolution, for the paths documents use (`other.yaml`, `../common/x.json`, a URL).
function M.resolve_uri(base, relative)
  if relative == "" then return base end
  if relative:match("^%a[%w+.-]*:") then return relative end
  local scheme_host, path = base:match("^(%a[%w+.-]*://[^/]*)(.*)$")
  if not scheme_host then return relative end
  if relative:sub(1, 1) == "/" then path = relative
  else path = (path:match("^(.*/)") or "/") .. relative end
  -- remove dot segments
  local out = {}
  for seg in path:gmatch("[^/]+") do
    if seg == ".." then out[#out] = nil elseif seg ~= "." then out[#out + 1] = seg end
  end
  return scheme_host .. "/" .. table.concat(out, "/")
end

--- The value at JSON pointer `pointer` ("" or "/a/b~1c") in `doc`, or nil.
function M.at(doc, pointer)
  local v = doc
  for token in pointer:gmatch("/([^/]*)") do
    token = token:gsub("~1", "/"):gsub("~0", "~"):gsub("%%(%x%x)", function(h) return string.char(tonumber(h, 16)) end)
    if type(v) ~= "table" then return nil end
    if json.is_array(v) then v = v[(tonumber(token) or -1) + 1] else v = v[token] end
    if v == nil then return nil end
  end
  return v
end

--- A set of documents: the root one and those its $refs reach, loaded once each.
--- opts.fetch (function(url) -> response) reads URLs; http.get by default.
function M.load(source, opts)
  opts = opts or {}
  -- A server that never answers does not hold the load for ever; nor does one that sends a
  -- document larger than max_body (lunet's default).
  local fetch = opts.fetch or function(url) return require("lunet.http").get(url, { timeout = opts.timeout or 30 }) end
  local set = { docs = {}, fetch = fetch }
  local text, uri = read(source, fetch)
  set.root_uri = uri
  set.docs[uri] = parse(text, uri)
  set.root = set.docs[uri]
  return setmetatable(set, { __index = M })
end

--- The document at absolute address `uri`, loaded on first use. A document read from a URL
--- reaches only URLs: a server's document may not make lunet read this machine's files.
function M:document(uri, where)
  local doc = self.docs[uri]
  if doc then return doc end
  if self.root_uri:match("^https?://") and not uri:match("^https?://") then
    M.fail(where, "a document read from %s may not $ref %s: only URLs", self.root_uri, uri)
  end
  local source = uri:gsub("^file://", "")
  local ok, text_or_err, abs = pcall(read, source, self.fetch)
  if not ok then M.fail(where, "its $ref's document %s cannot be read: %s", uri, errors.describe(text_or_err)) end
  doc = parse(text_or_err, abs)
  self.docs[uri] = doc
  return doc
end

--- Follows `$ref`s from `value` (found in document `uri` at `where`) to what they name, through
--- chains of them; returns the value and the address (uri, pointer) where it lives. A $ref that
--- names nothing, or a chain that comes back on itself, is an error naming where it was.
function M:deref(value, uri, where)
  local seen = {}
  while type(value) == "table" and type(value["$ref"]) == "string" do
    local ref = value["$ref"]
    local address, pointer = ref:match("^([^#]*)#?(.*)$")
    local target_uri = M.resolve_uri(uri, address)
    local key = target_uri .. "#" .. pointer
    if seen[key] then M.fail(where, "$ref %s comes back to itself", ref) end
    seen[key] = true
    local doc = self:document(target_uri, where)
    local found = M.at(doc, pointer)
    if found == nil then M.fail(where, "$ref %s names nothing (no %s in %s)", ref, pointer ~= "" and pointer or "/", target_uri) end
    value, uri, where = found, target_uri, target_uri .. "#" .. pointer
  end
  return value, uri, where
end

return M
