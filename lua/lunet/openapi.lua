--- `http.openapi(source, opts)`: an API from its OpenAPI document (docs/openapi.md). Its
--- operations become functions named by operationId (`api.getItem{ item_id = 1 }`), their
--- arguments and their responses checked against the document's schemas; the session options
--- of http.session (auth, headers, cache, retry, timeouts) apply to every call.
local errors = require "lunet.errors"
local document = require "lunet.openapi.document"
local operations = require "lunet.openapi.operations"
local call = require "lunet.openapi.call"
local security = require "lunet.openapi.security"
local origin = require("lunet.url").origin

local M = {}

local Api = {}
local Operation = {}

-- Options that are the api's own; everything else goes to http.session.
local OWN = { server = true, server_variables = true, validate = true, security = true, fetch = true }

--- The base URL: opts.base_url, else the chosen server (`server` = its index from 1, or its
--- URL, or its description) with its variables filled, resolved against where the document
--- came from; Swagger 2.0's schemes, host and basePath; else the document's own origin.
local function base_url(set, version, opts)
  if opts.base_url then return opts.base_url end
  local root, origin = set.root, set.root_uri
  local from_doc = origin:match("^https?://") and origin or nil
  if version == "2.0" then
    local scheme = (root.schemes or {})[1] or (from_doc and from_doc:match("^(%a+):")) or "http"
    local host = root.host or (from_doc and from_doc:match("^%a+://([^/]+)"))
    if not host then document.fail(origin .. "#/host", "no host, and the document was not read from a URL: give base_url") end
    local base = root.basePath or "/"
    if base:sub(-1) ~= "/" then base = base .. "/" end
    return scheme .. "://" .. host .. base
  end
  local servers = root.servers or {}
  local chosen = servers[1]
  if opts.server ~= nil then
    chosen = nil
    for i, s in ipairs(servers) do
      if opts.server == i or opts.server == s.url or opts.server == s.description then chosen = s end
    end
    if not chosen then errors.raise("argument", "no server '" .. tostring(opts.server) .. "' in the document (servers: " .. #servers .. ")") end
  end
  if not chosen then
    if not from_doc then document.fail(origin .. "#/servers", "no servers, and the document was not read from a URL: give base_url") end
    return from_doc:match("^(%a+://[^/]+)") .. "/"
  end
  local vars = opts.server_variables or {}
  local u = chosen.url:gsub("{([^}]+)}", function(name)
    local v = vars[name] or (chosen.variables and chosen.variables[name] and chosen.variables[name].default)
    if v == nil then document.fail(origin .. "#/servers", "server variable '%s' has no value: give server_variables", name) end
    return tostring(v)
  end)
  if not u:match("^%a[%w+.-]*://") then
    if not from_doc then document.fail(origin .. "#/servers", "server URL '%s' is relative, and the document was not read from a URL: give base_url", u) end
    u = document.resolve_uri(from_doc, u)
  end
  if u:sub(-1) ~= "/" then u = u .. "/" end
  return u
end

-- Whether the session options carry a credential: auth, security, a credential's header.
local function carries_credentials(opts)
  if opts.auth ~= nil or (type(opts.security) == "table" and next(opts.security) ~= nil) then return true end
  local secrets = require "lunet.secrets"
  for k, v in pairs(type(opts.headers) == "table" and opts.headers or {}) do
    local name = type(k) == "string" and k or (type(v) == "table" and v[1])
    if type(name) == "string" and (secrets.is_secret_name(name) or name:lower() == "cookie") then return true end
  end
  return false
end

-- A document read from one host that names another as its server does not get the session's
-- credentials sent there (a redirect to another origin drops them too): the user names that
-- host (base_url, or server = its URL) to send them.
local function check_server_host(set, opts, base)
  if opts.base_url or (type(opts.server) == "string" and opts.server:match("://")) then return end
  local from = set.root_uri:match("^https?://") and origin(set.root_uri)
  local to = origin(base)
  if not from or to == from or not carries_credentials(opts) then return end
  local mask_url = require("lunet.secrets").mask_url
  errors.raise("openapi", string.format("the document from %s names its server %s, another host: the session's credentials " ..
    "go only to a host you name: give base_url = %q (or server = its URL) to send them there", from, mask_url(to), mask_url(base)))
end

--- Loads the document at `source` (a path or a URL; JSON or YAML) and makes the api.
function M.open(source, opts)
  opts = opts or {}
  if type(source) ~= "string" then errors.raise("argument", "http.openapi takes the document's path or URL") end
  local set = document.load(source, { fetch = opts.fetch, timeout = opts.timeout })
  local version = operations.version(set.root, set.root_uri)
  local list, by_id = operations.list(set, version)
  local session_opts = {}
  for k, v in pairs(opts) do if not OWN[k] then session_opts[k] = v end end
  session_opts.base_url = base_url(set, version, opts)
  check_server_host(set, opts, session_opts.base_url)
  local api = setmetatable({
    _set = set, _version = version, _list = list, _by_id = by_id, _validators = {}, _notes = {},
    _session = require("lunet.http").session(session_opts), validate = opts.validate ~= false,
    _security = security.new(set, version, opts.security or {}),
    dialect = version == "3.1" and "openapi-3.1" or "openapi-3.0",
  }, Api)
  for _, op in ipairs(list) do op.api = api; setmetatable(op, Operation) end
  return api
end

Api.__index = function(self, k)
  local m = Api[k]
  if m ~= nil then return m end
  local op = rawget(self, "_by_id")[k]
  if op then return op end
  if type(k) == "string" and not k:match("^_") then
    local near = require("lunet.suggest").closest(k, self:operation_ids())
    errors.raise("argument", string.format("no operation '%s' in the document%s", k, near and ("; did you mean '" .. near .. "'?") or ""))
  end
end

-- The prompt completes `api.` with the operations (lunet.repl) ...
-- (`api.getPet{...}`: fields, so nothing after ':').
function Api:__complete(sep) return sep == ":" and {} or self:operation_ids() end

function Api:__tostring()
  return string.format("openapi: %s (OpenAPI %s), %d operations, %s", self._set.root_uri, self._version, #self._list, self._session.base_url or "")
end

--- Every operation: { id, method, path, summary } in the document's order.
function Api:operations()
  local out = {}
  for _, op in ipairs(self._list) do out[#out + 1] = { id = op.id, method = op.method, path = op.path, summary = op.summary } end
  return out
end

function Api:operation_ids()
  local ids = {}
  for _, op in ipairs(self._list) do ids[#ids + 1] = op.id end
  return ids
end

--- The api's session (lunet.http's), for what the document does not describe.
function Api:session() return self._session end

--- A compiled validator for the schema at `address` (absolute URI # JSON pointer) or an inline
--- schema table; compiled once.
function Api:validator(address, direction)
  local key = (type(address) == "table" and tostring(address) or address) .. "\0" .. (direction or "")
  local v = self._validators[key]
  if v then return v end
  local set = self._set
  local s = type(address) == "table" and address or { ["$ref"] = address }
  local ok, compiled = pcall(require("lunet.schema").compile, s, {
    dialect = self.dialect, direction = direction, base_uri = set.root_uri,
    load = function(uri) return set:document(uri, address) end,
  })
  if not ok then document.fail(type(address) == "string" and address or set.root_uri, "its schema does not compile: %s", errors.describe(compiled)) end
  self._validators[key] = compiled
  return compiled
end

--- The schema at `address` as a table, $refs at its top followed (its type, its items).
function Api:schema_at(address)
  local set = self._set
  local uri, pointer = address:match("^([^#]*)#(.*)$")
  local s = document.at(set:document(uri, address), pointer)
  return set:deref(s, uri, address) or {}
end

function Api:inline_address(op, media) return op.body.content[media].inline end

--- Says `message` once on standard error (an undeclared status, ...), and keeps it in notes().
function Api:note(message)
  if self._notes[message] then return end
  self._notes[message] = true
  self._notes[#self._notes + 1] = message
  io.stderr:write("openapi: ", message, "\n")
end

function Api:notes() return { table.unpack(self._notes) } end

--- Property-based checks of the server against the document (lunet.openapi.check): a report.
function Api:check(opts) return require("lunet.openapi.check").run(self, opts) end

-- Operations -------------------------------------------------------------------------------------

Operation.__index = Operation

--- Calls the operation: `args` holds its parameters by name, `body`, and `options` (request
--- options of lunet.http). Returns the response, checked against the document.
function Operation:__call(args)
  local api = self.api
  local opts = call.request(api, self, args)
  local session = api._security:apply(self, opts, api._session)
  local r = session:request(opts)
  return call.check_response(api, self, r)
end

--- The same as a task.
function Operation:async(args)
  return require("lunet.task").spawn(function() return self(args) end)
end

--- What the operation takes and answers, as text (help(api.getItem) prints it).
function Operation:help_text() return require("lunet.openapi.describe").operation(self) end

-- ... and `api.getItem{ ` with its parameters.
function Operation:__complete_args()
  local names = {}
  for _, p in ipairs(self.parameters) do names[#names + 1] = p.name end
  if self.body then names[#names + 1] = "body" end
  names[#names + 1] = "options"
  return names
end

function Operation:__tostring() return "operation " .. self.id .. ": " .. self.method .. " " .. self.path end

return M
