--- One call of an OpenAPI operation: its arguments (parameters by name, `body`) checked against
--- the operation's schemas and made into lunet.http's request options, and the response checked
--- against the schema of its status and media type. A problem found before sending is kind
--- `schema` with `path` (a JSON pointer: /parameters/limit, /body/price) and `rule`; nothing is
--- sent. A response that breaks its schema is kind `schema` with the response in `response`.
local json = require "lunet.json"
local url = require "lunet.url"
local errors = require "lunet.errors"

local M = {}

-- The first of a validator's errors as one kind `schema` error; `prefix` is where the value
-- sits in the call ("/parameters/limit", "/body").
local function schema_error(op, prefix, errs, fields)
  local e = errs[1] or {}
  local path = prefix .. (e.path or "")
  local message = string.format("%s: %s: %s", op.id, path, e.message or "does not match its schema")
  local f = { path = path, rule = e.rule, schema_path = e.schema_path, errors = errs, operation = op.id }
  for k, v in pairs(fields or {}) do f[k] = v end
  return errors.new("schema", message, f)
end

--- Checks `value` against the schema at `address` (compiled once per api); raises kind `schema`.
local function check(api, op, address, value, prefix, direction, fields)
  if not api.validate or not address then return end
  local v = api:validator(address, direction)
  local ok, errs = v:validate(value)
  if not ok then error(schema_error(op, prefix, errs, fields), 0) end
end

-- A value as it goes into a URL or a header: arrays and objects by `style` and `explode`.
local function text(v)
  if v == json.null then return "" end
  if type(v) == "number" and math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 2^53 then return string.format("%d", v) end
  return tostring(v)
end

local function keys_sorted(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

-- Path and header values (style simple, label, matrix): a string, percent-encoded for paths.
local function simple(p, v, encode)
  encode = encode or function(s) return s end
  if type(v) ~= "table" then
    local s = encode(text(v))
    if p.style == "label" then return "." .. s elseif p.style == "matrix" then return ";" .. p.name .. "=" .. s end
    return s
  end
  local parts = {}
  if json.is_array(v) or #v > 0 then
    for _, item in ipairs(v) do parts[#parts + 1] = encode(text(item)) end
  else
    for _, k in ipairs(keys_sorted(v)) do
      parts[#parts + 1] = p.explode and (encode(k) .. "=" .. encode(text(v[k]))) or (encode(k) .. "," .. encode(text(v[k])))
    end
  end
  local sep = p.style == "label" and (p.explode and "." or ",") or (p.style == "matrix" and p.explode and (";" .. p.name .. "=")) or ","
  local s = table.concat(parts, sep)
  if p.style == "label" then return "." .. s elseif p.style == "matrix" then return ";" .. p.name .. "=" .. s end
  return s
end

-- Query (and cookie) pairs for one parameter: form (exploded or not), space- and pipe-
-- delimited arrays, deepObject.
local function query_pairs(p, v, out)
  if type(v) ~= "table" then out[#out + 1] = { p.name, text(v) } return end
  local array = json.is_array(v) or #v > 0
  if array then
    local joiner = ({ spaceDelimited = " ", pipeDelimited = "|" })[p.style]
    if p.collection then joiner = ({ csv = ",", ssv = " ", tsv = "\t", pipes = "|" })[p.collection] end   -- Swagger 2.0
    if p.collection == "multi" or (not joiner and p.explode) then
      for _, item in ipairs(v) do out[#out + 1] = { p.name, text(item) } end
    else
      local parts = {}
      for _, item in ipairs(v) do parts[#parts + 1] = text(item) end
      out[#out + 1] = { p.name, table.concat(parts, joiner or ",") }
    end
    return
  end
  for _, k in ipairs(keys_sorted(v)) do
    if p.style == "deepObject" then out[#out + 1] = { p.name .. "[" .. k .. "]", text(v[k]) }
    elseif p.explode then out[#out + 1] = { k, text(v[k]) } end
  end
  if p.style ~= "deepObject" and not p.explode then
    local parts = {}
    for _, k in ipairs(keys_sorted(v)) do parts[#parts + 1] = k; parts[#parts + 1] = text(v[k]) end
    out[#out + 1] = { p.name, table.concat(parts, ",") }
  end
end

-- The body as lunet.http's options, by the media type the operation declares (JSON first).
local function body_options(api, op, body, opts)
  local content = op.body.content
  local media = opts.content_type
  if not media then
    for _, m in ipairs({ "application/json", "application/x-www-form-urlencoded", "multipart/form-data" }) do
      if content[m] then media = m break end
    end
    media = media or next(content)
  end
  local m = content[media]
  if not m then errors.raise("argument", string.format("%s takes a body as %s, not %s", op.id, table.concat(keys_sorted(content), ", "), media)) end
  check(api, op, m.schema or m.inline and api:inline_address(op, media), body, "/body", "request")
  if media == "application/json" or media:match("%+json$") then return { json = body, content_type = media } end
  if media == "application/x-www-form-urlencoded" then return { form = body } end
  if media == "multipart/form-data" then return { multipart = body } end
  if type(body) ~= "string" then errors.raise("argument", string.format("%s: a %s body is a string", op.id, media)) end
  return { body = body, content_type = media }
end

-- A path parameter's text that is only dots (".", ".."; an empty label's "."), percent-encoded: a
-- dot segment would take the URL up the path (users/../info is info), which it must not change.
local function no_dots(s)
  if s:match("^%.+$") then return (s:gsub("%.", "%%2E")) end
  return s
end
local function path_encode(s) return no_dots(url.encode(s)) end

--- lunet.http request options for operation `op` called with `args` (parameters by name,
--- `body`, and request options under `options`: headers, timeout, ...). Raises kind `schema`
--- (before anything is sent) or `argument` (a name that is no parameter).
function M.request(api, op, args)
  args = args or {}
  if type(args) ~= "table" then errors.raise("argument", op.id .. " takes a table of parameters") end
  local known = { body = true, options = true }
  local path, query, headers, cookies = op.path, {}, {}, {}
  for _, p in ipairs(op.parameters) do
    known[p.name] = true
    local v = args[p.name]
    local prefix = "/parameters/" .. p.name
    if v == nil then
      if p.required then error(schema_error(op, prefix, { { rule = "required", message = "the " .. p["in"] .. " parameter '" .. p.name .. "' is required" } }), 0) end
    else
      if p.has_schema then check(api, op, p.schema, v, prefix, "request") end
      if p["in"] == "path" then
        path = path:gsub("{" .. p.name:gsub("%p", "%%%0") .. "}", (no_dots(simple(p, v, path_encode)):gsub("%%", "%%%%")))
      elseif p["in"] == "query" then query_pairs(p, v, query)
      elseif p["in"] == "header" then headers[p.name] = simple(p, v)
      else query_pairs(p, v, cookies) end
    end
  end
  for k in pairs(args) do
    if not known[k] then
      errors.raise("argument", string.format("%s has no parameter '%s' (it takes: %s)", op.id, tostring(k), table.concat(keys_sorted(known), ", ")))
    end
  end
  local opts = {}
  for k, v in pairs(args.options or {}) do opts[k] = v end
  opts.method, opts.url = op.method, path:gsub("^/", "")
  if #query > 0 then opts.query = query end
  if next(headers) then
    opts.headers = opts.headers or {}
    for k, v in pairs(headers) do opts.headers[k] = v end
  end
  if #cookies > 0 then
    local parts = {}
    for _, c in ipairs(cookies) do parts[#parts + 1] = c[1] .. "=" .. url.encode(c[2]) end
    opts.headers = opts.headers or {}
    opts.headers.Cookie = table.concat(parts, "; ")
  end
  if op.body then
    if args.body == nil then
      if op.body.required then error(schema_error(op, "/body", { { rule = "required", message = "the request body is required" } }), 0) end
    else
      for k, v in pairs(body_options(api, op, args.body, opts)) do opts[k] = v end
    end
  elseif args.body ~= nil then
    errors.raise("argument", op.id .. " takes no request body")
  end
  return opts
end

-- The declared response for `status`: the exact code, then its class (2XX), then default.
local function declared(op, status)
  local s = tostring(status)
  return op.responses[s] or op.responses[s:sub(1, 1) .. "XX"] or op.responses[s:sub(1, 1) .. "xx"] or op.responses.default
end

--- Checks response `r` of `op`: its status is declared (else r.undeclared is set and the api
--- says so once), its body matches the schema of its status and media type (else kind
--- `schema` is raised, with the response).
function M.check_response(api, op, r)
  local d = declared(op, r.status)
  if not d then
    r.undeclared = true
    api:note(string.format("%s answered %d, which the document does not declare", op.id, r.status))
    return r
  end
  local ct = (r.headers["content-type"] or ""):match("^([^;%s]+)")
  local m = ct and (d.content[ct:lower()] or d.content[(ct:match("^(%w+)/") or "") .. "/*"] or d.content["*/*"])
  if not (m and m.schema) or not api.validate then return r end
  if ct:lower():match("json") then
    local ok, body = pcall(function() return r.json end)
    if not ok then error(errors.new("schema", string.format("%s: the %d response is not JSON: %s", op.id, r.status, errors.describe(body)), { response = r, path = "", operation = op.id }), 0) end
    check(api, op, m.schema, body, "", "response", { response = r })
  end
  return r
end

return M
