--- `lunet import postman COLLECTION.json [--environment ENV.json]`: a Postman collection (format
--- v2.0 or v2.1) as a model lunet.import.postman_render writes as a `lunet test` file: folders
--- as groups, the collection's and the environment's variables, auth as session auth, bodies of
--- every mode, and the JavaScript scripts counted, kept as comments, and translated where the
--- meaning is certain (lunet.import.postman_scripts). Pure: texts in, a model out. A value that
--- is a credential (an auth field written out, a secret variable) becomes an environment
--- variable the output reads, never a literal. Bad input raises { import = message } with its
--- place (line and column, or a JSON pointer).
local secrets = require "lunet.secrets"
local scripts = require "lunet.import.postman_scripts"

local M = {}

local function fail(fmt, ...) error({ import = string.format(fmt, ...) }, 0) end
local function check(cond, pointer, what) if not cond then fail("not a Postman collection: %s at %s", what, pointer) end end

local function decode(text, what)
  local ok, doc = pcall(require("lunet.json").decode, text)
  if not ok then fail("%s is not JSON: %s", what, (tostring(type(doc) == "table" and doc.message or doc):gsub("^.-JSON: ", ""))) end
  return doc
end

-- An environment variable's name for a credential: LUNET_PM_<WHAT>.
local function env_name(what) return "LUNET_PM_" .. what:upper():gsub("[^%w]", "_") end

-- Postman's key/value lists (v2.1: { { key, value, disabled }, ... }; v2.0 auth: a map) as a map.
local function params(t)
  if type(t) ~= "table" then return {} end
  if #t == 0 then return t end
  local out = {}
  for _, p in ipairs(t) do if type(p) == "table" and p.key ~= nil and not p.disabled then out[tostring(p.key)] = p.value end end
  return out
end

-- A text as the output writes it: a string (which may hold {{variables}}) or a credential
-- ({ env = NAME }) when `secret` and it is written out rather than a {{variable}}.
local function value(v, secret_as, model)
  if v == nil then return nil end
  v = type(v) == "string" and v or tostring(v)
  if secret_as and v ~= "" and not v:match("^{{[^{}]+}}$") then
    local var = env_name(secret_as)
    model.credentials[var] = model.credentials[var] or secret_as
    return { env = var }
  end
  return v
end

--- Postman's auth object as lunet's session auth (its values texts or { env }): nil for none,
--- false for "noauth" (which overrides what a folder gives), and a note for a kind lunet lacks.
function M.auth(a, model, where)
  if type(a) ~= "table" or a.type == nil then return nil end
  local t = a.type
  local p = params(a[t])
  if t == "noauth" then return false end
  if t == "basic" or t == "digest" then return { [t] = { value(p.username, nil, model) or "", value(p.password, t .. "_password", model) or "" } } end
  if t == "bearer" then return { bearer = value(p.token, "bearer_token", model) } end
  if t == "apikey" then
    local key = value(p.value, "api_key", model)
    if p["in"] == "query" then return { api_key = { query = p.key or "api_key", value = key } } end
    return { api_key = { header = p.key or "X-Api-Key", value = key } }
  end
  if t == "oauth2" then
    if p.grant_type == "client_credentials" or p.grantType == "client_credentials" then
      return { oauth2 = { token_url = value(p.accessTokenUrl), client_id = value(p.clientId),
        client_secret = value(p.clientSecret, "oauth2_client_secret", model), scope = p.scope ~= "" and value(p.scope) or nil,
        client_auth = p.client_authentication == "body" and "body" or "basic" } }
    end
    if p.accessToken then return { bearer = value(p.accessToken, "oauth2_access_token", model) } end
    model.notes[#model.notes + 1] = where .. ": OAuth 2.0 with the grant '" .. tostring(p.grant_type) .. "' is not imported (client credentials and a token are)"
    return nil
  end
  if t == "awsv4" then
    return { aws_sigv4 = { provider = "aws:amz:" .. (p.region or "us-east-1") .. ":" .. (p.service or "execute-api"),
      key = value(p.accessKey), secret = value(p.secretKey, "aws_secret_key", model),
      token = p.sessionToken and value(p.sessionToken, "aws_session_token", model) or nil } }
  end
  if t == "ntlm" then return { ntlm = { value(p.username) or "", value(p.password, "ntlm_password", model) or "" } } end
  model.notes[#model.notes + 1] = where .. ": auth '" .. t .. "' is not imported"
  return nil
end

-- The path variables of a URL object (`:id` in its path; v2.1 names them key, v2.0 id) put in.
local function path_variables(text, u)
  if type(u.variable) ~= "table" then return text end
  local path, rest = text:match("^([^?#]*)(.*)$")
  for _, var in ipairs(u.variable) do
    local name = type(var) == "table" and (var.key or var.id)
    if type(name) == "string" and name:match("^[%w_]+$") and var.value ~= nil then
      path = path:gsub(":" .. name .. "%f[^%w_]", (tostring(var.value):gsub("%%", "%%%%")))
    end
  end
  return path .. rest
end

-- A URL: v2.0's string, or v2.1's object (its raw, or its parts when a query item is disabled),
-- with its path variables put in.
local function url_of(u, at)
  if type(u) == "string" then return u end
  check(type(u) == "table", at, "no url")
  local disabled = false
  for _, q in ipairs(type(u.query) == "table" and u.query or {}) do if q.disabled then disabled = true end end
  if type(u.raw) == "string" and not disabled then return path_variables(u.raw, u) end
  local host = type(u.host) == "table" and table.concat(u.host, ".") or tostring(u.host or "")
  local path = type(u.path) == "table" and table.concat(u.path, "/") or tostring(u.path or "")
  local text = ((u.protocol or "") ~= "" and (u.protocol .. "://") or "") .. host .. (u.port and (":" .. u.port) or "") .. (path ~= "" and ("/" .. path:gsub("^/", "")) or "")
  local query = {}
  for _, q in ipairs(type(u.query) == "table" and u.query or {}) do
    if not q.disabled then query[#query + 1] = tostring(q.key) .. (q.value ~= nil and ("=" .. tostring(q.value)) or "") end
  end
  return path_variables(text .. (#query > 0 and ("?" .. table.concat(query, "&")) or ""), u)
end

local LANGUAGE_TYPES = { json = "application/json", xml = "application/xml", text = "text/plain", html = "text/html",
                         javascript = "application/javascript" }

-- The body of a request: { mode, ... } as the renderer needs it.
local function body_of(b, at, model, where)
  if type(b) ~= "table" or b.mode == nil or b.disabled then return nil end
  local mode = b.mode
  if mode == "raw" then
    if (b.raw or "") == "" then return nil end
    local lang = type(b.options) == "table" and type(b.options.raw) == "table" and b.options.raw.language or nil
    return { mode = "raw", text = tostring(b.raw), content_type = LANGUAGE_TYPES[lang or ""] }
  elseif mode == "urlencoded" then
    local fields = {}
    for _, f in ipairs(type(b.urlencoded) == "table" and b.urlencoded or {}) do
      if not f.disabled then fields[#fields + 1] = { tostring(f.key), tostring(f.value or "") } end
    end
    return { mode = "urlencoded", fields = fields }
  elseif mode == "formdata" then
    local parts = {}
    for i, f in ipairs(type(b.formdata) == "table" and b.formdata or {}) do
      if not f.disabled then
        if f.type == "file" then
          local src = type(f.src) == "table" and f.src[1] or f.src
          check(type(src) == "string", at .. "/body/formdata/" .. (i - 1) .. "/src", "a file part without a file")
          parts[#parts + 1] = { name = tostring(f.key), file = src, content_type = f.contentType }
        else
          parts[#parts + 1] = { name = tostring(f.key), data = tostring(f.value or ""), content_type = f.contentType }
        end
      end
    end
    return { mode = "formdata", parts = parts }
  elseif mode == "file" then
    local src = type(b.file) == "table" and b.file.src
    if type(src) ~= "string" then model.notes[#model.notes + 1] = where .. ": a file body without a file; sent empty" return nil end
    return { mode = "file", src = src }
  elseif mode == "graphql" then
    local g = type(b.graphql) == "table" and b.graphql or {}
    return { mode = "graphql", query = tostring(g.query or ""), variables = type(g.variables) == "string" and g.variables ~= "" and g.variables or nil }
  end
  model.notes[#model.notes + 1] = where .. ": a body of mode '" .. tostring(mode) .. "' is not imported"
  return nil
end

-- The scripts of an item or folder: { prerequest = text, test = text }.
local function events_of(events)
  local out = {}
  for _, e in ipairs(type(events) == "table" and events or {}) do
    local s = type(e) == "table" and type(e.script) == "table" and e.script.exec
    local text = type(s) == "table" and table.concat(s, "\n") or (type(s) == "string" and s) or nil
    -- (a script may also be a name of a shared one: a string, kept out; two of one kind join)
    if text and text:find("%S") and (e.listen == "prerequest" or e.listen == "test") then
      out[e.listen] = out[e.listen] and (out[e.listen] .. "\n" .. text) or text
    end
  end
  return out
end

-- An item (a request or a folder) at JSON pointer `at`, with the auth it inherits.
local function item_of(it, at, model, inherited)
  check(type(it) == "table", at, "an item that is not an object")
  local name = tostring(it.name or it.id or "(unnamed)")
  local auth = M.auth(it.auth, model, name)
  if auth == nil then auth = inherited end
  local events = events_of(it.event)
  if type(it.item) == "table" then
    local folder = { folder = true, name = name, items = {}, scripts = events }
    for _, kind in ipairs({ "prerequest", "test" }) do
      if events[kind] then model.scripts.count = model.scripts.count + 1 end
    end
    for i, child in ipairs(it.item) do folder.items[i] = item_of(child, at .. "/item/" .. (i - 1), model, auth) end
    return folder
  end
  local rq = it.request
  if type(rq) == "string" then rq = { method = "GET", url = rq } end
  check(type(rq) == "table", at .. "/request", "an item that is neither a folder nor a request")
  local method = type(rq.method) == "string" and rq.method:upper() or "GET"
  check(method:match("^%u+$"), at .. "/request/method", "a method that is not a word")
  model.requests = model.requests + 1
  local req = { name = name, method = method, url = url_of(rq.url, at .. "/request/url"), headers = {},
                auth = auth, body = nil, scripts = events, expects = {} }
  -- A user and password written in the URL: the password would be in the output; they become
  -- the request's basic auth, the password read from the environment.
  local scheme, user, password, rest = req.url:match("^(%a[%w+.-]*://)([^:@/?#]*):([^@/?#]*)@(.*)$")
  if scheme then
    req.url = scheme .. rest
    req.basic_from_url = { basic = { user, value(password, "url_password", model) } }
  end
  local rq_auth = M.auth(rq.auth, model, name)
  if rq_auth ~= nil then req.auth = rq_auth elseif req.basic_from_url then req.auth = req.basic_from_url end
  local headers = rq.header
  if type(headers) == "string" then   -- v2.0 allows "Name: value\nName: value"
    local list = {}
    for line in headers:gmatch("[^\r\n]+") do
      local k, v = line:match("^%s*([^:]+):%s*(.*)$")
      if k then list[#list + 1] = { key = k, value = v } end
    end
    headers = list
  end
  for j, hd in ipairs(type(headers) == "table" and headers or {}) do
    check(type(hd) == "table" and hd.key ~= nil, at .. "/request/header/" .. (j - 1), "a header without a key")
    if not hd.disabled then
      local v = tostring(hd.value or "")
      if secrets.is_secret_name(tostring(hd.key)) or tostring(hd.key):lower() == "cookie" then v = value(v, "header_" .. tostring(hd.key), model) end
      req.headers[#req.headers + 1] = { tostring(hd.key), v }
    end
  end
  req.body = body_of(rq.body, at .. "/request", model, name)
  for _, kind in ipairs({ "prerequest", "test" }) do
    if events[kind] then
      model.scripts.count = model.scripts.count + 1
      if kind == "test" then
        req.expects = scripts.translate(events.test)
        model.scripts.translated = model.scripts.translated + #req.expects
      end
    end
  end
  return req
end

--- The model of a collection's text (and an environment's, or nil): { name, format, variables =
--- { { key, value } } (value a text or { env }), credentials = { [VAR] = what }, items, scripts =
--- { count, translated }, notes }.
function M.read(text, env_text)
  local doc = decode(text, "the collection")
  check(type(doc) == "table" and type(doc.info) == "table", "/info", "no info object")
  -- info.schema names the format (".../collection/v2.1.0/collection.json"); early v2 files name it
  -- in info._postman_schema (".../#2.0.0").
  local schema = tostring(doc.info.schema or doc.info._postman_schema or "")
  local format = schema:match("/v(2%.[01])%.%d+/") or schema:match("v(2%.[01])") or schema:match("#(2%.[01])%.%d+")
    or (schema:match("/v2/") and "2.0")   -- (".../collection/v2/collection.json": the first v2 files)
  check(format, "/info/schema", "not collection format v2.0 or v2.1 (" .. (schema ~= "" and schema or "no schema") .. ")")
  check(type(doc.item) == "table", "/item", "no item array")
  local model = { name = tostring(doc.info.name or "collection"), format = "v" .. format, variables = {}, credentials = {},
                  items = {}, scripts = { count = 0, translated = 0 }, notes = {}, requests = 0 }
  local seen = {}
  local function variable(key, v, secret)
    key = tostring(key)
    if v == nil or v == require("lunet.json").null then v = "" end   -- (JSON's null: an empty value)
    local entry = { key = key, value = tostring(v) }
    if secret or secrets.is_secret_name(key) then
      local var = env_name(key)
      model.credentials[var] = "the variable " .. key
      entry.value = { env = var }
    end
    if seen[key] then model.variables[seen[key]] = entry
    else model.variables[#model.variables + 1] = entry; seen[key] = #model.variables end
  end
  for i, v in ipairs(type(doc.variable) == "table" and doc.variable or {}) do
    -- (v2.0 names a variable by key or by id)
    check(type(v) == "table" and (v.key or v.id) ~= nil, "/variable/" .. (i - 1), "a variable without a key")
    if not v.disabled then variable(v.key or v.id, v.value, v.type == "secret") end
  end
  if env_text then
    local env = decode(env_text, "the environment")
    check(type(env) == "table" and type(env.values) == "table", "/values (the environment)", "no values array")
    for i, v in ipairs(env.values) do
      check(type(v) == "table" and v.key ~= nil, "/values/" .. (i - 1) .. " (the environment)", "a value without a key")
      if v.enabled ~= false then variable(v.key, v.value, v.type == "secret") end
    end
  end
  local auth = M.auth(doc.auth, model, "the collection")
  model.scripts_top = events_of(doc.event)
  for _, kind in ipairs({ "prerequest", "test" }) do if model.scripts_top[kind] then model.scripts.count = model.scripts.count + 1 end end
  for i, it in ipairs(doc.item) do model.items[i] = item_of(it, "/item/" .. (i - 1), model, auth or nil) end
  return model
end

return M
